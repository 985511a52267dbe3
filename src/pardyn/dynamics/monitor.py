"""The closed-loop dynamic model evaluated on a stream of states and references (the ``dynamics`` node's job).

* :meth:`DynamicsMonitor.model_effort`: the actuator torques the model predicts
  for the robot's motion, ``tau = IDM(q, qdot, qddot)``
  (:class:`pardyn.dynamics.inverse.InverseDynamics`: eq. 19, the minimum-norm
  torques of eq. 26 with no internal stress on a redundant robot), the task
  acceleration being the filtered backward difference of the task velocity
  (first-order low-pass at ``acceleration_cutoff_hz``);
* :meth:`DynamicsMonitor.feedforward`: the torques of an actuated-joint
  reference, closed by the forward problem and eqs. (21), (24), then the IDM.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.control import JointReference
    from pardyn.dynamics.inverse import InverseDynamics
    from pardyn.robot import Robot

__all__ = ["DynamicsMonitor"]


class DynamicsMonitor:
    """Model torques of a live closed-loop state and feedforward torques of a reference.

    Args:
        robot: the robot.
        dynamics: its inverse dynamic model (nominal or identified parameters).
        acceleration_cutoff_hz: low-pass of the task-acceleration estimate (Hz).
    """

    def __init__(self, robot: Robot, dynamics: InverseDynamics, *, acceleration_cutoff_hz: float) -> None:
        if not acceleration_cutoff_hz > 0.0:
            raise InputError(f"acceleration_cutoff must be positive (Hz), got {acceleration_cutoff_hz}")
        self.robot = robot
        self.dynamics = dynamics
        self.cutoff_hz = acceleration_cutoff_hz
        self._previous: tuple[int, np.ndarray] | None = None  # (stamp ns, task velocity)
        self._task_acceleration = np.zeros(len(robot.task_names))
        self._reference_q = robot.home.copy()

    def model_effort(self, stamp_ns: int, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """Model torques (n_a,) of the closed state ``q``, ``qdot`` (nv,) at ``stamp_ns``."""
        task_velocity = qdot[self.robot.task_indices]
        if self._previous is not None and stamp_ns > self._previous[0]:
            dt = (stamp_ns - self._previous[0]) * 1e-9
            smoothing = math.exp(-2 * math.pi * self.cutoff_hz * dt)
            difference = (task_velocity - self._previous[1]) / dt
            self._task_acceleration = smoothing * self._task_acceleration + (1 - smoothing) * difference
        self._previous = (stamp_ns, task_velocity.copy())
        return self.dynamics.torques_from_task(q, task_velocity, self._task_acceleration)

    def feedforward(self, reference: JointReference) -> np.ndarray:
        """Torques (n_a,) of the actuated-joint reference: closed by eqs. (21), (24), then the IDM."""
        robot = self.robot
        self._reference_q = robot.solve_forward(reference.position, start=self._reference_q).q
        qdot, qddot = robot.differential.states_from(
            self._reference_q, robot.actuated_indices, reference.velocity, reference.acceleration
        )
        return self.dynamics.torques(self._reference_q, qdot, qddot)
