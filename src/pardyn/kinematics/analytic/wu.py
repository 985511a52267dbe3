"""Closed-form kinematics of the Wu et al. 2009 planar machine (robots ``wu3r``, ``wu3n``).

Wu, Wang, Wang, Li, Mechatronics 19 (2009), section 3, Fig. 1. Column ``i``
stands at ``x = c_i`` (``c_1 = -d/2``, ``c_2 = +d/2``: the text's eq. 20b repeats
20a); slider ``E_i = (c_i, q_i)``, ``D_i = E_i + (0, l5)``; links ``D_iA_1`` of
length ``l``; struts ``E_iB`` of length ``l_i``; platform ``A_1 = (x, y)``,
``B = A_1 - l6 (sin alpha, cos alpha)`` (eq. 17, alpha clockwise). With
``u_i = x - c_i`` and ``w_i = sqrt(l^2 - u_i^2) = l cos beta_i`` (eq. 19)::

    q_i = y - l5 - w_i                                   # eq. (20a, b), branch '-'
    l_i = |B - E_i|                                      # eq. (20c, d)
    qdot_i = [u_i / w_i, 1, 0] v = J_i v                 # eq. (21), tan beta_i = u_i / w_i
    qddot_i = J_i vdot + l^2 xdot^2 / w_i^3
    omega_link_i = -xdot / w_i  (= -beta_i_dot, eq. 23; CCW positive)
    ldot_i = e_i . (Bdot - Edot_i) = J_{i+2} v           # eq. (22), e_i = (B - E_i) / l_i

:func:`pivotal_motion` gives the motion of the pivotal points of section 3.4
(``E_i`` for the slider and the strut part hinged at ``E_i``, ``D_i`` for the
link, ``B`` for the strut part at ``B``, ``A_1`` for the platform, the
counterweight's centre moving as ``-q_i``), their partial velocity matrices
``H`` (eqs. 27, 29) and partial angular velocity matrices ``G`` (eqs. 26, 28),
for :mod:`pardyn.dynamics.virtual_work`. Body frames are the URDF link frames
(``tools/generate_planar_urdf.py``): slider at ``E_i`` unrotated, link at
``D_i`` along ``D_i -> A_1``, strut parts along ``E_i -> B`` (at ``E_i`` and at
``B``), platform at ``A_1`` turned by ``-alpha``.

:class:`WuKinematics` (``analytic: wu``) is the closed-form inverse (eq. 20)
and forward problem: ``A_1`` is the meeting point of the circles of radius
``l`` about ``D_1``, ``D_2`` (above them), ``B`` the meeting point of the circle
of radius ``l6`` about ``A_1`` and of radius ``l_2`` about ``E_2`` (left of
``E_2 -> A_1``, the YAML assembly mode); the strut ``E_1B`` of ``wu3r`` follows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import DescriptionError, InputError, SingularityError
from pardyn.kinematics.analytic.closed_form import AnalyticKinematics, register
from pardyn.kinematics.analytic.planar_geometry import circle_intersection
from pardyn.kinematics.body_motion import BodyMotion

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["WuGeometry", "WuKinematics", "WuMotion", "pivotal_motion"]


@dataclass(frozen=True)
class WuGeometry:
    """Dimensions of the machine (m), read from the URDF.

    Attributes:
        columns: x of columns 1, 2, shape (2,) (``-d/2``, ``+d/2``).
        l5: slider height ``E_iD_i``; l: link length ``D_iA_1``; l6: platform length ``A_1B``.
        struts: numbers (1, 2) of the struts present (``wu3n``: only 2).
    """

    columns: np.ndarray
    l5: float
    l: float
    l6: float
    struts: tuple[int, ...]

    @classmethod
    def from_robot(cls, robot: Mechanism) -> WuGeometry:
        model = robot.model
        source = robot.source

        def frame(name: str) -> np.ndarray:
            if not model.existFrame(name):
                raise DescriptionError(f"{source}: analytic: wu needs the URDF frame {name!r}")
            return model.frames[model.getFrameId(name)].placement.translation

        def joint(name: str) -> np.ndarray:
            if not model.existJointName(name):
                raise DescriptionError(f"{source}: analytic: wu needs the URDF joint {name!r}")
            return model.jointPlacements[model.getJointId(name)].translation

        columns = np.array([joint("slider1_joint")[0], joint("slider2_joint")[0]])
        struts = tuple(i for i in (1, 2) if model.existJointName(f"strut{i}_joint"))
        return cls(columns=columns, l5=float(frame("slider1_D")[1]), l=float(frame("link1_tip")[0]),
                   l6=float(-frame("platform_B")[1]), struts=struts)


@dataclass(frozen=True)
class WuMotion:
    """Kinematics of samples ``...`` of the machine (task speeds ``v = [xdot, ydot, alphadot]``).

    Attributes:
        actuated: ``[q_1, q_2, (l_1), l_2]`` (..., n_a), m.
        actuated_velocity, actuated_acceleration: (..., n_a).
        jacobian: ``J`` (..., n_a, 3), eq. (24) (``J_N``, eq. 25, for ``wu3n``).
        links, struts: link angles (..., 2) and strut angles (..., n_struts) from +x, rad (CCW).
        bodies: the pivotal-point motions, in the order of the paper's ``p`` (eq. 36).
    """

    actuated: np.ndarray
    actuated_velocity: np.ndarray
    actuated_acceleration: np.ndarray
    jacobian: np.ndarray
    links: np.ndarray
    struts: np.ndarray
    bodies: tuple[BodyMotion, ...]


def _planar(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.stack([a, b], axis=-1)


def pivotal_motion(
    geometry: WuGeometry, pose: np.ndarray, velocity: np.ndarray | None = None, acceleration: np.ndarray | None = None
) -> WuMotion:
    """Pivotal-point kinematics (section 3.4) of task states ``pose``, ``velocity``, ``acceleration`` (..., 3).

    Raises:
        SingularityError: a link is horizontal or out of reach (``|x - c_i| >= l``)
            or ``B`` coincides with a slider.
    """
    pose = np.asarray(pose, dtype=float)
    velocity = np.zeros_like(pose) if velocity is None else np.asarray(velocity, dtype=float)
    acceleration = np.zeros_like(pose) if acceleration is None else np.asarray(acceleration, dtype=float)
    x, y, alpha = pose[..., 0], pose[..., 1], pose[..., 2]
    xd, yd, ad = velocity[..., 0], velocity[..., 1], velocity[..., 2]
    xdd, ydd, add = acceleration[..., 0], acceleration[..., 1], acceleration[..., 2]
    zero, one = np.zeros_like(x), np.ones_like(x)
    l, l6 = geometry.l, geometry.l6

    # Platform, pivot A_1; B = A_1 - l6 (sin alpha, cos alpha) (eq. 17).
    sa, ca = np.sin(alpha), np.cos(alpha)
    h_a = np.broadcast_to(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), (*x.shape, 2, 3))
    point_b = _planar(x - l6 * sa, y - l6 * ca)
    h_b = np.stack([np.stack([one, zero, -l6 * ca], -1), np.stack([zero, one, l6 * sa], -1)], axis=-2)
    accel_b = _planar(xdd - l6 * ca * add + l6 * sa * ad**2, ydd + l6 * sa * add + l6 * ca * ad**2)
    platform = BodyMotion(
        name="platform", position=_planar(x, y), velocity_map=h_a, velocity=_planar(xd, yd),
        acceleration=_planar(xdd, ydd), angle=-alpha, angular_velocity_map=np.stack([zero, zero, -one], -1),
        angular_velocity=-ad, angular_acceleration=-add,
    )

    sliders, links, counterweights, slider_rows = [], [], [], []
    slider_state = {}
    link_angles = []
    for i, column in enumerate(geometry.columns, start=1):
        u = x - column
        w2 = l**2 - u**2
        if np.any(w2 <= 0.0):
            raise SingularityError(f"wu: link {i} out of reach or horizontal: |x - c_{i}| = {np.max(np.abs(u)):.6g} m >= l = {l:.6g} m",
                                   kind="serial", condition=math.inf)
        w = np.sqrt(w2)
        row = np.stack([u / w, one, zero], -1)  # J_i (eq. 21)
        q = y - geometry.l5 - w
        qd = np.einsum("...k,...k->...", row, velocity)
        qdd = np.einsum("...k,...k->...", row, acceleration) + l**2 * xd**2 / w**3
        h_e = np.stack([np.zeros_like(row), row], axis=-2)  # eq. (27): [0 1]^T J_i
        e_point, e_vel, e_acc = _planar(zero + column, q), _planar(zero, qd), _planar(zero, qdd)
        slider_rows.append((row, q, qd, qdd))
        slider_state[i] = (e_point, h_e, e_vel, e_acc)
        sliders.append(BodyMotion(name=f"slider{i}", position=e_point, velocity_map=h_e, velocity=e_vel, acceleration=e_acc))
        angle = np.arctan2(w, u)
        link_angles.append(angle)
        links.append(BodyMotion(
            name=f"link{i}", position=e_point + _planar(zero, zero + geometry.l5), velocity_map=h_e,  # eq. (29)
            velocity=e_vel, acceleration=e_acc, angle=angle,
            angular_velocity_map=np.stack([-1.0 / w, zero, zero], -1),  # eq. (28), CCW: -beta_dot
            angular_velocity=-xd / w, angular_acceleration=-xdd / w - u * xd**2 / w**3,
        ))
        counterweights.append(BodyMotion(
            name=f"counterweight{i}", position=_planar(zero + column, -q), velocity_map=-h_e,
            velocity=-e_vel, acceleration=-e_acc,
        ))

    upper, lower, strut_rows, strut_angles = [], [], [], []
    bd = np.einsum("...ik,...k->...i", h_b, velocity)
    for i in geometry.struts:
        e_point, h_e, e_vel, e_acc = slider_state[i]
        r = point_b - e_point
        length = np.linalg.norm(r, axis=-1)
        if np.any(length < 1e-9):
            raise SingularityError(f"wu: strut {i} has zero length (B on slider E_{i})", kind="serial", condition=math.inf)
        e = r / length[..., None]
        perp = np.stack([-e[..., 1], e[..., 0]], -1)
        h_r = h_b - h_e  # (..., 2, 3)
        row = np.einsum("...i,...ik->...k", e, h_r)  # J_{i+2} (eq. 22)
        g_map = np.einsum("...i,...ik->...k", perp, h_r) / length[..., None]
        rd = bd - e_vel
        rdd = accel_b - e_acc
        ld = np.einsum("...k,...k->...", row, velocity)
        omega = np.einsum("...k,...k->...", g_map, velocity)
        ldd = np.sum(e * rdd, -1) + (np.sum(rd * rd, -1) - ld**2) / length
        omega_dot = (np.sum(perp * rdd, -1) - 2.0 * ld * omega) / length
        angle = np.arctan2(e[..., 1], e[..., 0])
        strut_rows.append((row, length, ld, ldd))
        strut_angles.append(angle)
        rotation = {"angle": angle, "angular_velocity_map": g_map, "angular_velocity": omega,
                    "angular_acceleration": omega_dot}
        upper.append(BodyMotion(name=f"strut{i}_upper", position=e_point, velocity_map=h_e, velocity=e_vel,
                                acceleration=e_acc, **rotation))
        lower.append(BodyMotion(name=f"strut{i}_lower", position=point_b, velocity_map=h_b, velocity=bd,
                                acceleration=accel_b, **rotation))

    rows = slider_rows + strut_rows
    return WuMotion(
        actuated=np.stack([r[1] for r in rows], -1),
        actuated_velocity=np.stack([r[2] for r in rows], -1),
        actuated_acceleration=np.stack([r[3] for r in rows], -1),
        jacobian=np.stack([r[0] for r in rows], -2),
        links=np.stack(link_angles, -1),
        struts=np.stack(strut_angles, -1) if strut_angles else np.zeros((*x.shape, 0)),
        bodies=(*sliders, *links, *upper, *lower, *counterweights, platform),
    )


@register("wu")
class WuKinematics(AnalyticKinematics):
    """Closed-form inverse (eq. 20) and forward kinematics of ``wu3r`` / ``wu3n``."""

    def __init__(self, robot: Mechanism) -> None:
        super().__init__(robot)
        self.geometry = WuGeometry.from_robot(robot)
        self._index = {name: k for k, name in enumerate(robot.joint_names)}
        self._task = np.asarray(robot.task_indices, dtype=int)

    def _tree(self, pose: np.ndarray) -> np.ndarray:
        motion = pivotal_motion(self.geometry, pose)
        q = np.zeros(self.robot.model.nv)
        q[self._task] = pose
        index = self._index
        for k, i in enumerate((1, 2)):
            q[index[f"slider{i}_joint"]] = motion.actuated[k]
            q[index[f"link{i}_joint"]] = motion.links[k]
        for k, i in enumerate(self.geometry.struts):
            q[index[f"strut{i}_joint1"]] = motion.struts[k]
            q[index[f"strut{i}_joint"]] = motion.actuated[2 + k]
        return q

    def inverse(self, task: np.ndarray) -> np.ndarray:
        """Every joint (nv,) from ``[x, y, alpha]`` (m, m, rad): eq. (20) with '-'."""
        pose = np.asarray(task, dtype=float)
        if pose.shape != (3,) or not np.all(np.isfinite(pose)):
            raise InputError(f"{self.robot.name}: task: expected 3 finite values [x, y, alpha], got {pose.tolist()}")
        return self._tree(pose)

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the actuated ``[q_1, q_2, (l_1), l_2]`` (m); ``l_1`` is not used."""
        readings = np.asarray(actuated, dtype=float)
        n_a = len(self.robot.actuated_names)
        if readings.shape != (n_a,) or not np.all(np.isfinite(readings)):
            raise InputError(f"{self.robot.name}: actuated: expected {n_a} finite values (m), got {readings.tolist()}")
        g = self.geometry
        what = f"{self.robot.name}: actuated {readings.tolist()}"
        d1, d2 = (np.array([g.columns[k], readings[k] + g.l5]) for k in range(2))
        a1 = circle_intersection(d1, g.l, d2, g.l, 1, what=f"{what}: links D_1A_1, D_2A_1")  # above D_1 -> D_2
        e2 = np.array([g.columns[1], readings[1]])
        b = circle_intersection(e2, readings[-1], a1, g.l6, 1, what=f"{what}: strut E_2B and platform A_1B")
        delta = a1 - b  # = l6 (sin alpha, cos alpha)
        return self._tree(np.array([a1[0], a1[1], math.atan2(delta[0], delta[1])]))
