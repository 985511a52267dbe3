"""Plants: the robot that simulations, identification runs and controller tests run against.

A plant advances the physics under actuator torques and reports the *true*
state of the whole tree; what a real robot would publish (quantized encoders
of the measured joints, noisy torques) is the job of
:class:`pardyn.plants.measurement.MeasurementModel`.

Implementations:

* :class:`pardyn.plants.mujoco_plant.MujocoPlant`: MuJoCo, an independent
  physics engine (loops closed by stiff equality constraints) -- "the real
  robot" of the tests, so that a passing result is not the model agreeing
  with itself;
* :class:`pardyn.plants.pinocchio_plant.PinocchioPlant`: pardyn's own
  constrained forward dynamics (:mod:`pardyn.dynamics.forward`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

__all__ = ["Plant", "PlantState"]


@dataclass(frozen=True)
class PlantState:
    """True state of the tree at ``time``.

    Attributes:
        time: simulated time (s).
        q: joint positions of every tree coordinate, robot.joint_names order (nv,), rad or m.
        qdot: joint velocities (nv,).
        tau: actuator torques applied over the last step, robot.actuated_names order (n_a,), N m or N.
    """

    time: float
    q: np.ndarray
    qdot: np.ndarray
    tau: np.ndarray


class Plant(ABC):
    """Interface of a simulated robot.

    A plant belongs to one :class:`pardyn.Robot` (``self.robot``); torques are
    in ``robot.actuated_names`` order and states in ``robot.joint_names`` order.
    """

    robot: object

    @abstractmethod
    def reset(self, q: np.ndarray, qdot: np.ndarray | None = None) -> PlantState:
        """Start from a closed configuration ``q`` (nv,) with velocities ``qdot`` (nv,) (zero by default)."""

    @abstractmethod
    def step(self, tau: np.ndarray, duration: float) -> PlantState:
        """Hold the actuator torques ``tau`` (n_a,) for ``duration`` seconds (one control period) and return the new state."""

    @abstractmethod
    def state(self) -> PlantState:
        """The current state."""

    def closure_violation(self) -> float:
        """Max |closure residual| at the current state (m, rad), from the robot's own closure equations (0 for a serial robot)."""
        return float(np.abs(self.robot.closures.residual(self.state().q)).max(initial=0.0))
