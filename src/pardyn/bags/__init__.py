"""rosbag2 bags (MCAP or sqlite3) written and read with ``rosbags``, without rclpy.

* :mod:`pardyn.bags.writer`: :class:`BagWriter` (typestore messages or serialized
  CDR bytes, small flushed MCAP chunks so a killed writer loses at most its
  pending chunk, see :class:`FlushPolicy`), :func:`write_joint_states` (a whole
  JointState time series from arrays).
* :mod:`pardyn.bags.reader`: :func:`read_joint_states` (arrays and validation),
  :func:`read_messages`, :func:`bag_status`, :func:`repair_bag` (rebuild a bag
  whose recorder was killed from its complete chunks), the reusable checks.

The ROS 2 node that records bags is :mod:`pardyn.nodes.recorder`.
"""

from pardyn.bags.reader import (
    JOINT_STATE_TYPE,
    BagMessage,
    BagStatus,
    JointStateSeries,
    McapScan,
    RepairReport,
    bag_status,
    check_finite,
    check_joint_names,
    check_lengths,
    check_message_count,
    check_stamps,
    read_joint_states,
    read_messages,
    repair_bag,
    resolve_topic,
    scan_mcap,
)
from pardyn.bags.writer import (
    BAG_VERSION,
    DISTROS,
    BagError,
    BagIncompleteError,
    BagWriter,
    FlushPolicy,
    available_bag_path,
    deserialize_cdr,
    format_time,
    joint_state_message,
    normalize_msgtype,
    stamp_ns_from_cdr,
    typestore_for,
    write_joint_states,
)

__all__ = [
    "BAG_VERSION",
    "DISTROS",
    "JOINT_STATE_TYPE",
    "BagError",
    "BagIncompleteError",
    "BagMessage",
    "BagStatus",
    "BagWriter",
    "FlushPolicy",
    "JointStateSeries",
    "McapScan",
    "RepairReport",
    "available_bag_path",
    "bag_status",
    "check_finite",
    "check_joint_names",
    "check_lengths",
    "check_message_count",
    "check_stamps",
    "deserialize_cdr",
    "format_time",
    "joint_state_message",
    "normalize_msgtype",
    "read_joint_states",
    "read_messages",
    "repair_bag",
    "resolve_topic",
    "scan_mcap",
    "stamp_ns_from_cdr",
    "typestore_for",
    "write_joint_states",
]
