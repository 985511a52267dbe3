"""Constrained forward (direct) dynamics of closed-loop robots, and a simulator.

The robot is its pinocchio tree (a copy of ``robot.model`` carrying the
dynamic parameters given, :meth:`pardyn.dynamics.parameters.DynamicParameters.apply`)
with the loops closed by the closure equations of :mod:`pardyn.kinematics.closure`. The tree dynamics with
Lagrange multipliers, the generic form of the DualV paper's eqs. (1), (15)-(16):

    M(q) qddot + b(q, qdot) = S_a^T tau_a - f(qdot) + K(q)^T lambda     # (nv,)
    K(q) qddot = -Kdot qdot                                             # (m,), eqs. (10), (12)

with ``M`` (nv, nv) the tree's joint-space inertia including the rotor
inertias ``model.armature`` on its diagonal (``ia`` of eq. 2), ``b`` the
Coriolis, centrifugal and gravity efforts (``model.gravity``), ``S_a`` (n_a, nv)
the selection of the actuated joints, ``f`` the drive friction of eq. (5):

    f_j = fv_j qdot_j + fs_j sign(qdot_j) + tau_off_j    fv = model.damping, fs = model.friction

(``sign`` is replaced by ``tanh(qdot_j / coulomb_width)`` when a smoothing
width is given; pinocchio has no field for the offsets ``tau_off``, they come
from the parameters' drives), and ``lambda`` (m,) the closure efforts: with the closure
``(a, b)`` rows of ``K = J_b - J_a`` (world-aligned frame Jacobians),
``lambda`` is the force (N) / moment (N m) in world axes that the loop applies
on frame ``b`` at its origin, ``-lambda`` the one on frame ``a``.

**Implementation: the reduced form.** Every closed motion is ``qdot = W xdot``,
``qddot = W xddot + w`` with the task coordinates ``x`` (n,) and
``W`` (nv, n), ``w`` (nv,) from :class:`pardyn.kinematics.differential.DifferentialKinematics`
(eqs. 9-10). Since ``W^T K^T = 0``, projecting the tree equation on ``W``
eliminates ``lambda`` (the projection of eq. 30, Case 1, applied to the whole
tree, so it also holds for actuation-redundant robots):

    (W^T M W) xddot = W^T (S_a^T tau_a - b - f - M w)                   # (n,)
    qddot = W xddot + w                                                 # (nv,)
    lambda = K_D^-T [M qddot + b + f - S_a^T tau_a]_D                   # (m,)

where ``D`` are the leg coordinates (every non-task joint, ``K_D`` square and
invertible away from serial singularities). ``W^T M W`` is positive definite
even though the massless platform-joint bodies make ``M`` itself singular
(which is why pinocchio's ABA returns NaN on these trees). With actuation
redundancy (DualV) the motion is unique and the part of ``tau_a`` in the
null space of ``J_a^T = W[a]^T`` only changes ``lambda`` (internal forces).
Near a leg's serial singularity (``K_D`` ill-conditioned) the task coordinates
stop being coordinates of the closed-loop motion and the reduced form loses
accuracy even where the motion itself is regular; keep trajectories away from
them (``robot.solver.conditioning``).

**Integration** (:func:`simulate`): classical fixed-step RK4 on the state
``(q, qdot)``, then a projection back onto the constraint manifold after
every step (no Baumgarte terms):

* positions: Gauss-Newton with least-norm steps ``q <- q - K^T (K K^T)^-1 phi(q)``
  until ``max |phi| <= tolerance`` (default ``robot.solver.tolerance``, 1e-12 m, rad);
* velocities: least-norm correction into ``null(K)``,
  ``qdot <- qdot - K^T (K K^T)^-1 K qdot``.

RK4 keeps the drift of one step at O(dt^5), so the projection moves the state
by far less than the integration error and the energy stays conserved to
O(dt^4) (the tests measure it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.dynamics.actuation import ActuationMaps
from pardyn.dynamics.inertia_terms import InertiaTerms
from pardyn.errors import ConvergenceError, InputError, SingularityError
from pardyn.kinematics.solver import solve_regular

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["ForwardDynamics", "ForwardSolution", "Trajectory", "TorqueFunction", "held_step", "simulate"]

TorqueFunction = Callable[[float, np.ndarray, np.ndarray], np.ndarray]
"""``tau_a = tau(t (s), q (nv,), qdot (nv,))``, actuator efforts (n_a,) in N m or N."""


@dataclass(frozen=True)
class ForwardSolution:
    """Result of one constrained forward-dynamics evaluation.

    Attributes:
        qddot: joint accelerations of the whole tree, shape (nv,), rad/s^2 or m/s^2.
        task_acceleration: ``xddot``, shape (n,), in ``robot.task_names`` order.
        constraint_forces: ``lambda``, shape (m,), N or N m (see the module docstring); None only inside
            :meth:`ForwardDynamics.accelerations` and :func:`simulate`, which skip it.
    """

    qddot: np.ndarray
    task_acceleration: np.ndarray
    constraint_forces: np.ndarray | None


@dataclass(frozen=True)
class Trajectory:
    """A simulated motion sampled every ``dt``.

    Attributes:
        t: sample times, shape (N + 1,), s.
        q: joint positions, shape (N + 1, nv), closed to the projection tolerance.
        qdot: joint velocities, shape (N + 1, nv), in ``null(K)``.
        qddot: joint accelerations at the samples, shape (N + 1, nv).
        tau: actuator efforts applied at the samples, shape (N + 1, n_a).
    """

    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    qddot: np.ndarray
    tau: np.ndarray


class ForwardDynamics:
    """Constrained forward dynamics of a closed-loop robot (reduced form, module docstring).

    Works on its own copy of ``robot.model`` with ``params`` applied (inertias,
    ``armature`` = ``ia``, ``damping`` = ``fv``, ``friction`` = ``fs``, gravity;
    the offsets ``tau_off`` from the drives); ``robot.model`` is left untouched.

    Args:
        robot: the robot (tree model, closures, differential kinematics).
        params: dynamic parameters (:class:`~pardyn.dynamics.parameters.DynamicParameters`,
            rigid bodies); ``robot.nominal_parameters`` by default.
        coulomb_width: velocity (rad/s or m/s) of the ``tanh`` smoothing of the
            Coulomb friction sign; ``0`` (default) uses the exact ``sign`` of eq. (5).
        tolerance: max |phi| (m, rad) after projection; ``robot.solver.tolerance`` by default.
        max_projection_iterations: Gauss-Newton iterations allowed in :meth:`project`.
    """

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        coulomb_width: float = 0.0,
        tolerance: float | None = None,
        max_projection_iterations: int = 10,
    ) -> None:
        if not (math.isfinite(coulomb_width) and coulomb_width >= 0.0):
            raise InputError(f"coulomb_width must be a finite velocity >= 0 (rad/s, m/s), got {coulomb_width}")
        self.robot = robot
        self.params = robot.nominal_parameters if params is None else params
        self.model = self.params.apply(robot.model.copy())
        self.data = self.model.createData()
        self.closures = robot.closures
        self.differential = robot.differential
        self.nv = robot.model.nv
        self.actuated_indices = np.asarray(robot.actuated_indices, dtype=int)
        self.leg_indices = self.differential.leg_indices
        self.coulomb_width = float(coulomb_width)
        self.offsets = self.params.offset_vector()  # (nv,), N m or N
        self.tolerance = float(robot.solver.tolerance if tolerance is None else tolerance)
        self.max_projection_iterations = int(max_projection_iterations)
        self.terms = InertiaTerms(self.model)  # M(q) (nv, nv), right for estimates with negative masses
        maps = ActuationMaps(robot)
        self._maps = maps if maps.supported and maps.point_free else None  # W, w from one kinematic pass

    # ----------------------------------------------------------------- inputs
    def _vector(self, value: np.ndarray, size: int, what: str) -> np.ndarray:
        array = np.asarray(value, dtype=float)
        if array.shape != (size,):
            raise InputError(f"{self.robot.name}: {what} must have shape ({size},), got {array.shape}")
        if not math.isfinite(array.sum()) and not np.isfinite(array).all():  # one reduction when finite
            raise InputError(f"{self.robot.name}: {what} must be finite, got {array.tolist()}")
        return array

    # --------------------------------------------------------------- friction
    def friction(self, qdot: np.ndarray) -> np.ndarray:
        """Drive friction efforts ``f(qdot)`` of eq. (5), shape (nv,), N m or N.

        ``f = fv * qdot + fs * sign(qdot) + offset`` (``model.damping``, ``model.friction``), with ``sign``
        replaced by ``tanh(qdot / coulomb_width)`` when ``coulomb_width > 0``.
        """
        qdot = np.asarray(qdot, dtype=float)
        if self.coulomb_width > 0.0:
            direction = np.tanh(qdot / self.coulomb_width)
        else:
            direction = np.sign(qdot)
        return self.model.damping * qdot + self.model.friction * direction + self.offsets

    # ---------------------------------------------------------------- dynamics
    def solve(self, q: np.ndarray, qdot: np.ndarray, tau_a: np.ndarray) -> ForwardSolution:
        """Accelerations and closure efforts from the actuator efforts.

        Args:
            q: joint positions (nv,), rad or m, on (or near) the constraint manifold.
            qdot: joint velocities (nv,), in ``null(K(q))``.
            tau_a: actuator efforts (n_a,), N m or N, in ``robot.actuated_names`` order.

        Returns:
            :class:`ForwardSolution` (``qddot`` (nv,), ``xddot`` (n,), ``lambda`` (m,)).

        Raises:
            InputError: wrong shapes or non-finite values, or ``W^T M W`` singular
                (a closed-loop motion without inertia).
            SingularityError: ``K_D`` is singular (serial singularity; near-singular
                states are not detected, check ``robot.solver.conditioning`` if in doubt).
        """
        q = self._vector(q, self.nv, "q")
        qdot = self._vector(qdot, self.nv, "qdot")
        tau_a = self._vector(tau_a, len(self.actuated_indices), "tau_a")
        return self._solve(q, qdot, tau_a)

    def accelerations(self, q: np.ndarray, qdot: np.ndarray, tau_a: np.ndarray) -> np.ndarray:
        """Joint accelerations ``qddot`` (nv,) only; see :meth:`solve`."""
        q = self._vector(q, self.nv, "q")
        qdot = self._vector(qdot, self.nv, "qdot")
        tau_a = self._vector(tau_a, len(self.actuated_indices), "tau_a")
        return self._solve(q, qdot, tau_a, forces=False).qddot

    def _solve(self, q: np.ndarray, qdot: np.ndarray, tau_a: np.ndarray, *, forces: bool = True) -> ForwardSolution:
        """:meth:`solve`; without ``forces`` the closure efforts are not computed (``constraint_forces`` None)."""
        try:
            return self._solve_unchecked(q, qdot, tau_a, forces)
        except np.linalg.LinAlgError as error:
            condition = float(np.linalg.cond(self.closures.jacobian(q)[:, self.leg_indices]))
            if not condition < self.robot.solver.max_condition:
                raise SingularityError(
                    f"{self.robot.name}: serial singularity, the closure Jacobian block K_D is singular "
                    f"(condition number {condition:.3g}) at {self.robot.solver.describe(q)}",
                    kind="serial",
                    condition=condition,
                ) from error
            raise InputError(
                f"{self.robot.name}: the reduced mass matrix W^T M W is singular at "
                f"{self.robot.solver.describe(q)}: the parameters' bodies and rotor inertias (ia) "
                "give no inertia to some closed-loop motion"
            ) from error

    def _solve_unchecked(self, q: np.ndarray, qdot: np.ndarray, tau_a: np.ndarray,
                         forces: bool = True) -> ForwardSolution:
        model, data = self.model, self.data
        mass = self.terms.mass(q)  # (nv, nv), armature on the diagonal
        bias = pin.nonLinearEffects(model, data, q, qdot)  # (nv,) b = C qdot + g
        # K (m, nv), W (nv, n) of eq. (9), w (nv,) of eq. (10)
        if self._maps is not None and not forces:
            jacobian = None
            velocity_map, acceleration_bias = self._maps.maps(q, qdot)
        else:
            jacobian, velocity_map, acceleration_bias = self.differential.maps(q, qdot)
        free = bias + self.friction(qdot) + self.params.spring_torques(q)  # springs: k (q - q_ref), like a bias
        np.negative(free, out=free)
        free[self.actuated_indices] += tau_a  # (nv,) S_a^T tau_a - b - f
        transposed = velocity_map.T
        reduced_mass = transposed @ mass @ velocity_map  # (n, n)
        task_acceleration = solve_regular(reduced_mass, transposed @ (free - mass @ acceleration_bias))
        qddot = velocity_map @ task_acceleration + acceleration_bias
        if not forces:
            return ForwardSolution(qddot=qddot, task_acceleration=task_acceleration, constraint_forces=None)
        legs = self.leg_indices
        residual = mass[legs] @ qddot - free[legs]  # (m,) = K_D^T lambda
        forces = np.linalg.solve(jacobian[:, legs].T, residual)
        return ForwardSolution(qddot=qddot, task_acceleration=task_acceleration, constraint_forces=forces)

    # -------------------------------------------------------------- projection
    def project(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Closest closed state: ``q`` onto ``phi = 0``, then ``qdot`` into ``null(K)``.

        Least-norm Gauss-Newton ``q <- q - K^T (K K^T)^-1 phi`` until
        ``max |phi| <= tolerance``, then ``qdot <- qdot - K^T (K K^T)^-1 K qdot``
        with ``K`` at the projected ``q``. Returns new arrays (nv,), (nv,).

        Raises:
            ConvergenceError: the loops do not close within ``max_projection_iterations``.
        """
        q = np.array(q, dtype=float)
        qdot = np.array(qdot, dtype=float)
        for _ in range(self.max_projection_iterations + 1):
            residual, jacobian = self.closures.residual_and_jacobian(q)
            gram = jacobian @ jacobian.T  # (m, m)
            error = float(np.max(np.abs(residual), initial=0.0))
            if error <= self.tolerance:
                qdot -= jacobian.T @ solve_regular(gram, jacobian @ qdot)
                return q, qdot
            q -= jacobian.T @ solve_regular(gram, residual)
        raise ConvergenceError(
            f"{self.robot.name}: projection onto the closure constraints did not converge in "
            f"{self.max_projection_iterations} iterations (closure residual {error:.3g} > {self.tolerance:.3g}); "
            f"configuration {self.robot.solver.describe(q)}"
        )


