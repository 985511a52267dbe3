"""The virtual-work dynamic model of the Wu et al. 2009 machine (``wu3r``, ``wu3n``): eqs. (30)-(39).

A second, independent implementation of the machine's inverse dynamics (no
pinocchio): the pivotal-point kinematics of
:func:`pardyn.kinematics.analytic.wu.pivotal_motion` assembled by the virtual
work principle (:mod:`pardyn.dynamics.virtual_work`)::

    J^T tau = Omega(x, xdot, xddot) p                 # (3,), eq. (36); eq. (38) for wu3n
    tau_min = J (J^T J)^-1 Omega p                    # (n_a,), eq. (39); the unique tau if n_a = 3

``p`` stacks, in the order of eq. (36): the slider masses ``m_i1``, then
``[m, mx, my, zz]`` of the links (``m_i2``, ``p_i2`` of eq. 34 with ``mx = m s_i2``),
of the strut parts hinged at ``E_i`` (``m_i3``) and riding at ``B`` (``m_i4``),
the counterweight masses ``m_i5`` and the platform ``p_N`` (first moments in
the URDF body frames, ``zz`` about the pivotal point). The counterweight is a
body of its own here, whose centre moves as ``-q_i`` (acceleration ``-qddot_i``,
as in the paper), while the generic engine models it as the drive terms
``ia = m_i5``, ``offset = -m_i5 g`` of the slider (config/robots/wu3r.yaml).
Units: m, rad, s, kg; forces N.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pardyn.dynamics.inverse import minimum_norm_torques
from pardyn.dynamics.parameters import INERTIAL_NAMES, DynamicParameters
from pardyn.dynamics.virtual_work import body_energy, body_observation, body_parameters, parameter_names
from pardyn.errors import DescriptionError
from pardyn.kinematics.analytic.wu import WuGeometry, WuMotion, pivotal_motion

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["WuVirtualWork"]

_STANDARD = {p: k for k, p in enumerate(INERTIAL_NAMES)}


class WuVirtualWork:
    """Eqs. (35)-(39) for ``wu3r`` (4 actuators) and ``wu3n`` (3 actuators).

    Args:
        robot: ``wu3r`` or ``wu3n`` (geometry from its URDF).
        params: dynamic parameters giving the values of ``p``; the YAML nominal ones by default.

    Attributes:
        names: parameter names of ``p`` (n_p,), e.g. ``m_slider1``, ``zz_link1``, ``m_counterweight1``.
        vector: ``p`` (n_p,).
    """

    def __init__(self, robot: Robot, params: DynamicParameters | None = None) -> None:
        self.robot = robot
        self.geometry = WuGeometry.from_robot(robot.mechanism)
        params = robot.nominal_parameters if params is None else params
        self.gravity = np.asarray(params.gravity, dtype=float)[:2]  # (2,), m/s^2
        home = pivotal_motion(self.geometry, np.asarray(robot.home)[np.asarray(robot.task_indices)])
        self.names = parameter_names(home.bodies)
        self.vector = self._parameter_vector(params, home)

    def _parameter_vector(self, params: DynamicParameters, motion: WuMotion) -> np.ndarray:
        standard = {body.name: body.standard for body in params.bodies}
        inertia = {drive.joint: drive.ia for drive in params.drives}
        values = []
        for body in motion.bodies:
            if body.name.startswith("counterweight"):
                joint = f"slider{body.name[-1]}_joint"
                values.append(inertia.get(joint, 0.0))  # m_i5 = ia of the slider drive
                continue
            if body.name not in standard:
                raise DescriptionError(f"{self.robot.source}: dynamics: no body {body.name!r} (virtual-work model)")
            values.extend(standard[body.name][_STANDARD[p]] for p in body_parameters(body))
        return np.asarray(values, dtype=float)

    def motion(self, pose: np.ndarray, velocity: np.ndarray | None = None, acceleration: np.ndarray | None = None) -> WuMotion:
        """Pivotal-point kinematics of task states (..., 3)."""
        return pivotal_motion(self.geometry, pose, velocity, acceleration)

    def observation(self, motion: WuMotion) -> np.ndarray:
        """``Omega`` (..., 3, n_p) of eq. (36) / (38)."""
        return np.concatenate([body_observation(body, self.gravity) for body in motion.bodies], axis=-1)

    def task_forces(self, motion: WuMotion) -> np.ndarray:
        """``J^T tau = Omega p`` (..., 3): the actuator forces seen by the platform, eq. (36)."""
        return self.observation(motion) @ self.vector

    def forces(self, motion: WuMotion) -> np.ndarray:
        """Minimum-norm driving forces (..., n_a), N: eq. (39) (the unique ones of eq. 38 if n_a = 3)."""
        jacobian = motion.jacobian
        forces = self.task_forces(motion)
        if jacobian.ndim == 2:
            return minimum_norm_torques(jacobian, forces)
        flat = minimum_norm_torques(jacobian.reshape(-1, *jacobian.shape[-2:]), forces.reshape(-1, 3))
        return flat.reshape(*forces.shape[:-1], jacobian.shape[-2])

    def energy(self, motion: WuMotion) -> np.ndarray:
        """Kinetic plus potential energy (...), J, counterweights included."""
        rows = np.concatenate([body_energy(body, self.gravity) for body in motion.bodies], axis=-1)
        return rows @ self.vector
