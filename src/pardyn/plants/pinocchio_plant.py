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

This module also defines :class:`Payload`, a rigid body fixed to a frame of the
tree (the platform by default), shared by both plants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.parameters import Body, DynamicParameters, standard_from_inertia
from pardyn.errors import InputError
from pardyn.plants import Plant, PlantState

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["Payload", "PinocchioPlant"]


@dataclass(frozen=True)
class Payload:
    """A rigid body fixed to a frame of the tree (a load carried by the platform).

    Attributes:
        mass: kg, >= 0.
        com: centre of mass in the axes and from the origin of ``frame``, shape (3,), m
            (its first moments are ``mass * com``, kg m, in the same frame).
        inertia: inertia matrix about the centre of mass in ``frame`` axes, shape (3, 3), kg m^2
            (symmetric positive semi-definite; zeros for a point mass).
        frame: name of the pinocchio frame the payload is fixed to (``"platform"``).
    """

    mass: float
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    frame: str = "platform"

    def __post_init__(self) -> None:
        mass = float(self.mass)
        com = np.array(self.com, dtype=float)
        inertia = np.array(self.inertia, dtype=float)
        if not (math.isfinite(mass) and mass >= 0.0):
            raise InputError(f"payload: mass must be a finite mass >= 0 (kg), got {self.mass}")
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise InputError(f"payload: com must be 3 finite coordinates (m), got {np.asarray(self.com).tolist()}")
        if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
            raise InputError(f"payload: inertia must be a finite (3, 3) matrix (kg m^2), got shape {inertia.shape}")
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * max(1.0, float(np.abs(inertia).max()))):
            raise InputError(f"payload: inertia must be symmetric, got {inertia.tolist()}")
        if np.linalg.eigvalsh(inertia).min() < -1e-12 * max(1.0, float(np.abs(inertia).max())):
            raise InputError(f"payload: inertia must be positive semi-definite, got {inertia.tolist()}")
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia", inertia)

    @classmethod
    def from_inertia(cls, inertia: pin.Inertia, *, frame: str = "platform") -> Payload:
        """The payload of a pinocchio inertia expressed in ``frame`` (e.g. from
        :func:`pardyn.dynamics.parameters.inertia_from_standard` of the 10 standard parameters)."""
        return cls(float(inertia.mass), np.array(inertia.lever), np.array(inertia.inertia), frame)

    def added_to(self, params: DynamicParameters, model: pin.Model) -> DynamicParameters:
        """``params`` with the payload as one more body, ``payload_on_<frame>``, on its frame's joint of ``model``."""
        joint, inertia = self.joint_inertia(model)
        body = Body(name=f"payload_on_{self.frame}", joint=joint, placement=pin.SE3.Identity(),
                    standard=standard_from_inertia(inertia))
        return replace(params, bodies=(*params.bodies, body))

    def joint_inertia(self, model: pin.Model) -> tuple[int, pin.Inertia]:
        """The joint that carries the payload and the payload's inertia in that joint's frame.

        Raises:
            InputError: ``frame`` is not a frame of ``model``.
        """
        if not model.existFrame(self.frame):
            raise InputError(f"payload: unknown frame {self.frame!r}; frames: {sorted(f.name for f in model.frames)}")
        frame = model.frames[model.getFrameId(self.frame)]
        local = pin.Inertia(self.mass, self.com, self.inertia)
        return int(frame.parentJoint), frame.placement.act(local)


class PinocchioPlant(Plant):
    """The robot simulated by pardyn's constrained forward dynamics (RK4 + projection).

    Every :meth:`step` holds ``tau`` over ``duration`` and runs
    ``round(duration / timestep)`` RK4 steps of :func:`pardyn.dynamics.forward.simulate`
    (at least one).

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
        trajectory = simulate(
            self.dynamics, lambda t, q, qdot: tau, self._q, self._qdot, duration=duration, dt=duration / steps
        )
        self._q, self._qdot = trajectory.q[-1].copy(), trajectory.qdot[-1].copy()
        self._time += duration
        self._tau = tau
        return self.state()

    def state(self) -> PlantState:
        return PlantState(time=self._time, q=self._q.copy(), qdot=self._qdot.copy(), tau=self._tau.copy())
