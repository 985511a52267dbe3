"""From recorded bags to identified, validated dynamic parameters.

The recipe of Briot et al. 2015 (section 4) and of the UR5e paper (sections 3-5),
for closed-loop and actuation-redundant robots:

1. **Read** ``joint_states`` (measured positions, actuator efforts) from each bag, or a
   series read from CSV files (:mod:`pardyn.identification.sources`: any rosbag2 bag and
   topic, jittered stamps resampled, names mapped, motor side to joint side through the
   robot's ``transmissions:``, units checked; exact retransmissions of a state, as the
   lockstep ``sim`` sends while it waits, are dropped). Problems that do not stop the
   identification (unreported efforts, another unit) become notes of the report
   (:mod:`pardyn.identification.diagnostics`).
   With ``rotor_model`` (two encoders per joint, UR5e paper section 3.1) the efforts
   ``K_tau i`` become the link-side torques ``K_tau i - B thetaddot - tau_f`` from the
   motor topic, sample by sample (:mod:`pardyn.identification.rotor_compensation`).
2. **Derivatives**: zero-phase Butterworth low-pass of the measured positions,
   central differences (eq. 39's band-pass estimates); cut-off
   ``bandwidth_factor`` (5) times the dynamics bandwidth, the frequency below
   which 99 % of the position signal's power lies, capped by the decimation
   cut-off. ``trim_s`` (default ``1.5 / cutoff``) is dropped at both ends.
3. **Closed loops**: every tree coordinate from the measured joints (forward
   problem, least-squares fit of redundant readings), every joint rate from the
   measured ones (eqs. 21, 24); for a whole bag at once where
   :mod:`pardyn.kinematics.batch` applies (every ``CHECK_EVERY``-th sample solved in
   turn with its branch and conditioning checked, the others in numpy passes).
4. **Observation matrix** of the chosen model (:class:`pardyn.dynamics.regressor.Regressor`):
   ``standard`` (eq. 19), ``case1`` (torques projected on the platform, eq. 30)
   or ``case2`` (n - r actuators projected on the others, eq. 36), with the
   payload columns of eq. 38.
5. **Parallel filtering and decimation** (eq. 40) by ``n_d`` (``decimation``),
   in two stages so that the model is evaluated at ``model_rate_hz`` rather
   than at every sample: the efforts are low-passed (zero phase, 0.8 of the
   model rate's Nyquist frequency) and the model evaluated every ``n_1``
   samples, on states band-limited well below that rate; then ``Y`` and every
   column of ``W`` go through the same low-pass (cut-off ``0.8 f_m / (2 n_d)``)
   and one sample in ``n_2 = n_d / n_1`` is kept.
6. **Base parameters** by QR with the symmetric column order of eq. (43);
   loaded and unloaded bags stacked as eq. (49) when a payload is identified.
7. **WLS** (eq. 48), standard deviations (eqs. 45-47), **essential parameters**
   (iterative removal until ``max/min %sigma < r_sigma``, or until the next removal
   would let the fit error grow beyond ``1 + essential_tolerance`` times the base
   model's). A model whose fit collapsed (relative error norm above
   ``max_fit_error``, or an essential model outside the tolerance) is refused
   (:class:`~pardyn.identification.errors.FitCollapsedError`): nothing is written.
8. **Physically consistent estimate** (``settings.physical``, UR5e paper Sect. 6 point 3):
   standard parameters with every body's pseudo-inertia positive definite and
   friction >= 0 (of either sign after rotor compensation: residuals of the rotor
   model), fitted to the same weighted system
   (:mod:`pardyn.identification.physical`), reported beside the unconstrained one.
9. **Validation** on other bags: actuator torques predicted by the identified
   (essential) model -- the minimum-norm, zero-internal-stress torques on a
   redundant robot, as the paper's Table 3 -- against the measured ones, and
   the same for the nominal (CAD) model (and the physically consistent one).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from threadpoolctl import threadpool_limits

from pardyn.bags.errors import BagError
from pardyn.bags.joint_states import JointStateSeries
from pardyn.bags.resample import DEFAULT_MAX_GAP
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.dynamics.regressor import Regressor
from pardyn.dynamics.rotor import RotorModel
from pardyn.dynamics.transmission import Transmission
from pardyn.errors import InputError, KinematicsError, SampleError
from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.errors import FitCollapsedError, MissingRecordingError
from pardyn.identification.diagnostics import effort_notes, scale_notes
from pardyn.identification.estimation import (
    DEFAULT_FIT_TOLERANCE,
    EssentialParameters,
    Estimate,
    LinearSystem,
    essential_parameters,
    payload_system,
    stack_systems,
    wls,
)
from pardyn.identification.estimators import ESTIMATORS, EstimatorResult
from pardyn.identification.estimators import estimate as estimate_by
from pardyn.identification.filtering import decimate, decimation_cutoff_hz, estimate_derivatives, zero_phase_lowpass
from pardyn.identification.metrics import nmse, relative_error_norm, relative_error_norms
from pardyn.identification.rotor_compensation import MOTOR_TOPIC, compensate_bag_torques
from pardyn.identification.simulation import ClosedLoopSetup, ModelSimulator
from pardyn.identification.selection import drop_slow_samples
from pardyn.identification.sources import Source, joint_side_series
from pardyn.kinematics import batch as closed_loop_batch
from pardyn.parallel import fork_map
from pardyn.progress import progress

if TYPE_CHECKING:
    from pardyn.identification.physical import PhysicalEstimate
    from pardyn.robot import Robot

__all__ = [
    "CHECK_EVERY",
    "MODELS",
    "BagData",
    "IdentificationResult",
    "IdentificationSettings",
    "Validation",
    "identify",
    "prepare_bag",
]

CHECK_EVERY = 10
"""Along a bag, the closed-loop solution's branch and conditioning are checked every this many samples."""