def held_step(dynamics: ForwardDynamics, tau: np.ndarray, q: np.ndarray, qdot: np.ndarray,
              dt: float) -> tuple[np.ndarray, np.ndarray]:
    """One step of :func:`simulate` with the efforts ``tau`` (n_a,) held: RK4 then projection, from a closed
    state ``q, qdot`` (nv,) (already projected). The same arithmetic as :func:`simulate`'s step, without what a
    one-step :func:`simulate` adds (the initial projection of a closed state, the accelerations at the end):
    4 evaluations and 1 projection instead of 5 and 2. Returns the next closed state (nv,), (nv,)."""
    half = 0.5 * dt
    a1 = dynamics._solve(q, qdot, tau, forces=False).qddot
    v1 = qdot
    v2 = qdot + half * a1
    a2 = dynamics._solve(q + half * v1, v2, tau, forces=False).qddot
    v3 = qdot + half * a2
    a3 = dynamics._solve(q + half * v2, v3, tau, forces=False).qddot
    v4 = qdot + dt * a3
    a4 = dynamics._solve(q + dt * v3, v4, tau, forces=False).qddot
    q = q + (dt / 6.0) * (v1 + 2.0 * v2 + 2.0 * v3 + v4)
    qdot = qdot + (dt / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    return dynamics.project(q, qdot)


def simulate(
    dynamics: ForwardDynamics,
    torque: TorqueFunction,
    q0: np.ndarray,
    qdot0: np.ndarray,
    *,
    duration: float,
    dt: float,
) -> Trajectory:
    """Integrate the closed-loop dynamics with fixed-step RK4 and projection.

    Each step of ``dt`` is one classical Runge-Kutta 4 step of
    ``d/dt (q, qdot) = (qdot, qddot(q, qdot, tau(t, q, qdot)))`` (``tau`` is
    called at the four stages, so it should be continuous in time; hold a
    sampled command yourself for a zero-order hold), followed by
    :meth:`ForwardDynamics.project`. The initial state is projected too.
    RK4 assumes smooth dynamics: with Coulomb friction, build ``dynamics`` with
    a ``coulomb_width`` (the exact ``sign`` chatters around zero velocity) and
    take ``dt`` well below ``armature * coulomb_width / friction``.

    Args:
        dynamics: the constrained forward dynamics of the robot.
        torque: ``tau(t, q, qdot) -> (n_a,)`` actuator efforts, N m or N.
        q0, qdot0: initial state (nv,), rad (m), rad/s (m/s).
        duration: simulated time, s; ``round(duration / dt)`` steps are taken.
        dt: fixed time step, s.

    Returns:
        :class:`Trajectory` with the samples at ``t = k dt``, k = 0..N.
    """
    if not (math.isfinite(dt) and dt > 0.0):
        raise InputError(f"dt must be a positive time step (s), got {dt}")
    if not (math.isfinite(duration) and duration >= 0.0):
        raise InputError(f"duration must be a time >= 0 (s), got {duration}")
    nv = dynamics.nv
    n_a = len(dynamics.actuated_indices)
    steps = int(round(duration / dt))
    q, qdot = dynamics.project(dynamics._vector(q0, nv, "q0"), dynamics._vector(qdot0, nv, "qdot0"))

    times = dt * np.arange(steps + 1)
    positions = np.empty((steps + 1, nv))
    velocities = np.empty((steps + 1, nv))
    accelerations = np.empty((steps + 1, nv))
    efforts = np.empty((steps + 1, n_a))

    def evaluate(t: float, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tau = dynamics._vector(torque(t, q, qdot), n_a, f"torque(t={t:.6g})")
        return dynamics._solve(q, qdot, tau, forces=False).qddot, tau

    half = 0.5 * dt
    for k in range(steps + 1):
        t = times[k]
        a1, tau = evaluate(t, q, qdot)
        positions[k], velocities[k], accelerations[k], efforts[k] = q, qdot, a1, tau
        if k == steps:
            break
        v1 = qdot
        v2 = qdot + half * a1
        a2, _ = evaluate(t + half, q + half * v1, v2)
        v3 = qdot + half * a2
        a3, _ = evaluate(t + half, q + half * v2, v3)
        v4 = qdot + dt * a3
        a4, _ = evaluate(t + dt, q + dt * v3, v4)
        q = q + (dt / 6.0) * (v1 + 2.0 * v2 + 2.0 * v3 + v4)
        qdot = qdot + (dt / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        q, qdot = dynamics.project(q, qdot)
    return Trajectory(t=times, q=positions, qdot=velocities, qddot=accelerations, tau=efforts)
