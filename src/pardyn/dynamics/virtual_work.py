"""Planar inverse dynamics by the virtual work principle, linear in the parameters.

Wu, Wang, Wang, Li 2009 (Mechatronics 19), section 2: every moving body ``b``
has a *pivotal point* ``P_b`` (a point of the body whose motion does not
depend on the body's own inertial parameters) with its partial velocity
matrix ``H_b`` (eq. 1) and the body its partial angular velocity matrix
``G_b`` (eq. 2) with respect to the generalized speeds ``v`` (n,)::

    v_Pb = H_b v          # (2,), H_b: (2, n), eq. (13)
    omega_b = G_b v       # scalar (planar), G_b: (n,), eq. (12)

The inertia wrench of a body reduced to its pivotal point (eqs. 6-10, planar,
gravity ``g`` (2,) folded in as in eqs. 30-32) is, with ``h = m R(theta) c`` the
first moment (world axes; ``c`` the centre of mass in the body frame at P_b)::

    F_b = m (a_P - g) + omega_dot z x h - omega^2 h                          # eq. (9), force
    M_b = I_P omega_dot + h x (a_P - g)                                       # eq. (9), moment about P_b

(``I_P`` the moment of inertia about ``P_b``). By virtual work (eqs. 14-15) the
actuator efforts ``tau`` with the Jacobian ``J`` (``qdot_a = J v``, eq. 11)
balance them::

    J^T tau = sum_b (H_b^T F_b + G_b M_b) = Omega p                           # eqs. (15), (16), (36)

with, per body, ``p_b = [m, mx, my, zz]`` (``[mx my] = m c`` in the body frame,
``zz = I_P``; eq. 33-34 for the paper's links) or ``p_b = [m]`` for a body that
only translates (sliders, counterweights, eqs. 26-27, 30). The columns of
``Omega`` (eq. 34, generalised) are, with ``u_x = R e_x``, ``u_y = R e_y``::

    m:   H^T (a_P - g)
    mx:  H^T (omega_dot z x u_x - omega^2 u_x) + G (u_x x (a_P - g))
    my:  the same with u_y
    zz:  G omega_dot

The energy ``E = T + V`` is linear in the same parameters (used by the power
balance ``tau . qdot_a = dE/dt``)::

    T = 1/2 m |v_P|^2 + omega v_P . (z x h) + 1/2 I_P omega^2,   V = -g . (m P + h)

Everything is vectorized over samples: leading axes ``...`` on every array.
"""

from __future__ import annotations

import numpy as np

from pardyn.kinematics.body_motion import BodyMotion

__all__ = ["ROTATING", "TRANSLATING", "body_energy", "body_observation", "body_parameters", "parameter_names"]

ROTATING: tuple[str, ...] = ("m", "mx", "my", "zz")
"""Parameters of a rotating body: mass, first moments in the body frame, inertia about the pivot."""

TRANSLATING: tuple[str, ...] = ("m",)
"""Parameters of a body that only translates (its rotation terms vanish, eq. 26)."""


def body_parameters(body: BodyMotion) -> tuple[str, ...]:
    """The parameter names of a body: :data:`ROTATING` or, for a body that only translates, :data:`TRANSLATING`."""
    return ROTATING if body.rotates else TRANSLATING


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z component of ``a x b`` for planar vectors (..., 2)."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _axes(angle: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Body axes ``u_x = R e_x``, ``u_y = R e_y`` in the world, (..., 2) each."""
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([c, s], axis=-1), np.stack([-s, c], axis=-1)


def body_observation(body: BodyMotion, gravity: np.ndarray) -> np.ndarray:
    """The body's columns of ``Omega`` (eq. 34 generalised), shape (..., n, len(body_parameters(body)))."""
    relative = body.acceleration - gravity  # a_P - g (..., 2)
    h_t = np.swapaxes(body.velocity_map, -1, -2)  # H^T (..., n, 2)
    mass = np.einsum("...nk,...k->...n", h_t, relative)
    if not body.rotates:
        return mass[..., None]
    omega, omega_dot = body.angular_velocity[..., None], body.angular_acceleration[..., None]
    g_map = body.angular_velocity_map  # (..., n)
    columns = [mass]
    for axis in _axes(body.angle):
        perpendicular = np.stack([-axis[..., 1], axis[..., 0]], axis=-1)  # z x u
        force = omega_dot * perpendicular - omega**2 * axis
        moment = _cross(axis, relative)
        columns.append(np.einsum("...nk,...k->...n", h_t, force) + g_map * moment[..., None])
    columns.append(g_map * omega_dot)
    return np.stack(columns, axis=-1)


def body_energy(body: BodyMotion, gravity: np.ndarray) -> np.ndarray:
    """The body's row of the energy ``E = e . p`` (T + V), shape (..., len(body_parameters(body)))."""
    speed2 = np.sum(body.velocity**2, axis=-1)
    mass = 0.5 * speed2 - body.position @ gravity
    if not body.rotates:
        return mass[..., None]
    omega = body.angular_velocity
    columns = [mass]
    for axis in _axes(body.angle):
        perpendicular = np.stack([-axis[..., 1], axis[..., 0]], axis=-1)
        columns.append(omega * np.sum(body.velocity * perpendicular, axis=-1) - axis @ gravity)
    columns.append(0.5 * omega**2)
    return np.stack(columns, axis=-1)


def parameter_names(bodies: list[BodyMotion] | tuple[BodyMotion, ...]) -> tuple[str, ...]:
    """Names ``<p>_<body>`` of the columns of the stacked observation matrix."""
    return tuple(f"{p}_{body.name}" for body in bodies for p in body_parameters(body))
