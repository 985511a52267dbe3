"""ROS 2 nodes: thin rclpy adapters over the pure core.

Each module here turns ROS messages into calls on :class:`pardyn.Robot` (and
the other core objects) and their answers back into messages; the kinematics,
dynamics and control themselves live in the core, which never imports rclpy.
Every node module has a ``main(args=None)`` entry point declared as a console
script in ``setup.py`` (``ros2 run pardyn <node>``) and can also be run as
``python -m pardyn.nodes.<node>``.

* :mod:`pardyn.nodes.closure_solver`: every joint and the platform pose from
  the measured joints (``joint_states`` -> ``closed_loop/joint_states``,
  ``platform/pose``).
"""

__all__: list[str] = []