MODELS = {"standard": "standard", "case1": "platform", "case2": "actuators"}
"""Identification models: CLI name -> :class:`Regressor` projection."""


@dataclass(frozen=True)
class IdentificationSettings:
    """Every setting of the pipeline; the defaults are the papers' recipe.

    Attributes:
        model: ``"standard"``, ``"case1"``, ``"case2"`` or ``"auto"`` (standard for
            non-redundant robots, case 1 for redundant ones, the paper's preference).
        projected: case 2: actuated joints projected on the others (default: the last n - r).
        topic: the JointState topic of the bags.
        cutoff_hz: derivative low-pass cut-off (Hz); ``None``: ``bandwidth_factor`` x bandwidth.
        bandwidth_hz: dynamics bandwidth (Hz); ``None``: from the recorded positions.
        bandwidth_factor: cut-off / bandwidth (5, UR5e paper section 4.1).
        filter_order: Butterworth order of every low-pass.
        decimation: total decimation factor n_d (eq. 40; 20 in the UR5e paper).
        model_rate_hz: rate at which the model is evaluated before the last decimation stage.
        trim_s: time dropped at both ends of each bag (s); ``None``: ``1.5 / cutoff``.
        effort_delay_s: age of the effort samples (s): an effort stamped ``t`` is the
            torque at ``t - effort_delay_s``. ``None``: half a sampling period, the
            convention of pardyn's ``sim`` node and of drives that report the torque
            held over the control period ending at the stamp; 0 for drives that
            report the instantaneous current.
        rank_eps: QR rank threshold of eq. (42), relative to the largest |R_jj|.
        r_sigma: stop ratio of the essential-parameter loop.
        essential_tolerance: the essential model's relative error norm may exceed the base
            model's by this fraction at most (0.05: 5 %; the loop stops before it would).
        max_fit_error: a written model (base or essential) whose relative error norm on its
            own data exceeds this (0.5: half the measured torque unexplained) is refused.
        parameters: the model written out and validated: ``"essential"`` (the paper's
            simplified model) or ``"base"`` (every base parameter).
        workers: bags prepared in parallel (forked processes); ``None``: one per core.
        physical: also estimate physically consistent standard parameters (every body's
            pseudo-inertia positive definite, friction >= 0 unless ``rotor_model`` compensates;
            :mod:`pardyn.identification.physical`)
            and report them beside the unconstrained estimate.
        rotor_model: rotor dynamics compensation (UR5e paper, sections 2-3.1): the efforts
            become ``K_tau i - B thetaddot - tau_f`` from the motor encoders of ``motor_topic``
            (:mod:`pardyn.identification.rotor_compensation`); ``None``: efforts used as recorded.
        motor_topic: JointState topic of the motor-side encoders (rotor positions reflected).
        estimator: ``"wls"`` (IDIM-WLS), ``"iv"`` (IDIM-IV) or ``"didim"`` (DIDIM)
            (:mod:`pardyn.identification.estimators`; the last two simulate the model in closed
            loop with the controller: ``identify(..., closed_loop=...)``).
        estimator_start: DIDIM's first estimate: ``"wls"`` or ``"nominal"``.
        estimator_tolerance, estimator_iterations: stopping rule of IV and DIDIM.
        joint_map: ``((name in the data, robot joint or motor name), ...)``: renames the data's joints.
        transmission: motor-side data -> joint side, and the coupled motors' own regressor columns
            (:mod:`pardyn.dynamics.transmission`); ``None``: the data are on the joint side.
        min_speed: per actuated joint, the speed (rad/s, m/s) below which its equations are dropped
            after decimation (:mod:`pardyn.identification.selection`); ``None``: all kept.
        max_gap: longest interval between stamps that is resampled, in median intervals
            (:func:`pardyn.bags.resample.resample_uniform`).
        batch_kinematics: solve a bag's closed-loop states in numpy passes over its samples
            (:mod:`pardyn.kinematics.batch`) where that applies; ``False``: sample by sample, the
            reference path (same equations and stopping rules, answers equal to the solver's tolerance).
    """

    model: str = "auto"
    projected: tuple[str, ...] | None = None
    topic: str = "joint_states"
    cutoff_hz: float | None = None
    bandwidth_hz: float | None = None
    bandwidth_factor: float = 5.0
    filter_order: int = 4
    decimation: int = 20
    model_rate_hz: float = 100.0
    trim_s: float | None = None
    effort_delay_s: float | None = None
    rank_eps: float = 1e-8
    r_sigma: float = 10.0
    essential_tolerance: float = DEFAULT_FIT_TOLERANCE
    max_fit_error: float = 0.5
    parameters: str = "base"
    workers: int | None = None
    physical: bool = False
    rotor_model: RotorModel | None = None
    motor_topic: str = MOTOR_TOPIC
    estimator: str = "wls"
    estimator_start: str = "wls"
    estimator_tolerance: float = 1e-3
    estimator_iterations: int = 8
    joint_map: tuple[tuple[str, str], ...] | None = None
    transmission: Transmission | None = None
    min_speed: tuple[float, ...] | None = None
    max_gap: float = DEFAULT_MAX_GAP
    batch_kinematics: bool = True

    def projection(self, robot: Robot) -> str:
        redundant = len(robot.actuated_names) > len(robot.task_names)
        model = ("case1" if redundant else "standard") if self.model == "auto" else self.model
        if model not in MODELS:
            raise InputError(f"model must be one of {['auto', *MODELS]}, got {self.model!r}")
        return MODELS[model]

    def model_name(self, robot: Robot) -> str:
        projection = self.projection(robot)
        return next(name for name, value in MODELS.items() if value == projection)


