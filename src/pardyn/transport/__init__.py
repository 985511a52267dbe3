"""Transport: how the nodes talk, without ROS (the nodes' protocols as plain classes; never imports rclpy).

* :mod:`pardyn.transport.lockstep`: the sim/controller lockstep protocol (tags, duplicates, re-sends,
  watchdogs, stalls);
* :mod:`pardyn.transport.sources`: which publishers may command the sim (publisher identities by gid);
* :mod:`pardyn.transport.start_gate`: when the sim publishes its first state (the nodes it waits for are up).

The rclpy adapters in :mod:`pardyn.nodes` hand these classes what arrived and the time; control itself
(laws, the control step) is :mod:`pardyn.control`.
"""

__all__: list[str] = []
