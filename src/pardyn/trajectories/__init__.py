"""Reference trajectories (pure core, no rclpy).

* :mod:`pardyn.trajectories.task`: task-space trajectories evaluated at many
  instants at once (:class:`PointToPoint` with the 5th-degree time law,
  :class:`Trapezoidal` with the trapezoidal velocity profile,
  :class:`Circle`);
* :mod:`pardyn.trajectories.joint`: their image in joint space through the
  closed-loop inverse kinematics (:func:`joint_trajectory`) and the quintic
  Hermite interpolation of sampled joint references (:class:`SampledReference`).
"""

from pardyn.trajectories.joint import JointSamples, SampledReference, joint_trajectory
from pardyn.trajectories.task import (
    Circle,
    PointToPoint,
    TaskSamples,
    TaskTrajectory,
    Trapezoidal,
    quintic_time_law,
)

__all__ = [
    "Circle",
    "JointSamples",
    "PointToPoint",
    "SampledReference",
    "TaskSamples",
    "TaskTrajectory",
    "Trapezoidal",
    "joint_trajectory",
    "quintic_time_law",
]