@dataclass
class BagData:
    """One bag after filtering and the closed-loop model, at the model rate.

    Attributes:
        path: the bag.
        t: model-rate times (N,) (s); q, qdot, qddot: tree states (N, nv);
        torque: low-passed measured actuator torques (N, n_a) (N m);
        observation: ``W`` (N, rows, n_st); measured: ``Gamma`` (N, rows);
        cutoff_hz: derivative cut-off used; sample_rate_hz: the bag's rate;
        notes: what was done to the data on the way (resampling, transmission);
        start_time: the bag's first sample (s); start_q: the tree configuration there (nv,)
            (where a closed-loop simulation of the recording starts, :mod:`.simulation`).
    """

    path: Path
    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    qddot: np.ndarray
    torque: np.ndarray
    observation: np.ndarray
    measured: np.ndarray
    cutoff_hz: float
    sample_rate_hz: float
    timings: dict[str, float] = field(default_factory=dict)
    start_time: float = 0.0
    start_q: np.ndarray | None = None
    notes: tuple[str, ...] = ()


def dominant_bandwidth_hz(t: np.ndarray, positions: np.ndarray, *, fraction: float = 0.99) -> float:
    """Frequency below which ``fraction`` of the (detrended) position power lies (Hz)."""
    period = float(np.median(np.diff(t)))
    centred = positions - positions.mean(axis=0)
    power = (np.abs(np.fft.rfft(centred, axis=0)) ** 2).sum(axis=1)
    frequencies = np.fft.rfftfreq(len(t), period)
    cumulative = np.cumsum(power[1:])
    if cumulative[-1] <= 0.0:
        raise InputError("the recorded positions do not move: nothing to identify")
    return float(frequencies[1:][np.searchsorted(cumulative, fraction * cumulative[-1])])


def _stages(sample_rate_hz: float, settings: IdentificationSettings) -> tuple[int, int]:
    """``(n_1, n_2)``: the largest divisor n_1 of n_d keeping ``f_m / n_1 >= model_rate_hz``."""
    total = settings.decimation
    if total < 1:
        raise InputError(f"decimation must be a positive integer, got {total}")
    first = max(d for d in range(1, total + 1) if total % d == 0 and sample_rate_hz / d >= settings.model_rate_hz - 1e-9)
    return first, total // first


def _series(robot: Robot, source: Source, settings: IdentificationSettings) -> tuple[JointStateSeries, np.ndarray, np.ndarray]:
    series = joint_side_series(source, robot, topic=settings.topic, joint_map=dict(settings.joint_map or ()),
                               transmission=settings.transmission, max_gap=settings.max_gap)
    positions = series.position[:, series.columns(robot.measured_names)]
    efforts = series.effort[:, series.columns(robot.actuated_names)]
    return series, positions, efforts


def _kinematics_bag_error(robot: Robot, series: JointStateSeries, bag: Path, t_s: float,
                          error: Exception) -> BagError:
    """A closed-loop state that cannot be solved, as a BagError naming bag, topic and time (and a hint)."""
    foreign = [name for name in series.names if name not in robot.joint_names]
    hint = (f"; the bag also has joints {foreign} that {robot.name} does not have: a bag of another robot?"
            if foreign else "")
    return BagError(
        f"no closed-loop state of {robot.name} at t={t_s:.6f} s ({type(error).__name__}: {error}){hint}",
        bag=bag, topic=series.topic, kind="kinematics", t_s=t_s,
    )


