"""The robot as a 3D scene: body shapes, the closing links and the platform at a configuration.

:mod:`pardyn.scene.geometry` computes what is drawn (pure numpy and pinocchio); :mod:`pardyn.scene.messages`
turns it into ROS messages (``visualization_msgs/MarkerArray``, ``tf2_msgs/TFMessage``, serialized with the
``rosbags`` typestore: the ``visualizer`` node publishes them, the recorder writes them into bags);
:mod:`pardyn.scene.track` derives them from recorded joint states. Nothing here imports rclpy.
"""

from pardyn.scene.geometry import BodyShape, RobotScene, SceneFrame

__all__ = ["BodyShape", "RobotScene", "SceneFrame"]
