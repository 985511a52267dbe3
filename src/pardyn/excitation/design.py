"""Exciting trajectories for identification: the design of finite Fourier series in task coordinates.

The trajectories are :class:`pardyn.excitation.fourier.FourierTrajectory` (Swevers et al.'s
classical parametrization, faded in and out). They are chosen for identification: the criterion is
the condition number of the base-parameter observation matrix (DualV paper eqs. 41-43), so the
design lives here, with the base parameters it ranks by.

:func:`design_exciting_trajectory` draws seeded random coefficients, keeps
the candidates that stay inside the workspace and away from singularities
(every sample solved by the inverse problem with a strict condition-number
limit) within the velocity and acceleration limits, and returns the one whose
observation matrix (restricted to the base parameters, DualV paper eqs. 41-43)
has the smallest condition number, the usual excitation criterion.

With ``optimize=True`` the coefficients of the best random candidates are then
*optimised* (UR5e paper Sect. 6, point 2; Swevers et al. 1997; FIGAROH and BIRDy
do the same), :func:`optimize_fourier_coefficients`::

    minimise    log cond(W_b(a, b))                   over the coefficients a_jk, b_jk
    subject to  |x_j(t) - c_j| <= amplitude_j,  |xdot_j(t)| <= max_velocity_j,
                |xddot_j(t)| <= max_acceleration_j     on a time grid (ramps included)

                log max_condition - log kappa(q(t)) >= 0       (kappa: worst closure-Jacobian condition
                                                                number, away from singularities)
                1 - angle_g(q(t)) / max_g >= 0                 for each cone group g of the robot YAML's
                                                                ``limits: cones:`` (U and S joints)

by SLSQP. Positions, velocities and accelerations are *linear* in the
coefficients (the envelope is fixed), so the limits are linear inequalities
with exact Jacobians, evaluated on a grid of ``GRID_PER_PERIOD`` samples per
period of the highest harmonic over the fade-in, one period of the steady
part (which is periodic) and the fade-out, tightened by ``LIMIT_SAFETY`` so
that no peak between grid points exceeds a limit. The objective's gradient is
by finite differences (the kinematics of parallel robots are solved at each
sample), and so are the Jacobians of the singularity and joint-cone constraints
(nonlinear in the coefficients; one solve per point serves the objective and all
constraints); an evaluation that leaves the workspace counts as infeasible, and the
best evaluation within every limit is returned. The limits are on
the task coordinates (the actuated/platform coordinates of a parallel robot;
for a serial robot whose task coordinates are its joints, on the joints).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize

from pardyn.errors import InputError, KinematicsError
from pardyn.identification.base_parameters import base_parameters, symmetric_order
from pardyn.identification.filtering import stack_equations
from pardyn.distributed import parallel_map
from pardyn.excitation.fourier import FourierTrajectory
from pardyn.trajectories.task import _vector

if TYPE_CHECKING:
    from pardyn.dynamics.regressor import Regressor
    from pardyn.kinematics.cones import ConeAngles
    from pardyn.robot import Robot

__all__ = [
    "GRID_PER_PERIOD",
    "LIMIT_SAFETY",
    "ExcitingDesign",
    "FourierOptimization",
    "design_exciting_trajectory",
    "optimize_fourier_coefficients",
]

GRID_PER_PERIOD = 64
"""Limit-check samples per period of the highest harmonic (a peak between samples is < 0.2 % higher)."""

LIMIT_SAFETY = 0.99
"""Fraction of each limit imposed on the grid (the margin for peaks between grid points)."""



@dataclass(frozen=True)
class ExcitingDesign:
    """The chosen trajectory and the figures that chose it.

    Attributes:
        trajectory: the Fourier trajectory.
        condition_number: cond of the base-parameter observation matrix over one period.
        base_parameter_count: number of base parameters (columns kept by QR).
        max_kinematic_condition: worst serial/parallel condition number along one period.
        candidates_tried, candidates_feasible: how many random draws, and how many stayed feasible.
        random_condition_number: cond of the best random candidate (before optimisation).
        optimization: the optimisations' figures (``optimize=True``), else ``None``.
    """

    trajectory: FourierTrajectory
    condition_number: float
    base_parameter_count: int
    max_kinematic_condition: float
    candidates_tried: int
    candidates_feasible: int
    random_condition_number: float = math.nan
    optimization: tuple[FourierOptimization, ...] | None = None


@dataclass(frozen=True)
class FourierOptimization:
    """Result of :func:`optimize_fourier_coefficients`.

    Attributes:
        start: the trajectory optimised from; trajectory: the optimised one (best feasible evaluation).
        condition_before, condition_after: cond of the start and of the result.
        iterations: SLSQP iterations; evaluations: objective evaluations (finite differences included);
        infeasible: evaluations that left the workspace or neared a singularity.
        message: SLSQP's exit message; seconds: wall time (s).
    """

    start: FourierTrajectory
    trajectory: FourierTrajectory
    condition_before: float
    condition_after: float
    iterations: int
    evaluations: int
    infeasible: int
    message: str
    seconds: float


# Largest |s'| and |s''| of the quintic law on [0, 1] (at tau = 1/2 and tau = 1/2 -+ sqrt(3)/6).
_QUINTIC_MAX_RATE = 15.0 / 8.0
_QUINTIC_MAX_CURVATURE = 10.0 / math.sqrt(3.0)


def _scaled_coefficients(
    rng: np.random.Generator, count: int, harmonics: int, amplitude: np.ndarray,
    max_velocity: np.ndarray, max_acceleration: np.ndarray, *, pulsation: float, ramp_s: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Random coefficients (1/k decay) scaled so that the worst case of the sum respects every bound.

    With ``|d| <= P``, ``|ddot| <= V``, ``|dddot| <= A`` and the envelope's
    ``|edot| <= 15/8 / ramp``, ``|eddot| <= 10/sqrt(3) / ramp^2``, the product
    rule bounds the trajectory everywhere, ramps included:
    ``|xdot| <= V + P edot_max``, ``|xddot| <= A + 2 V edot_max + P eddot_max``.
    """
    decay = 1.0 / np.arange(1, harmonics + 1)
    sine = rng.normal(size=(count, harmonics)) * decay
    cosine = rng.normal(size=(count, harmonics)) * decay
    k = np.arange(1, harmonics + 1)
    position = np.abs(sine).sum(1) + 2 * np.abs(cosine).sum(1)
    velocity = ((np.abs(sine) + np.abs(cosine)) * k * pulsation).sum(1)
    acceleration = ((np.abs(sine) + np.abs(cosine)) * (k * pulsation) ** 2).sum(1)
    rate, curvature = _QUINTIC_MAX_RATE / ramp_s, _QUINTIC_MAX_CURVATURE / ramp_s**2
    scale = np.minimum.reduce([
        amplitude / position,
        max_velocity / (velocity + rate * position),
        max_acceleration / (acceleration + 2 * rate * velocity + curvature * position),
    ])
    return sine * scale[:, None], cosine * scale[:, None]