def prepare_bag(
    robot: Robot,
    regressor: Regressor,
    bag: Source,
    settings: IdentificationSettings,
    *,
    show_progress: bool = False,
) -> BagData:
    """Steps 1-4 of the module docstring for one bag (or series read from CSV files), at the model rate."""
    clock = time.perf_counter()
    series, positions, efforts = _series(robot, bag, settings)
    bag = Path(series.bag_path)
    notes = (*series.notes, *effort_notes(bag.name, robot.actuated_names, efforts, positions[:, :efforts.shape[1]]))
    timings = {"read_s": time.perf_counter() - clock}
    # time from the first stamp, from the integer stamps: epoch seconds in float64 resolve only 0.24 us
    t = (series.stamp_ns - series.stamp_ns[0]).astype(np.float64) * 1e-9  # (N,) s
    sample_rate = 1.0 / float(np.median(np.diff(t)))
    first, second = _stages(sample_rate, settings)
    ceiling = decimation_cutoff_hz(sample_rate, factor=settings.decimation)
    if settings.cutoff_hz is not None:
        cutoff = settings.cutoff_hz
    else:
        bandwidth = settings.bandwidth_hz or dominant_bandwidth_hz(t, positions)
        cutoff = min(settings.bandwidth_factor * bandwidth, ceiling)
    trim = settings.trim_s if settings.trim_s is not None else 1.5 / cutoff
    clock = time.perf_counter()
    derivatives = estimate_derivatives(t, positions, cutoff_hz=cutoff, order=settings.filter_order)
    model_rate = sample_rate / first
    delay = 0.5 / sample_rate if settings.effort_delay_s is None else settings.effort_delay_s
    if settings.rotor_model is not None:  # link-side torque from the motor-side encoders, sample by sample
        efforts = compensate_bag_torques(bag, robot, series.t, efforts, settings.rotor_model, topic=settings.motor_topic,
                                         cutoff_hz=ceiling, order=settings.filter_order, delay_s=delay)
    torque = zero_phase_lowpass(efforts, sample_rate_hz=sample_rate, cutoff_hz=0.8 * model_rate / 2,
                                order=settings.filter_order)
    if delay:
        # torque(t) = effort stamped t + delay: interpolate the (band-limited) efforts
        torque = np.column_stack([np.interp(t + delay, t, column) for column in torque.T])
    keep = np.arange(int(math.ceil(trim * sample_rate)), len(series.t) - int(math.ceil(trim * sample_rate)), first)
    if keep.size < 8 * second + 8:
        raise BagError(
            f"{series.t[-1] - series.t[0]:.3f} s of data is too short to "
            f"identify (trim {trim:.3f} s at each end, decimation {settings.decimation})",
            bag=bag, topic=series.topic, kind="count",
        )
    timings["filter_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    count = keep.size
    q = np.empty((count, robot.nv))
    qdot = np.empty_like(q)
    qddot = np.empty_like(q)
    measured = robot.measured_indices
    n_a = len(robot.actuated_names)
    step = first / sample_rate
    first_sensed = positions[0, n_a:] if positions.shape[1] > n_a else None
    start = start_q = robot.solve_forward(positions[0, :n_a], sensed=first_sensed, start=robot.home).q
    rows = range(count)
    if robot.closures.size == 0 and sorted(measured) == list(range(robot.nv)):
        # no loop to close and every joint measured (a serial robot): the states are the readings
        q[:, measured], qdot[:, measured], qddot[:, measured] = (
            derivatives.q[keep], derivatives.qdot[keep], derivatives.qddot[keep])
        rows = ()
    elif settings.batch_kinematics and closed_loop_batch.supports(robot):
        # the whole bag at once (pardyn.kinematics.batch): same equations, numpy over the samples
        try:
            q, jacobians = closed_loop_batch.solve_series(
                robot, derivatives.q[keep], start_q, check_every=CHECK_EVERY, show_progress=show_progress,
                label=f"{bag.name}: closed-loop states")
        except SampleError as error:
            raise _kinematics_bag_error(robot, series, bag, float(series.t[keep[error.index]]), error.cause) from error
        qdot, qddot = closed_loop_batch.states_batch(robot, q, jacobians, derivatives.qdot[keep], derivatives.qddot[keep])
        rows = ()
    elif show_progress:
        rows = progress(rows, total=count, label=f"{bag.name}: closed-loop states")
    for i in rows:
        k = keep[i]
        readings = derivatives.q[k]
        sensed = readings[n_a:] if len(readings) > n_a else None
        if i:  # second-order prediction from the previous sample: Newton starts ~1e-6 away
            start = q[i - 1] + step * qdot[i - 1] + 0.5 * step**2 * qddot[i - 1]
        # branch and singularity checked every CHECK_EVERY samples (the warm start keeps the branch)
        try:
            q[i] = robot.solve_forward(readings[:n_a], sensed=sensed, start=start, checks=i % CHECK_EVERY == 0).q
        except KinematicsError as error:
            raise _kinematics_bag_error(robot, series, bag, float(series.t[k]), error) from error
        qdot[i], qddot[i] = robot.differential.states_from(q[i], measured, derivatives.qdot[k], derivatives.qddot[k])
    timings["kinematics_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    observation, gamma = regressor.equations(q, qdot, qddot, torque[keep])
    extra = motor_columns(robot, regressor, settings.transmission, qdot, qddot)
    if extra is not None:
        observation = np.concatenate([observation, extra], axis=2)
    timings["regressor_s"] = time.perf_counter() - clock
    return BagData(
        path=bag, t=series.t[keep], q=q, qdot=qdot, qddot=qddot, torque=torque[keep], observation=observation,
        measured=gamma, cutoff_hz=cutoff, sample_rate_hz=sample_rate, timings=timings, notes=notes,
        start_time=float(series.t[0]), start_q=start_q,
    )


def motor_columns(robot: Robot, regressor: Regressor, transmission: Transmission | None, qdot: np.ndarray,
                  qddot: np.ndarray) -> np.ndarray | None:
    """The coupled motors' columns (N, rows, 3 n_coupled) on the regressor's rows; None without coupled motors."""
    if transmission is None or not transmission.coupled:
        return None
    if regressor.projection != "standard" or set(transmission.joints) != set(regressor.row_names):
        raise InputError(
            f"{robot.description.source}: transmissions: coupled motors need the standard model on the actuated "
            f"joints {list(regressor.row_names)}; the transmission drives {list(transmission.joints)}"
        )
    indices = [robot.joint_names.index(name) for name in transmission.joints]
    columns = transmission.columns(qdot[:, indices], qddot[:, indices])  # (N, n, 3 n_c), transmission order
    rows = [transmission.joints.index(name) for name in regressor.row_names]
    return columns[:, rows, :]


def model_names(regressor: Regressor, settings: IdentificationSettings) -> tuple[str, ...]:
    """Column names of the identification model: the standard parameters, then the coupled motors'."""
    extra = settings.transmission.column_names if settings.transmission is not None else ()
    return tuple(regressor.names) + tuple(extra)


def _prepare_job(shared: tuple, path: Path) -> BagData:
    robot, regressor, settings = shared
    return prepare_bag(robot, regressor, path, settings)


def _prepare_all(
    robot: Robot, regressor: Regressor, paths: Sequence[Path], settings: IdentificationSettings, *, show_progress: bool
) -> list[BagData]:
    """:func:`prepare_bag` on every bag, ``settings.workers`` bags at a time (forked processes)."""
    if (settings.workers or 2) <= 1 or len(paths) == 1:
        return [prepare_bag(robot, regressor, path, settings, show_progress=show_progress) for path in paths]
    return fork_map(_prepare_job, (robot, regressor, settings), paths, workers=settings.workers,
                    label=f"preparing {len(paths)} bags" if show_progress else None)


def _system(data: BagData, regressor: Regressor, settings: IdentificationSettings) -> LinearSystem:
    _, second = _stages(data.sample_rate_hz, settings)
    system = decimate(data.measured, data.observation, factor=second, order=settings.filter_order,
                      names=model_names(regressor, settings))
    if settings.min_speed is None:
        return system
    if regressor.projection != "standard":
        raise InputError("minimum speeds: only with the standard model (one equation row per actuated joint)")
    rows = [regressor.robot.joint_names.index(name) for name in regressor.row_names]
    speeds = decimate(data.qdot[:, rows], np.zeros((len(data.t), len(rows), 1)), factor=second,
                      order=settings.filter_order).Y
    selected, _ = drop_slow_samples(system, speeds, settings.min_speed, row_names=regressor.row_names)
    return selected


@dataclass(frozen=True)
class Validation:
    """Torque prediction on one held-out bag (paper's Table 3 layout).

    Attributes:
        bag: the bag; joints: actuated joint names (n_a,);
        relative_error_norm: overall ``||tau - tau_hat|| / ||tau||``; per_joint: (n_a,);
        nmse: UR5e paper's metric (N m); nominal: the same three figures for the nominal model;
        t, measured, predicted, predicted_nominal: the series compared (N,), (N, n_a);
        physical: the three figures for the physically consistent model (``settings.physical``), else ``None``.
    """

    bag: Path
    joints: tuple[str, ...]
    relative_error_norm: float
    per_joint: np.ndarray
    nmse: float
    nominal: dict[str, Any]
    t: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    predicted_nominal: np.ndarray
    physical: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {
            "bag": str(self.bag),
            "relative_error_norm": self.relative_error_norm,
            "per_joint": dict(zip(self.joints, self.per_joint.tolist())),
            "nmse": self.nmse,
            "nominal": self.nominal,
        }
        if self.physical is not None:
            out["physical"] = self.physical
        return out


@dataclass(frozen=True)
class IdentificationResult:
    """Everything the identification found (``as_json`` gives RESULT.json)."""

    robot: str
    model: str
    settings: IdentificationSettings
    samples: int
    equations: int
    base: BaseParameters
    estimate: Estimate
    essential: EssentialParameters
    parameters: DynamicParameters
    row_names: tuple[str, ...]
    fit_blocks: tuple[str, ...]
    cutoff_hz: float
    sample_rate_hz: float
    payload: dict[str, float] | None
    validation: tuple[Validation, ...]
    fit_series: dict[str, np.ndarray]
    timings: dict[str, float]
    physical: PhysicalEstimate | None = None
    estimator: EstimatorResult | None = None
    motor_parameters: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def _rows(self, estimate: Estimate) -> list[dict[str, float]]:
        return [
            {"name": n, "value": float(v), "std": float(s), "std_pct": float(p)}
            for n, v, s, p in zip(estimate.names, estimate.chi, estimate.std, estimate.relative_std)
        ]

    def as_json(self) -> dict[str, Any]:
        """RESULT.json: the fixed field names of the issue, and what ``pardyn dynamics --params`` reads."""
        validation = None
        if self.validation:
            relative = [v.relative_error_norm for v in self.validation]
            validation = {
                "relative_error_norm": float(np.mean(relative)),
                "per_joint": {
                    name: float(np.mean([v.per_joint[j] for v in self.validation]))
                    for j, name in enumerate(self.validation[0].joints)
                },
                "nmse": float(np.mean([v.nmse for v in self.validation])),
                "nominal": _mean_figures([v.nominal for v in self.validation], self.validation[0].joints),
                "bags": [v.as_dict() for v in self.validation],
            }
            if self.physical is not None:
                validation["physical"] = _mean_figures([v.physical for v in self.validation],
                                                       self.validation[0].joints)
        physical = None
        if self.physical is not None:
            physical = self.physical.as_dict(self.estimate, block_labels=self.fit_blocks)
            if validation is not None:
                physical["validation"] = validation["physical"]
        essential_names = set(self.essential.estimate.names)
        return {
            "robot": self.robot,
            "model": self.model,
            "samples": self.samples,
            "equations": self.equations,
            "base_parameters": [
                dict(row, essential=row["name"] in essential_names) for row in self._rows(self.estimate)
            ],
            "essential_parameters": self._rows(self.essential.estimate),
            # how base_parameters were estimated: wls | iv | didim, iterations, convergence
            "estimator": (self.estimator or EstimatorResult(self.estimate, "wls")).as_dict(),
            "regrouping": list(self.base.relations),
            "unidentifiable": list(self.base.unidentifiable),
            "payload": self.payload,
            "fit": {
                "relative_error_norm": self.estimate.relative_error,
                "per_joint": dict(zip(self.fit_blocks, self.estimate.block_relative_errors.tolist())),
                "essential_relative_error_norm": self.essential.estimate.relative_error,
                "condition_number": self.estimate.condition_number,
            },
            "validation": validation,
            "filter": {
                "derivative_cutoff_hz": self.cutoff_hz,
                "filter_order": self.settings.filter_order,
                "decimation": self.settings.decimation,
                "decimation_cutoff_hz": decimation_cutoff_hz(self.sample_rate_hz, factor=self.settings.decimation),
                "model_rate_hz": self.settings.model_rate_hz,
                "r_sigma": self.settings.r_sigma,
                "essential_tolerance": self.settings.essential_tolerance,
                "essential_stopped_by": self.essential.stopped_by,
                "rank_eps": self.settings.rank_eps,
                "rotor_compensation": self.settings.rotor_model is not None,
            },
            "timings_s": self.timings,
            # the coupled motors' parameters (transmission), joint-side scaled
            "motor_parameters": self.motor_parameters,
            # what was done to the data on the way (resampling, transmission), one sentence each
            "data_notes": list(self.notes),
            # settings.physical: the physically consistent estimate beside the unconstrained one
            "physical": physical,
            # Read by pardyn dynamics --params (pardyn.dynamics.parameters.read_parameter_file).
            "standard_parameters": dict(zip(self.parameters.names, self.parameters.vector().tolist())),
            "unlisted": "zero",
        }


def _mean_figures(figures: Sequence[dict[str, Any]], joints: Sequence[str]) -> dict[str, Any]:
    """Mean over bags of ``{relative_error_norm, per_joint: {joint: ...}, nmse}`` figures."""
    return {
        key: (float(np.mean([f[key] for f in figures])) if key != "per_joint" else {
            name: float(np.mean([f["per_joint"][name] for f in figures])) for name in joints
        })
        for key in ("relative_error_norm", "per_joint", "nmse")
    }


def _standard_vector(base: BaseParameters, names: Sequence[str], values: np.ndarray, size: int) -> np.ndarray:
    """Standard parameters reproducing the model of base parameters ``names`` = ``values``.

    Each base parameter's value goes on its own (leading) standard column, the
    others are zero: ``W_st chi_st = W_base chi_base`` since ``W_base = W_st[:, independent]``.
    """
    vector = np.zeros(size)
    lookup = dict(zip(base.names, base.independent))
    for name, value in zip(names, values):
        vector[lookup[name]] = value
    return vector


def _payload(base: BaseParameters, estimate: Estimate) -> dict[str, float] | None:
    """``{mass, mx, my, mz, xx, ...}`` of the payload's base parameters (SI, platform frame)."""
    standard = dict(zip(base.names, (base.standard_names[k] for k in base.independent)))
    found = {}
    for name, value in zip(estimate.names, estimate.chi):
        parameter = standard[name]
        if parameter.endswith("_payload"):
            key = parameter.removesuffix("_payload")
            found["mass" if key == "m" else key] = float(value)
    return found or None


def _figures(robot: Robot, measured: np.ndarray, predicted: np.ndarray) -> dict[str, Any]:
    """Relative error norm, per joint, NMSE of one model's predicted torques (N, n_a)."""
    return {
        "relative_error_norm": relative_error_norm(measured, predicted),
        "per_joint": dict(zip(robot.actuated_names, relative_error_norms(measured, predicted).tolist())),
        "nmse": nmse(measured, predicted),
    }


def _validate(robot: Robot, bag: Source, settings: IdentificationSettings, identified: InverseDynamics,
              nominal: InverseDynamics, regressor: Regressor, physical: InverseDynamics | None = None,
              motor_values: dict[str, float] | None = None) -> Validation:
    data = prepare_bag(robot, regressor, bag, settings)
    # Compare at the decimation cut-off, where the model is meant to be valid (eq. 40).
    cutoff = decimation_cutoff_hz(data.sample_rate_hz, factor=settings.decimation)
    rate = 1.0 / float(np.median(np.diff(data.t)))
    measured = zero_phase_lowpass(data.torque, sample_rate_hz=rate, cutoff_hz=min(cutoff, 0.4 * rate),
                                  order=settings.filter_order)
    predicted = identified.torques_batch(data.q, data.qdot, data.qddot)
    extra = motor_columns(robot, regressor, settings.transmission, data.qdot, data.qddot)
    if extra is not None and motor_values:
        predicted = predicted + extra @ np.array([motor_values[n] for n in settings.transmission.column_names])
    predicted_nominal = nominal.torques_batch(data.q, data.qdot, data.qddot)
    per_joint = relative_error_norms(measured, predicted)
    physical_figures = None
    if physical is not None:
        physical_figures = _figures(robot, measured, physical.torques_batch(data.q, data.qdot, data.qddot))
    return Validation(
        bag=data.path,
        joints=tuple(robot.actuated_names),
        relative_error_norm=relative_error_norm(measured, predicted),
        per_joint=per_joint,
        nmse=nmse(measured, predicted),
        nominal=_figures(robot, measured, predicted_nominal),
        t=data.t, measured=measured, predicted=predicted, predicted_nominal=predicted_nominal,
        physical=physical_figures,
    )


def identify(
    robot: Robot,
    bags: Sequence[Source],
    *,
    loaded_bags: Sequence[Source] = (),
    validate_bags: Sequence[Source] = (),
    settings: IdentificationSettings | None = None,
    closed_loop: Sequence[ClosedLoopSetup] | None = None,
    show_progress: bool = True,
) -> IdentificationResult:
    """Identify ``robot``'s dynamic parameters from bags (module docstring for the steps).

    Args:
        robot: the robot (its YAML's nominal parameters give the parameter layout).
        bags: bags recorded without payload, or joint-state series (CSV files,
            :func:`pardyn.bags.csv_series.read_csv_series`).
        loaded_bags: bags (series) recorded with the payload fixed to the platform (eq. 49).
        validate_bags: held-out bags (series) without payload, for cross-validation.
        settings: pipeline settings (defaults: the papers' recipe).
        closed_loop: ``settings.estimator`` iv / didim: the controller and reference of each
            bag (``bags`` then ``loaded_bags``), to simulate the model as it was run.
        show_progress: progress lines on stderr.

    Raises:
        BagError: a bag that cannot be used (the message names bag, topic and time).
        InputError: inconsistent settings or data that excite nothing.
    """
    # Small dense problems (tens of columns): BLAS threads only contend for the cores (measured on the
    # TX40: 34 s with OpenBLAS's default threads on a loaded 2-core machine, 6.5 s with one).
    with threadpool_limits(limits=1, user_api="blas"):
        return _identify(robot, bags, loaded_bags=loaded_bags, validate_bags=validate_bags, settings=settings,
                         closed_loop=closed_loop, show_progress=show_progress)


def _identify(
    robot: Robot,
    bags: Sequence[Source],
    *,
    loaded_bags: Sequence[Source],
    validate_bags: Sequence[Source],
    settings: IdentificationSettings | None,
    closed_loop: Sequence[ClosedLoopSetup] | None,
    show_progress: bool,
) -> IdentificationResult:
    """:func:`identify` with the BLAS thread limit in place."""
    settings = settings or IdentificationSettings()
    if not bags:
        raise InputError("at least one bag without payload is needed")
    clock = time.perf_counter()
    regressor = Regressor(robot, projection=settings.projection(robot), projected=settings.projected)
    names = model_names(regressor, settings)
    timings: dict[str, float] = {}

    paths = [p if isinstance(p, JointStateSeries) else Path(p) for p in list(bags) + list(loaded_bags)]
    every = _prepare_all(robot, regressor, paths, settings, show_progress=show_progress)
    for data in every:
        for key, value in data.timings.items():
            timings[key] = timings.get(key, 0.0) + value

    try:
        payload_columns = regressor.payload_columns().tolist()
    except InputError:
        payload_columns = []
    if loaded_bags and not payload_columns:
        raise InputError(
            f"{robot.description.source}: dynamics: no 'payload' body to identify from the loaded bags"
        )
    unloaded, loaded = every[: len(bags)], every[len(bags):]
    # the recorded efforts against the nominal model's torques on the first run (every 10th sample)
    first = unloaded[0]
    nominal_torques = InverseDynamics(robot).torques_batch(first.q[::10], first.qdot[::10], first.qddot[::10])
    scale = scale_notes(first.path.name, robot.actuated_names, first.torque[::10], nominal_torques)
    clock_decimate = time.perf_counter()
    system = _assemble(unloaded, loaded, regressor, settings, payload_columns)
    timings["decimate_s"] = time.perf_counter() - clock_decimate
    clock_qr = time.perf_counter()
    rows, columns = system.W.shape
    if rows < columns:
        raise InputError(
            f"bags {[str(p) for p in paths]}: {rows} equations (samples x joints after decimation by "
            f"{settings.decimation}) for {columns} standard parameters: record longer runs"
        )
    order = symmetric_order(system.names)
    base = base_parameters(system.W, names=system.names, order=order, eps=settings.rank_eps)
    reduced = base.reduce_system(system)
    timings["qr_s"] = time.perf_counter() - clock_qr
    clock_solve = time.perf_counter()
    estimate = wls(reduced.W, reduced.Y, block_sizes=reduced.block_sizes, names=reduced.names,
                   rank_eps=settings.rank_eps)
    essential = essential_parameters(reduced.W, reduced.Y, names=reduced.names, block_sizes=reduced.block_sizes,
                                     ratio=settings.r_sigma, fit_tolerance=settings.essential_tolerance,
                                     rank_eps=settings.rank_eps)
    estimator = _run_estimator(robot, regressor, base, reduced, estimate, unloaded, loaded, settings,
                               payload_columns, closed_loop, show_progress)
    estimate = estimator.estimate
    timings["solve_s"] = time.perf_counter() - clock_solve
    check_fit(estimate, essential, settings)
    layout = robot.nominal_parameters
    physical = None
    if settings.physical:
        from pardyn.identification.physical import physical_estimate  # noqa: PLC0415 - cvxpy on demand

        # after rotor compensation the link-side drive terms are residuals of the rotor model: either sign
        physical = physical_estimate(system, base, layout, block_sigmas=estimate.block_sigmas,
                                     **({} if settings.rotor_model is None else {"nonnegative_drive_parameters": ()}))
        timings["physical_s"] = physical.solve_time_s

    # The chosen estimate (settings.parameters) as standard parameters: each base value on its
    # leading standard column, the regrouped and removed columns zero.
    chosen = essential.estimate if settings.parameters == "essential" else estimate
    vector_kept = _standard_vector(base, chosen.names, chosen.chi, len(system.names))
    full = np.zeros(layout.size)
    motor_values = {}
    for name, value in zip(system.names, vector_kept):
        if name in layout.names:
            full[layout.names.index(name)] = value
        else:  # a coupled motor's column (transmission)
            motor_values[name] = float(value)
    identified_params = layout.with_vector(full)
    # The robot as identified carries no payload (validation bags are unloaded).
    unloaded_params = identified_params.with_values(
        {name: 0.0 for name in identified_params.names if name.endswith("_payload")}
    )
    timings["total_s"] = time.perf_counter() - clock

    validation = ()
    if validate_bags:
        identified = InverseDynamics(robot, unloaded_params)
        nominal = InverseDynamics(robot)
        physical_model = None
        if physical is not None:
            physical_model = InverseDynamics(robot, physical.parameters.with_values(
                {name: 0.0 for name in physical.parameters.names if name.endswith("_payload")}))
        validation = tuple(_validate(robot, b if isinstance(b, JointStateSeries) else Path(b), settings, identified,
                                     nominal, regressor, physical_model, motor_values)
                           for b in validate_bags)

    first_blocks = np.array(reduced.block_sizes[: len(regressor.row_names)], dtype=int)  # first bag, per row
    fit_rows = int(first_blocks.sum())
    return IdentificationResult(
        robot=robot.name,
        model=settings.model_name(robot),
        settings=settings,
        samples=int(sum(len(d.t) for d in unloaded + loaded)),
        equations=reduced.rows,
        base=base,
        estimate=estimate,
        essential=essential,
        estimator=estimator,
        parameters=identified_params,
        row_names=regressor.row_names,
        fit_blocks=_block_labels(regressor.row_names, unloaded, loaded),
        cutoff_hz=float(np.mean([d.cutoff_hz for d in unloaded + loaded])),
        sample_rate_hz=float(np.mean([d.sample_rate_hz for d in unloaded + loaded])),
        payload=_payload(base, estimate) if loaded else None,
        validation=validation,
        fit_series={
            "measured": reduced.Y[:fit_rows],
            "predicted": estimate.prediction[:fit_rows],
            "block_sizes": first_blocks,
        },
        timings=timings,
        physical=physical,
        motor_parameters=motor_values,
        notes=tuple(dict.fromkeys([*(note for d in unloaded + loaded for note in d.notes), *scale])),
    )


def _assemble(unloaded: Sequence[BagData], loaded: Sequence[BagData], regressor: Regressor,
              settings: IdentificationSettings, payload_columns: Sequence[int]) -> LinearSystem:
    """The filtered, decimated system of every bag: stacked, with eq. (49)'s payload columns if loaded."""
    system = stack_systems(*(_system(d, regressor, settings) for d in unloaded))
    if loaded:
        loaded_system = stack_systems(*(_system(d, regressor, settings) for d in loaded))
        return payload_system(system, loaded_system, payload=payload_columns)
    # Without loaded data the payload regroups with the platform: drop its columns.
    return system.select([k for k in range(len(model_names(regressor, settings))) if k not in set(payload_columns)])


def _run_estimator(robot: Robot, regressor: Regressor, base: BaseParameters, reduced: LinearSystem,
                   weighted: Estimate, unloaded: Sequence[BagData], loaded: Sequence[BagData],
                   settings: IdentificationSettings, payload_columns: Sequence[int],
                   closed_loop: Sequence[ClosedLoopSetup] | None, show_progress: bool) -> EstimatorResult:
    """``settings.estimator`` on the reduced system; IV and DIDIM simulate every bag with the model."""
    if settings.estimator == "wls":
        return EstimatorResult(weighted, "wls")
    if settings.estimator not in ESTIMATORS:
        raise InputError(f"estimator must be one of {list(ESTIMATORS)}, got {settings.estimator!r}")
    if settings.transmission is not None or settings.min_speed is not None:
        raise InputError(f"the {settings.estimator} estimator does not support transmissions or minimum speeds yet "
                         "(the simulated model has neither the motor columns nor the same rows): use wls")
    every = list(unloaded) + list(loaded)
    if closed_loop is None or len(closed_loop) != len(every):
        given = 0 if closed_loop is None else len(closed_loop)
        raise MissingRecordingError(
            f"the {settings.estimator} estimator simulates the model in closed loop: it needs the controller and "
            f"the reference of each of the {len(every)} bags, got {given}")
    simulator = ModelSimulator(robot, robot.nominal_parameters, base)

    def simulate(chi: np.ndarray) -> LinearSystem:
        runs = []
        for data, setup, with_payload in zip(every, closed_loop, [False] * len(unloaded) + [True] * len(loaded)):
            run = simulator.run(chi, setup, start_time=data.start_time, start=data.start_q, times=data.t,
                                payload=with_payload)
            observation, measured = regressor.equations(run.q, run.qdot, run.qddot, run.tau)
            runs.append(replace(data, observation=observation, measured=measured))
        full = _assemble(runs[: len(unloaded)], runs[len(unloaded):], regressor, settings, payload_columns)
        return base.reduce_system(full)

    if settings.estimator_start not in ("wls", "nominal"):
        raise InputError(f"estimator_start must be 'wls' or 'nominal', got {settings.estimator_start!r}")
    start = None
    if settings.estimator_start == "nominal":
        values = robot.nominal_parameters.as_dict()
        start = base.from_standard(np.array([values[n] for n in base.standard_names]))
    say = (lambda line: print(line, file=sys.stderr)) if show_progress else None
    return estimate_by(settings.estimator, reduced, simulate=simulate, start=start,
                       start_name=settings.estimator_start, block_sigmas=weighted.block_sigmas,
                       tolerance=settings.estimator_tolerance, max_iterations=settings.estimator_iterations,
                       progress=say)


def check_fit(estimate: Estimate, essential: EssentialParameters, settings: IdentificationSettings) -> None:
    """Refuse a written model whose fit collapsed (:class:`FitCollapsedError`, one line).

    The model of ``settings.parameters`` must explain its own data: relative error
    norm at most ``settings.max_fit_error``, and for the essential model at most
    ``1 + settings.essential_tolerance`` times the base model's.
    """
    base_error = estimate.relative_error
    if settings.parameters == "essential":
        error = essential.estimate.relative_error
        limit = min(settings.max_fit_error, (1.0 + settings.essential_tolerance) * base_error)
        what = (f"the essential model ({len(essential.kept)} of {len(estimate.names)} base parameters) fits with "
                f"{100 * error:.3g} % relative error against {100 * base_error:.3g} % for the base model")
        hint = "use --parameters base or a larger --essential-tolerance"
    else:
        error, limit = base_error, settings.max_fit_error
        what = f"the base model ({len(estimate.names)} parameters) fits with {100 * error:.3g} % relative error"
        hint = "check that the bags' efforts are the actuator torques and that the motion excites the model"
    if error > limit * (1.0 + 1e-9):
        raise FitCollapsedError(
            f"fit collapsed: {what} (limit {100 * limit:.3g} %); nothing written ({hint})",
            fit_error=error, base_fit_error=base_error,
        )


def _block_labels(row_names: Sequence[str], unloaded: Sequence[BagData], loaded: Sequence[BagData]) -> tuple[str, ...]:
    labels = []
    for data, tag in [(d, "") for d in unloaded] + [(d, " (loaded)") for d in loaded]:
        labels.extend(f"{row}{tag} [{data.path.name}]" for row in row_names)
    return tuple(labels)
