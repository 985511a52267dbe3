"""A serial robot with flexible joints: link and rotor coordinates, two encoders per joint.

The plant of the UR5e paper's model (section 2, :mod:`pardyn.dynamics.rotor`):
each actuated joint is a stiff spring-damper (the strain-wave transmission)
between a rotor, reflected through the gear ratio to the link side, and its link:

    tau_J = K (theta - q) + D (thetadot - qdot)                          # (n,), N m
    M(q) qddot + C(q, qdot) qdot + g(q) + tau_link_friction = tau_J      # pinocchio ABA
    B thetaddot = K_tau i - tau_f(thetadot, tau_J, T) - tau_J            # rotor equation

``K``, ``D``, ``B``, ``tau_f`` and the temperatures from a
:class:`pardyn.dynamics.rotor.RotorModel` (its friction sign ``tanh(thetadot / w)``,
``w > 0``, so that RK4 integrates a smooth right-hand side); the link inertials (and any link-side drive friction ``fv``, ``fs``,
``offset``) from :class:`pardyn.dynamics.parameters.DynamicParameters`. The input
is the current-based motor torque ``K_tau i`` (N m, link side), held over each
control period (zero-order hold) and integrated by fixed-step RK4 of the
12-dimensional state ``(q, qdot, theta, thetadot)`` (``timestep``, 0.1 ms by
default: the wrist's spring against its small link inertia rings at ~600 Hz).

What it publishes (see :mod:`pardyn.experiments.ur5e_calibration`): the link
encoders ``q`` on ``joint_states`` and the motor encoders ``theta`` (reflected)
with the current-based torque on ``motor_states``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.dynamics.parameters import DynamicParameters
from pardyn.dynamics.rotor import RotorModel
from pardyn.errors import InputError
from pardyn.plants import Plant, PlantState

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["FlexibleJointPlant", "FlexibleJointState"]


@dataclass(frozen=True)
class FlexibleJointState(PlantState):
    """:class:`PlantState` (link side; ``tau`` = the held motor torque ``K_tau i``) plus the rotors.

    Attributes:
        theta: rotor positions reflected to the link side (n,), rad.
        theta_dot: rotor velocities (n,), rad/s.
        joint_torque: transmission torque tau_J (n,), N m.
    """

    theta: np.ndarray
    theta_dot: np.ndarray
    joint_torque: np.ndarray


class FlexibleJointPlant(Plant):
    """Flexible-joint serial robot (module docstring); joints = ``robot.actuated_names`` = every tree joint.

    Args:
        robot: a serial robot (no closures, every joint actuated).
        rotors: the drive side (inertia, transmission, friction, temperatures).
        params: the link's dynamic parameters ("true" as-built values); the YAML nominal ones by default.
        timestep: RK4 step (s).
        coulomb_width: ``tanh`` velocity scale (rad/s) of the link-side residual Coulomb
            friction ``fs`` of ``params`` (the rotor's is its model's ``coulomb_width``).
    """

    def __init__(
        self,
        robot: Robot,
        rotors: RotorModel,
        *,
        params: DynamicParameters | None = None,
        timestep: float = 1e-4,
        coulomb_width: float = 0.01,
    ) -> None:
        if robot.closures.size or len(robot.actuated_names) != robot.nv:
            raise InputError(f"{robot.name}: the flexible-joint plant needs a serial robot with every joint actuated")
        if tuple(rotors.joints) != tuple(robot.joint_names):
            raise InputError(f"rotor model joints {list(rotors.joints)} differ from {list(robot.joint_names)}")
        if not (math.isfinite(timestep) and timestep > 0.0):
            raise InputError(f"timestep must be a positive time (s), got {timestep}")
        if not coulomb_width > 0.0 or not np.all(rotors.friction.coulomb_width > 0.0):
            raise InputError(f"coulomb widths must be positive (rad/s), got {coulomb_width} and rotor "
                             f"{rotors.friction.coulomb_width.tolist()}")
        self.robot = robot
        self.rotors = rotors
        self.params = robot.nominal_parameters if params is None else params
        self.model = robot.model.copy()
        self.params.apply(self.model)
        self.model.armature[:] = 0.0  # the rotor is its own body here, not armature
        self.data = self.model.createData()
        drives = self.params.drive_values()  # (n_d, 4): ia fv fs offset, link-side residual terms
        self._drive_index = self.params.drive_indices
        self._link_ia, self._link_fv, self._link_fs, self._link_offset = (drives[:, k] for k in range(4))
        if np.any(self._link_ia):
            raise InputError("params: link-side ia must be 0 in the flexible-joint plant (the rotor carries the inertia)")
        self.timestep = float(timestep)
        self.coulomb_width = float(coulomb_width)
        self.n = robot.nv
        self.reset(robot.home)

    # ------------------------------------------------------------------ physics
    def joint_torque(self, q: np.ndarray, qdot: np.ndarray, theta: np.ndarray, theta_dot: np.ndarray) -> np.ndarray:
        """Transmission torque ``tau_J = K (theta - q) + D (thetadot - qdot)`` (n,), N m."""
        return self.rotors.stiffness * (theta - q) + self.rotors.damping * (theta_dot - qdot)

    def _link_friction(self, qdot: np.ndarray) -> np.ndarray:
        out = np.zeros(self.n)
        velocity = qdot[self._drive_index]
        out[self._drive_index] = (self._link_fv * velocity + self._link_fs * np.tanh(velocity / self.coulomb_width)
                                  + self._link_offset)
        return out

    def _derivative(self, state: np.ndarray, motor_torque: np.ndarray) -> np.ndarray:
        n = self.n
        q, qdot, theta, theta_dot = state[:n], state[n:2 * n], state[2 * n:3 * n], state[3 * n:]
        joint = self.joint_torque(q, qdot, theta, theta_dot)
        qddot = pin.aba(self.model, self.data, q, qdot, joint - self._link_friction(qdot))
        rotor = self.rotors.friction.torque(theta_dot, joint, self.rotors.temperature_c)
        theta_ddot = (motor_torque - rotor - joint) / self.rotors.inertia
        return np.concatenate([qdot, qddot, theta_dot, theta_ddot])

    def static_rotor_positions(self, q: np.ndarray) -> np.ndarray:
        """``theta`` holding ``q`` at rest: ``K (theta - q) = g(q)`` (n,), rad."""
        gravity = pin.computeGeneralizedGravity(self.model, self.data, q)
        return q + (gravity + self._link_friction(np.zeros(self.n))) / self.rotors.stiffness

    # ------------------------------------------------------------ Plant API
    def reset(self, q: np.ndarray, qdot: np.ndarray | None = None) -> FlexibleJointState:
        """Start at rest-equilibrium rotors for ``q`` (n,) and link/rotor velocities ``qdot`` (n,)."""
        q = np.asarray(q, dtype=float).reshape(-1).copy()
        qdot = np.zeros(self.n) if qdot is None else np.asarray(qdot, dtype=float).reshape(-1).copy()
        if q.shape != (self.n,) or qdot.shape != (self.n,):
            raise InputError(f"reset: expected q and qdot of {self.n} values, got {q.shape}, {qdot.shape}")
        self._state = np.concatenate([q, qdot, self.static_rotor_positions(q), qdot])
        self._time = 0.0
        self._motor_torque = np.zeros(self.n)
        return self.state()

    def step(self, tau: np.ndarray, duration: float) -> FlexibleJointState:
        """Hold the motor torque ``K_tau i`` (n,) (N m) for ``duration`` s: ``round(duration / timestep)`` RK4 steps."""
        motor = np.asarray(tau, dtype=float).reshape(-1)
        if motor.shape != (self.n,) or not np.all(np.isfinite(motor)):
            raise InputError(f"motor torque: expected {self.n} finite values (N m), got {motor.tolist()}")
        if not (math.isfinite(duration) and duration > 0.0):
            raise InputError(f"duration must be a positive time (s), got {duration}")
        steps = max(1, round(duration / self.timestep))
        dt = duration / steps
        x = self._state
        f = self._derivative
        for _ in range(steps):
            k1 = f(x, motor)
            k2 = f(x + 0.5 * dt * k1, motor)
            k3 = f(x + 0.5 * dt * k2, motor)
            k4 = f(x + dt * k3, motor)
            x = x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        if not np.all(np.isfinite(x)):
            raise InputError(f"the flexible-joint simulation diverged at t = {self._time:.4f} s (reduce timestep)")
        self._state = x
        self._time += duration
        self._motor_torque = motor.copy()
        return self.state()

    def state(self) -> FlexibleJointState:
        n = self.n
        x = self._state
        q, qdot, theta, theta_dot = (x[k * n:(k + 1) * n].copy() for k in range(4))
        return FlexibleJointState(
            time=self._time, q=q, qdot=qdot, tau=self._motor_torque.copy(), theta=theta, theta_dot=theta_dot,
            joint_torque=self.joint_torque(q, qdot, theta, theta_dot),
        )

    def energy(self) -> float:
        """Total mechanical energy (J): link kinetic + potential, rotor kinetic, spring potential."""
        n = self.n
        x = self._state
        q, qdot, theta, theta_dot = x[:n], x[n:2 * n], x[2 * n:3 * n], x[3 * n:]
        kinetic = pin.computeKineticEnergy(self.model, self.data, q, qdot)
        potential = pin.computePotentialEnergy(self.model, self.data, q)
        rotor = 0.5 * float(self.rotors.inertia @ theta_dot**2)
        spring = 0.5 * float(self.rotors.stiffness @ (theta - q) ** 2)
        return float(kinetic + potential + rotor + spring)