def _limit_grid(trajectory: FourierTrajectory) -> np.ndarray:
    """Times (s) covering the fade-in, one steady period and the fade-out, ``GRID_PER_PERIOD`` per shortest period."""
    step = 1.0 / (GRID_PER_PERIOD * trajectory.harmonics * trajectory.base_frequency_hz)
    period = 1.0 / trajectory.base_frequency_hz
    end = trajectory.duration_s
    if end <= 2 * trajectory.ramp_s + period:
        return np.arange(0.0, end + step, step).clip(max=end)
    head = np.arange(0.0, trajectory.ramp_s + period + step, step)
    tail = np.arange(end - trajectory.ramp_s, end + step, step).clip(max=end)
    return np.concatenate([head, tail])


def _unit_basis(trajectory: FourierTrajectory, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity, acceleration of each unit coefficient ``[a_1..a_H, b_1..b_H]``: 3 x (T, 2H).

    The trajectory is linear in its coefficients: ``x_j - c_j = P [a_j; b_j]``, and so on.
    """
    harmonics = trajectory.harmonics
    identity = np.eye(2 * harmonics)
    unit = FourierTrajectory(np.zeros(2 * harmonics), identity[:, :harmonics], identity[:, harmonics:],
                             base_frequency_hz=trajectory.base_frequency_hz, duration_s=trajectory.duration_s,
                             ramp_s=trajectory.ramp_s)
    samples = unit.evaluate(times)
    return samples.position, samples.velocity, samples.acceleration


def optimize_fourier_coefficients(
    start: FourierTrajectory,
    observation: Callable[[FourierTrajectory], np.ndarray],
    *,
    amplitude: Sequence[float],
    max_velocity: Sequence[float],
    max_acceleration: Sequence[float],
    max_iterations: int = 50,
    infeasible: type[Exception] | tuple[type[Exception], ...] = KinematicsError,
    constraints: Callable[[FourierTrajectory], np.ndarray] | None = None,
) -> FourierOptimization:
    """Fourier coefficients minimising the condition number of ``observation`` within the limits (SLSQP).

    Args:
        start: a feasible trajectory (its centre, frequency, duration and ramps are kept; its
            coefficients are shrunk first if they exceed ``LIMIT_SAFETY`` of a limit on the grid).
        observation: the (base-parameter) observation matrix (rows, n_b) of a trajectory; raises
            ``infeasible`` where the trajectory cannot be followed (workspace, singularity).
        amplitude, max_velocity, max_acceleration: limits per coordinate (n,) on ``|x - c|``,
            ``|xdot|``, ``|xddot|`` (m, rad; per s; per s^2).
        max_iterations: SLSQP iterations.
        infeasible: the exception types that mark an infeasible evaluation.
        constraints: nonlinear constraints ``g(trajectory) >= 0`` (m,), called right after ``observation``
            on the same trajectory (so it may reuse that evaluation's kinematics); SLSQP constraints with
            finite-difference Jacobians.

    Returns:
        :class:`FourierOptimization` (the best feasible evaluation, never worse than ``start``).
    """
    n, harmonics = start.sine.shape
    limits = [_vector(v, label) for v, label in (
        (amplitude, "amplitude"), (max_velocity, "max_velocity"), (max_acceleration, "max_acceleration"))]
    if any(limit.size != n for limit in limits):
        raise InputError(f"amplitude and rate limits need {n} values, one per coordinate")
    clock = time.perf_counter()
    scale = np.repeat(limits[0], 2 * harmonics)  # coefficients in units of the coordinate's amplitude
    basis = _unit_basis(start, _limit_grid(start))  # 3 x (T, 2H)
    # |M z| <= bound, z the scaled coefficients [a_j1 .. a_jH, b_j1 .. b_jH] of each coordinate j: (3 T n, 2 H n)
    matrix = np.vstack([np.kron(np.eye(n), unit) for unit in basis]) * scale
    bound = LIMIT_SAFETY * np.concatenate([np.repeat(limit, len(unit)) for limit, unit in zip(limits, basis)])

    def trajectory_of(z: np.ndarray) -> FourierTrajectory:
        coefficients = (z * scale).reshape(n, 2 * harmonics)
        return FourierTrajectory(start.start, coefficients[:, :harmonics], coefficients[:, harmonics:],
                                 base_frequency_hz=start.base_frequency_hz, duration_s=start.duration_s,
                                 ramp_s=start.ramp_s)

    z0 = np.hstack([start.sine, start.cosine]).reshape(-1) / scale
    # a start above LIMIT_SAFETY of a limit on the grid (e.g. scaled to the limit itself) is shrunk inside
    z0 = z0 * min(1.0, 1.0 / max(float(np.max(np.abs(matrix @ z0) / bound)), np.finfo(float).tiny))
    counts = {"evaluations": 0, "infeasible": 0}
    best: dict[str, object] = {}
    penalty = [0.0]
    cache: dict[bytes, tuple[float | None, np.ndarray | None]] = {}  # one evaluation per point

    def evaluate(z: np.ndarray) -> tuple[float | None, np.ndarray | None]:
        key = np.asarray(z, dtype=float).tobytes()
        if key in cache:
            return cache[key]
        counts["evaluations"] += 1
        trajectory = trajectory_of(z)
        try:
            value = math.log(np.linalg.cond(observation(trajectory)))
            margins = None if constraints is None else np.asarray(constraints(trajectory), dtype=float)
        except infeasible:
            value, margins = None, None
        if value is None or not math.isfinite(value):
            counts["infeasible"] += 1
            value, margins = None, None
        within = bool(np.all(np.abs(matrix @ z) <= bound * (1.0 + 1e-9)))
        within = within and (margins is None or bool(np.all(margins >= 0.0)))
        if value is not None and within and value < best.get("value", math.inf):
            best.update(value=value, trajectory=trajectory)
        cache[key] = (value, margins)
        return value, margins

    def objective(z: np.ndarray) -> float:
        value = evaluate(z)[0]
        return penalty[0] if value is None else value

    initial, margins = evaluate(z0)
    if "value" not in best:
        raise InputError("the start trajectory is infeasible or outside the limits: optimise from a feasible one")
    penalty[0] = initial + 10.0  # an infeasible evaluation is e^10 times worse than the start
    linear = [{"type": "ineq", "fun": lambda z: bound - matrix @ z, "jac": lambda z: -matrix},
              {"type": "ineq", "fun": lambda z: bound + matrix @ z, "jac": lambda z: matrix}]
    if constraints is not None:
        size = 0 if margins is None else margins.size

        def nonlinear(z: np.ndarray) -> np.ndarray:
            found = evaluate(z)[1]
            return -np.ones(size) if found is None else found  # an infeasible point violates them all

        linear.append({"type": "ineq", "fun": nonlinear})
    solution = optimize.minimize(objective, z0, method="SLSQP", constraints=linear,
                                 options={"maxiter": int(max_iterations), "ftol": 1e-10})
    evaluate(solution.x)  # the final point counts if within every limit
    return FourierOptimization(
        start=start, trajectory=best["trajectory"], condition_before=math.exp(initial), condition_after=math.exp(best["value"]),
        iterations=int(solution.get("nit", 0)), evaluations=counts["evaluations"], infeasible=counts["infeasible"],
        message=str(solution.message), seconds=time.perf_counter() - clock,
    )


def _period_observation(
    robot: Robot, regressor: Regressor, columns: np.ndarray | None, trajectory: FourierTrajectory,
    times: np.ndarray, max_condition: float, starts: np.ndarray | None = None, cones: ConeAngles | None = None,
) -> tuple[np.ndarray, float, np.ndarray]:
    """Observation matrix of one steady period (no envelope), the worst kinematic condition number, ``q``.

    Every sample is solved by the inverse problem, warm started from ``starts``
    (N, nv) (e.g. a nearby trajectory's solution) or else from the previous sample;
    raises :class:`KinematicsError` outside the workspace, past ``max_condition`` or, with
    ``cones``, past a U/S joint's cone limit. Columns ``columns`` (base parameters) only, unless ``None``.
    """
    d, ddot, dddot = trajectory.series(times)
    q = np.empty((times.size, robot.nv))
    worst = 0.0
    start = robot.home
    for k in range(times.size):
        solution = robot.solve_inverse(trajectory.start + d[k], start=start if starts is None else starts[k])
        worst = max(worst, *solution.conditioning.values())
        if worst > max_condition:
            raise KinematicsError(f"condition number {worst:.3g} > {max_condition:.3g}")
        q[k] = start = solution.q
    if cones is not None and len(cones):
        outside = {group: ratio for group, ratio in cones.worst_ratios(q).items() if ratio > 1.0}
        if outside:
            raise KinematicsError(f"joint cones exceeded (angle / limit): {outside}")
    qdot = np.empty_like(q)
    qddot = np.empty_like(q)
    for k in range(times.size):
        _, qdot[k], qddot[k] = robot.differential.task_states(q[k], ddot[k], dddot[k])
    observation = stack_equations(np.zeros((times.size, regressor.rows)), regressor.matrix(q, qdot, qddot)).W
    return (observation if columns is None else observation[:, columns]), worst, q


def _optimize_start(shared: tuple, start: FourierTrajectory) -> FourierOptimization:
    """One restart of the optimisation (a task of :mod:`pardyn.distributed`): SLSQP from ``start``."""
    robot, regressor, columns, times, max_condition, cones, bounds, max_iterations = shared
    warm: list[np.ndarray | None] = [None]  # the last feasible evaluation's states: finite
    # differences move the coefficients by ~1e-8, so Newton starts next to the solution
    last: dict[str, object] = {}

    def observe(candidate: FourierTrajectory) -> np.ndarray:
        # no condition bound here: the constraints below see the worst value (a gradient, not a wall)
        observation, worst_kappa, warm[0] = _period_observation(robot, regressor, columns, candidate, times,
                                                                math.inf, starts=warm[0])
        last.update(trajectory=candidate, kappa=worst_kappa, q=warm[0])
        return observation

    def margins(candidate: FourierTrajectory) -> np.ndarray:
        """``log max_condition - log kappa`` and ``1 - angle / max`` per cone group (>= 0 within the limits)."""
        if last.get("trajectory") is not candidate:  # called right after observe (optimize_fourier_coefficients)
            observe(candidate)
        values = [math.log(max_condition) - math.log(last["kappa"])]
        if cones is not None and len(cones):
            values += [1.0 - ratio for ratio in cones.worst_ratios(last["q"]).values()]
        return np.array(values)

    return optimize_fourier_coefficients(start, observe, amplitude=bounds[0], max_velocity=bounds[1],
                                         max_acceleration=bounds[2], max_iterations=max_iterations,
                                         constraints=margins)


def _ranked_candidates(
    robot: Robot, regressor: Regressor, trajectories: Sequence[FourierTrajectory], times: np.ndarray,
    max_condition: float, cones: ConeAngles | None, *, amplitude: np.ndarray,
) -> tuple[list[tuple[float, FourierTrajectory, float]], np.ndarray]:
    """The feasible candidates as ``(cond W_b, trajectory, worst kinematic condition)``, best first, and the
    base columns (from the first feasible candidate's observation matrix, eq. 43's order).

    Raises:
        KinematicsError: no candidate stayed feasible (the message says why and what to reduce).
    """
    columns = None
    ranked: list[tuple[float, FourierTrajectory, float]] = []
    rejected: list[str] = []
    for trajectory in trajectories:
        # One full period of the series without the envelope: what the steady part excites.
        try:
            observation, worst, _ = _period_observation(robot, regressor, None, trajectory, times, max_condition,
                                                        cones=cones)
        except KinematicsError as error:
            rejected.append(str(error))
            continue
        if columns is None:
            base = base_parameters(observation, names=regressor.names, order=symmetric_order(regressor.names))
            columns = base.independent
        ranked.append((float(np.linalg.cond(observation[:, columns])), trajectory, worst))
    if not ranked:
        outside = [reason for reason in rejected if reason.startswith("joint cones")]
        raise KinematicsError(
            f"none of {len(trajectories)} exciting-trajectory candidates stayed in the workspace with condition "
            f"numbers below {max_condition:g}" + (f" and the joint cones ({len(outside)} exceeded them, e.g. "
                                                   f"{outside[0].split(': ', 1)[1]})" if outside else "")
            + f": reduce the amplitude {amplitude.tolist()}"
        )
    ranked.sort(key=lambda item: item[0])
    return ranked, columns


def design_exciting_trajectory(
    robot: Robot,
    *,
    amplitude: Sequence[float],
    max_velocity: Sequence[float],
    max_acceleration: Sequence[float],
    duration_s: float = 60.0,
    base_frequency_hz: float = 0.2,
    harmonics: int = 5,
    ramp_s: float = 1.0,
    center: Sequence[float] | None = None,
    candidates: int = 12,
    seed: int = 0,
    check_rate_hz: float = 25.0,
    max_condition: float = 1e3,
    projection: str | None = None,
    optimize: bool = False,
    optimize_starts: int = 1,
    max_iterations: int = 50,
    joint_cones: bool = True,
    workers: int | None = None,
) -> ExcitingDesign:
    """Draw ``candidates`` Fourier trajectories, keep the best-exciting feasible one, optionally optimise it.

    Args:
        robot: the robot (its nominal dynamic parameters define the regressor layout).
        amplitude: largest deviation from the centre per task coordinate (n,) (m, rad).
        max_velocity, max_acceleration: bounds per task coordinate (n,) (per s, per s^2);
            the random series are scaled so that their worst case respects them.
        duration_s: total duration (s); ``base_frequency_hz``: fundamental (Hz);
            ``harmonics``: number of harmonics H; ``ramp_s``: fade in/out (s).
        center: rest pose (n,), the robot's home by default.
        candidates: random draws; ``seed``: their generator seed (reproducible).
        check_rate_hz: sampling of one period for the feasibility and excitation checks (Hz).
        max_condition: strictest closure-Jacobian condition number accepted along the way
            (keeps away from serial and parallel singularities).
        projection: identification model of the excitation criterion (see
            :class:`pardyn.dynamics.regressor.Regressor`), its default by default.
        optimize: optimise the coefficients of the ``optimize_starts`` best random candidates
            (:func:`optimize_fourier_coefficients`, ``max_iterations`` SLSQP iterations each)
            and keep the best result; ``max_condition`` and the cones are then SLSQP constraints.
        joint_cones: keep the passive U/S joints within the robot YAML's ``limits: cones:``
            (:class:`pardyn.kinematics.cones.ConeAngles`), for the draws and the optimisation.
        workers: the ``optimize_starts`` restarts run as tasks of :mod:`pardyn.distributed` (``None``: one
            worker per core, or the enclosing engine; 1: one after the other in this process).

    Raises:
        KinematicsError: no candidate stayed feasible (smaller amplitudes needed).
    """
    from pardyn.dynamics.regressor import Regressor  # noqa: PLC0415 - heavy, on demand
    from pardyn.kinematics.cones import ConeAngles  # noqa: PLC0415

    n = len(robot.task_names)
    bounds = [_vector(v, label) for v, label in (
        (amplitude, "amplitude"), (max_velocity, "max_velocity"), (max_acceleration, "max_acceleration"))]
    if any(b.size != n for b in bounds):
        raise InputError(f"amplitude and rate bounds need {n} values ({list(robot.task_names)})")
    center = robot.task_values(robot.home) if center is None else _vector(center, "center")
    rng = np.random.default_rng(seed)
    pulsation = 2 * math.pi * base_frequency_hz
    regressor = Regressor(robot, projection=projection)
    period = 1.0 / base_frequency_hz
    # enough samples of one period for the QR of the observation matrix (3x its columns)
    count = max(int(math.ceil(period * check_rate_hz)), int(math.ceil(3 * regressor.size / regressor.rows)))
    times = np.linspace(0.0, period, count, endpoint=False)
    cones = ConeAngles(robot) if joint_cones else None
    draws = [
        _scaled_coefficients(rng, n, harmonics, *bounds, pulsation=pulsation, ramp_s=ramp_s) for _ in range(candidates)
    ]
    trajectories = [FourierTrajectory(center, sine, cosine, base_frequency_hz=base_frequency_hz,
                                      duration_s=duration_s, ramp_s=ramp_s) for sine, cosine in draws]
    ranked, columns = _ranked_candidates(robot, regressor, trajectories, times, max_condition, cones,
                                         amplitude=bounds[0])
    condition, trajectory, worst = ranked[0]
    random_condition = condition
    runs = None
    if optimize:
        starts = [start for _, start, _ in ranked[:max(1, optimize_starts)]]
        shared = (robot, regressor, columns, times, max_condition, cones, bounds, max_iterations)
        runs = tuple(parallel_map(_optimize_start, shared, starts, workers=workers,
                                  label=f"optimising {len(starts)} starts" if len(starts) > 1 else None))
        chosen = min(runs, key=lambda run: run.condition_after)
        if chosen.condition_after < condition:
            condition, trajectory = chosen.condition_after, chosen.trajectory
            worst = _period_observation(robot, regressor, columns, trajectory, times, max_condition, cones=cones)[1]
    return ExcitingDesign(trajectory, condition, len(columns), worst, candidates, len(ranked),
                          random_condition_number=random_condition, optimization=runs)
