"""rosbag2 bags (MCAP or sqlite3) written and read with ``rosbags``, without rclpy.

One module per job:

* :mod:`~pardyn.bags.errors`: :class:`BagError` (names bag, topic and time), :class:`BagIncompleteError`.
* :mod:`~pardyn.bags.cdr`: CDR encoding, typestores of the ROS 2 distributions, stamps.
* :mod:`~pardyn.bags.mcap_chunks`: the MCAP chunk writer (small, checksummed, flushed chunks,
  :class:`FlushPolicy`), and why it is kept beside the ``mcap`` package.
* :mod:`~pardyn.bags.metadata`: ``metadata.yaml`` (provisional while recording).
* :mod:`~pardyn.bags.writer`: :class:`BagWriter` (typestore messages or CDR bytes; crash guarantee).
* :mod:`~pardyn.bags.status`, :mod:`~pardyn.bags.reader`: whether a bag was closed; messages of a topic.
* :mod:`~pardyn.bags.repair`: :func:`repair_bag` rebuilds a bag whose writer was killed.
* :mod:`~pardyn.bags.gaps`: the messages lost before a bag, found from a periodic topic's stamps.
* :mod:`~pardyn.bags.checks`, :mod:`~pardyn.bags.joint_states`: JointState series as arrays and
  their validation (:func:`read_joint_states`, :func:`write_joint_states`).

The ROS 2 node that records bags is :mod:`pardyn.nodes.recorder`.
"""

from pardyn.bags.errors import BagError, BagIncompleteError
from pardyn.bags.joint_states import JointStateSeries, read_joint_states, write_joint_states
from pardyn.bags.mcap_chunks import FlushPolicy
from pardyn.bags.reader import read_messages
from pardyn.bags.repair import repair_bag
from pardyn.bags.status import bag_status
from pardyn.bags.writer import BagWriter

__all__ = [
    "BagError",
    "BagIncompleteError",
    "BagWriter",
    "FlushPolicy",
    "JointStateSeries",
    "bag_status",
    "read_joint_states",
    "read_messages",
    "repair_bag",
    "write_joint_states",
]
