"""pardyn's own constrained forward dynamics behind the :class:`~pardyn.plants.Plant` interface.

:class:`PinocchioPlant` holds the actuator efforts of each control period
constant (zero-order hold) and integrates the closed-loop dynamics of
:mod:`pardyn.dynamics.forward` over it: the reduced form

    (W^T M W) xddot = W^T (S_a^T tau_a - b - f - M w),   qddot = W xddot + w    # (n,), (nv,)

(the generic DualV paper's eqs. (1), (9)-(10), (15)-(16), see
:class:`pardyn.dynamics.forward.ForwardDynamics`), stepped by
:func:`pardyn.dynamics.forward.simulate` (fixed-step RK4 + projection onto
``phi(q) = 0``, ``K qdot = 0`` after every step). It is the model-side twin of
:class:`pardyn.plants.mujoco_plant.MujocoPlant` (an independent engine): the two
agree to the tolerances measured in ``test/plants/test_pinocchio_plant.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pardyn.dynamics.forward import ForwardDynamics, held_step
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError
from pardyn.plants import Plant, PlantState
from pardyn.plants.payload import Payload

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["PinocchioPlant"]


class PinocchioPlant(Plant):
    """The robot simulated by pardyn's constrained forward dynamics (RK4 + projection).

    Every :meth:`step` holds ``tau`` over ``duration`` and runs
    ``round(duration / timestep)`` RK4 steps of :func:`pardyn.dynamics.forward.simulate`
    (at least one; :func:`pardyn.dynamics.forward.held_step`, from the closed state held).

    Args:
        robot: the robot (tree, closures, differential kinematics).
        params: the simulated robot's dynamic parameters (drive offsets included);
            ``robot.nominal_parameters`` by default.
        payload: a :class:`Payload` added to them.
        timestep: RK4 step (s), 1 ms by default.
        coulomb_width: ``tanh`` smoothing velocity of the Coulomb friction (rad/s, m/s);
            see :class:`pardyn.dynamics.forward.ForwardDynamics` (RK4 needs smooth dynamics:
            with Coulomb friction ``fs`` give a width and a ``timestep`` below
            ``ia * coulomb_width / fs``).
    """

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        payload: Payload | None = None,
        timestep: float = 1e-3,
        coulomb_width: float = 0.0,
    ) -> None:
        if not (math.isfinite(timestep) and timestep > 0.0):
            raise InputError(f"timestep must be a positive time (s), got {timestep}")
        self.robot = robot
        self.params = robot.nominal_parameters if params is None else params
        self.payload = payload
        self.timestep = float(timestep)
        simulated = self.params if payload is None else payload.added_to(self.params, robot.model)
        self.dynamics = ForwardDynamics(robot, simulated, coulomb_width=coulomb_width)
        self._n_a = len(robot.actuated_indices)
        self.reset(robot.home)

    def reset(self, q: np.ndarray, qdot: np.ndarray | None = None) -> PlantState:
        """Start from ``q`` (nv,) and ``qdot`` (nv,), projected onto the constraints (time 0, zero torques)."""
        q = self.dynamics._vector(q, self.dynamics.nv, "q")
        qdot = np.zeros(self.dynamics.nv) if qdot is None else self.dynamics._vector(qdot, self.dynamics.nv, "qdot")
        self._q, self._qdot = self.dynamics.project(q, qdot)
        self._time = 0.0
        self._tau = np.zeros(self._n_a)
        return self.state()

    def step(self, tau: np.ndarray, duration: float) -> PlantState:
        """Hold ``tau`` (n_a,) (N m, N) for ``duration`` s: ``max(1, round(duration / timestep))`` RK4 steps."""
        tau = self.dynamics._vector(tau, self._n_a, "tau").copy()
        if not (math.isfinite(duration) and duration > 0.0):
            raise InputError(f"duration must be a positive time (s), got {duration}")
        steps = max(1, round(duration / self.timestep))
        q, qdot = self._q, self._qdot
        for _ in range(steps):  # simulate()'s RK4 + projection, from the closed state the plant holds
            q, qdot = held_step(self.dynamics, tau, q, qdot, duration / steps)
        self._q, self._qdot = q, qdot
        self._time += duration
        self._tau = tau
        return self.state()

    def state(self) -> PlantState:
        return PlantState(time=self._time, q=self._q.copy(), qdot=self._qdot.copy(), tau=self._tau.copy())
