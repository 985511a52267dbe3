"""Drive side of a flexible joint: rotor inertia, nonlinear rotor friction, compensation.

UR5e paper, section 2: with the rotor positions ``theta`` reflected through the
gear ratios (seen in link space), the link and rotor equations are

    M(q) qddot + C(q, qdot) qdot + g(q) = tau_J                     # link, (n,)
    B thetaddot + tau_f(thetadot, tau_J, T) + tau_J = K_tau i       # rotor, (n,)

``B`` the diagonal rotor inertias, ``tau_f`` the rotor friction, ``K_tau`` the
torque constants, ``i`` the quadrature currents, ``tau_J`` the joint
(transmission) torque coupling both. The friction model (section 3.1, after the
paper's refs. [18, 19]) per joint, all link-side units::

    F_c(T) = F_c (1 - k_c (T - T_ref))                               # Coulomb, N m
    F_v(T) = F_v exp(-k_v (T - T_ref))                               # viscous, N m s/rad
    tau_f = s(thetadot) [F_c(T) + F_l |tau_J| + (F_s - F_c) exp(-(thetadot / v_s)^2)]
            + F_v(T) thetadot                                        # N m

Stribeck (breakaway ``F_s`` decaying to ``F_c`` over ``v_s``), load-dependent
Coulomb (``F_l`` N m per N m of transmitted torque) and viscous friction, the
temperature ``T`` (deg C) an input. ``s = tanh(thetadot / w)`` is the sign
regularized over the presliding velocity scale ``w`` (``w = 0``: ``sign``); the
same law drives the plant and the compensation.

**Rotor dynamics compensation** (the paper's contribution): the link-side torque
is the current-based torque minus the rotor's inertial and friction torques,
computed from the motor-side encoder::

    tau_J = K_tau i - B thetaddot - tau_f(thetadot, tau_J, T)

implicit in ``tau_J`` through the load term; with ``a = K_tau i - B thetaddot -
s [F_c(T) + Stribeck] - F_v(T) thetadot`` its unique solution (``F_l < 1``) is
``tau_J = a / (1 + s F_l sign(a))`` (:meth:`RotorModel.joint_torque`).

Parameters come from the typed ``rotors:`` section of the robot YAML
(:mod:`pardyn.description.rotors`, ``config/robots/ur5e.yaml``), as a
:class:`RotorModel` from :func:`load_rotor_model`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pardyn.description.rotors import ROTOR_FIELDS
from pardyn.errors import DescriptionError, InputError

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["ROTOR_FIELDS", "RotorFriction", "RotorModel", "load_rotor_model"]

@dataclass(frozen=True)
class RotorFriction:
    """Nonlinear rotor friction of n joints (module docstring); every array (n,).

    Attributes:
        coulomb: F_c (N m); static: F_s (N m); stribeck_velocity: v_s (rad/s);
        load_coulomb: F_l (-); viscous: F_v (N m s/rad); viscous_temperature: k_v (1/K);
        coulomb_temperature: k_c (1/K); coulomb_width: w (rad/s), 0 = sign;
        reference_temperature_c: T_ref (deg C).
    """

    coulomb: np.ndarray
    static: np.ndarray
    stribeck_velocity: np.ndarray
    load_coulomb: np.ndarray
    viscous: np.ndarray
    viscous_temperature: np.ndarray
    coulomb_temperature: np.ndarray
    coulomb_width: np.ndarray
    reference_temperature_c: float = 25.0

    def coefficients(self, temperature_c: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """``(F_c(T), F_v(T))`` (n,) or (N, n) at temperatures T (deg C)."""
        delta = np.asarray(temperature_c, dtype=float) - self.reference_temperature_c
        return (self.coulomb * (1.0 - self.coulomb_temperature * delta),
                self.viscous * np.exp(-self.viscous_temperature * delta))

    def direction(self, velocity: np.ndarray) -> np.ndarray:
        """``s = tanh(thetadot / w)`` (``sign`` where ``w = 0``), shape of ``velocity``."""
        width = self.coulomb_width
        smooth = np.tanh(velocity / np.where(width > 0.0, width, 1.0))
        return np.where(width > 0.0, smooth, np.sign(velocity))

    def _unloaded(self, velocity: np.ndarray, temperature_c: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """``(s, s [F_c(T) + Stribeck] + F_v(T) thetadot)``: every term but the load one."""
        coulomb, viscous = self.coefficients(temperature_c)
        direction = self.direction(velocity)
        stribeck = (self.static - self.coulomb) * np.exp(-np.square(velocity / self.stribeck_velocity))
        return direction, direction * (coulomb + stribeck) + viscous * velocity

    def torque(
        self,
        velocity: np.ndarray,
        load: np.ndarray,
        temperature_c: np.ndarray | float,
    ) -> np.ndarray:
        """``tau_f`` (N m), shape of ``velocity`` ((n,) or (N, n)).

        Args:
            velocity: rotor velocity thetadot, link side (rad/s).
            load: transmitted torque tau_J (N m).
            temperature_c: drive temperature T (deg C), scalar, (n,) or (N, n).
        """
        velocity = np.asarray(velocity, dtype=float)
        direction, unloaded = self._unloaded(velocity, temperature_c)
        return unloaded + direction * self.load_coulomb * np.abs(load)


def _array(values: Any, n: int, what: str) -> np.ndarray:
    array = np.broadcast_to(np.asarray(values, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(array)):
        raise InputError(f"{what}: expected {n} finite values, got {array.tolist()}")
    return array


@dataclass(frozen=True)
class RotorModel:
    """Drive side of n flexible joints (module docstring); arrays (n,) in ``joints`` order.

    Attributes:
        joints: joint names (the robot's actuated joints).
        inertia: B (kg m^2); torque_constant: K_tau (N m/A);
        stiffness, damping: the transmission's, N m/rad and N m s/rad (used by the plant);
        friction: the rotor friction; temperature_c: operating temperature (deg C).
    """

    joints: tuple[str, ...]
    inertia: np.ndarray
    torque_constant: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    friction: RotorFriction
    temperature_c: np.ndarray

    @property
    def size(self) -> int:
        return len(self.joints)

    def rotor_torque(
        self,
        acceleration: np.ndarray,
        velocity: np.ndarray,
        load: np.ndarray,
        *,
        temperature_c: np.ndarray | float | None = None,
    ) -> np.ndarray:
        """``B thetaddot + tau_f(thetadot, tau_J, T)`` (N m), (n,) or (N, n); T = operating by default."""
        temperature = self.temperature_c if temperature_c is None else temperature_c
        return self.inertia * np.asarray(acceleration, dtype=float) + self.friction.torque(velocity, load, temperature)

    def joint_torque(
        self,
        motor_torque: np.ndarray,
        velocity: np.ndarray,
        acceleration: np.ndarray,
        *,
        temperature_c: np.ndarray | float | None = None,
        inertia: bool = True,
    ) -> np.ndarray:
        """Rotor dynamics compensation: ``tau_J = K_tau i - B thetaddot - tau_f`` (N m), (n,) or (N, n).

        Args:
            motor_torque: current-based torque ``K_tau i`` (N m).
            velocity, acceleration: rotor thetadot (rad/s), thetaddot (rad/s^2), link side.
            temperature_c: drive temperatures (deg C); the operating ones by default.
            inertia: subtract ``B thetaddot`` (False: friction only, for an identification
                that estimates B, see :mod:`pardyn.identification.rotor_compensation`; the
                load term then sees ``tau_J + B thetaddot``, an error of at most
                ``F_l B |thetaddot| / (1 - F_l)``).
        """
        temperature = self.temperature_c if temperature_c is None else temperature_c
        velocity = np.asarray(velocity, dtype=float)
        direction, unloaded = self.friction._unloaded(velocity, temperature)
        free = np.asarray(motor_torque, dtype=float) - unloaded
        if inertia:
            free = free - self.inertia * np.asarray(acceleration, dtype=float)
        return free / (1.0 + direction * self.friction.load_coulomb * np.sign(free))

    def with_values(self, **values: Any) -> RotorModel:
        """A copy with some fields replaced: rotor fields (``inertia``, ...) and friction
        fields (``coulomb``, ...) by name, arrays (n,) or scalars."""
        own = {f.name for f in fields(self)} - {"joints", "friction"}
        friction_names = {f.name for f in fields(RotorFriction)} - {"reference_temperature_c"}
        unknown = sorted(set(values) - own - friction_names)
        if unknown:
            raise InputError(f"rotor model: unknown fields {unknown}; known: {sorted(own | friction_names)}")
        rotor = {k: _array(v, self.size, k) for k, v in values.items() if k in own}
        friction = {k: _array(v, self.size, k) for k, v in values.items() if k in friction_names}
        return replace(self, friction=replace(self.friction, **friction), **rotor)

    def scaled(self, factors: Mapping[str, float | Sequence[float]]) -> RotorModel:
        """A copy with fields multiplied by factors (e.g. an as-built perturbation)."""
        current = {**{f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("joints", "friction")},
                   **{f.name: getattr(self.friction, f.name) for f in fields(RotorFriction)
                      if f.name != "reference_temperature_c"}}
        unknown = sorted(set(factors) - set(current))
        if unknown:
            raise InputError(f"rotor model: unknown fields {unknown}; known: {sorted(current)}")
        return self.with_values(**{k: current[k] * np.asarray(v, dtype=float) for k, v in factors.items()})

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready ``{field: {joint: value}}`` (SI units, deg C)."""
        out: dict[str, Any] = {}
        for name in ROTOR_FIELDS:
            values = getattr(self.friction, name) if hasattr(self.friction, name) else getattr(self, name)
            out[name] = dict(zip(self.joints, np.asarray(values, dtype=float).tolist()))
        out["reference_temperature_c"] = self.friction.reference_temperature_c
        return out


def load_rotor_model(robot: Mechanism) -> RotorModel:
    """The rotor model of the robot's typed ``rotors:`` section (actuated-joint order).

    Raises:
        DescriptionError: the robot YAML has no ``rotors:`` section (the section's content
            was checked when the robot loaded, :mod:`pardyn.description.rotors`).
    """
    section = robot.description.rotors
    if section is None:
        raise DescriptionError(f"{robot.source}: rotors: {robot.name} has no rotor model "
                               "(section 'rotors:' missing)")

    def column(name: str) -> np.ndarray:
        return np.array(section.values[name], dtype=float)

    friction = RotorFriction(
        **{f.name: column(f.name) for f in fields(RotorFriction) if f.name != "reference_temperature_c"},
        reference_temperature_c=section.reference_temperature_c,
    )
    return RotorModel(
        joints=section.joints,
        inertia=column("inertia"),
        torque_constant=column("torque_constant"),
        stiffness=column("stiffness"),
        damping=column("damping"),
        friction=friction,
        temperature_c=column("temperature_c"),
    )
