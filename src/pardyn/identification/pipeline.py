"""From recorded bags to identified, validated dynamic parameters.

The recipe of Briot et al. 2015 (section 4) and of the UR5e paper (sections 3-5),
for closed-loop and actuation-redundant robots:

1. **Read** ``joint_states`` (measured positions, actuator efforts) from each bag
   (:func:`pardyn.bags.reader.read_joint_states`: regular stamps, no NaN; exact
   retransmissions of a state, as the lockstep ``sim`` sends while it waits, are dropped).
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
   measured ones (eqs. 21, 24).
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
   (iterative removal until ``max/min %sigma < r_sigma``).
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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pardyn.bags.reader import JointStateSeries, read_joint_states
from pardyn.bags.writer import BagError
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.dynamics.regressor import Regressor
from pardyn.dynamics.rotor import RotorModel
from pardyn.errors import InputError
from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.estimation import (
    EssentialParameters,
    Estimate,
    LinearSystem,
    essential_parameters,
    payload_system,
    stack_systems,
    wls,
)
from pardyn.identification.filtering import decimate, decimation_cutoff_hz, estimate_derivatives, zero_phase_lowpass
from pardyn.identification.metrics import nmse, relative_error_norm, relative_error_norms
from pardyn.identification.rotor_compensation import MOTOR_TOPIC, compensate_bag_torques
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
    parameters: str = "base"
    workers: int | None = None
    physical: bool = False
    rotor_model: RotorModel | None = None
    motor_topic: str = MOTOR_TOPIC

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
        cutoff_hz: derivative cut-off used; sample_rate_hz: the bag's rate.
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


def _series(robot: Robot, bag: Path, settings: IdentificationSettings) -> tuple[JointStateSeries, np.ndarray, np.ndarray]:
    series = read_joint_states(bag, settings.topic, drop_resent=True)
    positions = series.position[:, series.columns(robot.measured_names)]
    efforts = series.effort[:, series.columns(robot.actuated_names)]
    missing = np.argwhere(~np.isfinite(efforts))
    if missing.size:
        k, j = missing[0]
        raise BagError(
            f"{bag}: topic {series.topic}: no effort for {robot.actuated_names[j]} at t={series.t[k]:.6f} s "
            "(identification needs the actuator torques)",
            bag=bag, topic=series.topic, kind="effort",
        )
    return series, positions, efforts


def prepare_bag(
    robot: Robot,
    regressor: Regressor,
    bag: Path | str,
    settings: IdentificationSettings,
    *,
    show_progress: bool = False,
) -> BagData:
    """Steps 1-4 of the module docstring for one bag, at the model rate."""
    bag = Path(bag)
    clock = time.perf_counter()
    series, positions, efforts = _series(robot, bag, settings)
    timings = {"read_s": time.perf_counter() - clock}
    sample_rate = 1.0 / float(np.median(np.diff(series.t)))
    first, second = _stages(sample_rate, settings)
    ceiling = decimation_cutoff_hz(sample_rate, factor=settings.decimation)
    if settings.cutoff_hz is not None:
        cutoff = settings.cutoff_hz
    else:
        bandwidth = settings.bandwidth_hz or dominant_bandwidth_hz(series.t, positions)
        cutoff = min(settings.bandwidth_factor * bandwidth, ceiling)
    trim = settings.trim_s if settings.trim_s is not None else 1.5 / cutoff
    clock = time.perf_counter()
    derivatives = estimate_derivatives(series.t, positions, cutoff_hz=cutoff, order=settings.filter_order)
    model_rate = sample_rate / first
    delay = 0.5 / sample_rate if settings.effort_delay_s is None else settings.effort_delay_s
    if settings.rotor_model is not None:  # link-side torque from the motor-side encoders, sample by sample
        efforts = compensate_bag_torques(bag, robot, series.t, efforts, settings.rotor_model, topic=settings.motor_topic,
                                         cutoff_hz=ceiling, order=settings.filter_order, delay_s=delay)
    torque = zero_phase_lowpass(efforts, sample_rate_hz=sample_rate, cutoff_hz=0.8 * model_rate / 2,
                                order=settings.filter_order)
    if delay:
        # torque(t) = effort stamped t + delay: interpolate the (band-limited) efforts
        torque = np.column_stack([np.interp(series.t + delay, series.t, column) for column in torque.T])
    keep = np.arange(int(math.ceil(trim * sample_rate)), len(series.t) - int(math.ceil(trim * sample_rate)), first)
    if keep.size < 8 * second + 8:
        raise BagError(
            f"{bag}: topic {series.topic}: {series.t[-1] - series.t[0]:.3f} s of data is too short to "
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
    start = robot.home
    rows = range(count)
    if show_progress:
        rows = progress(rows, total=count, label=f"{bag.name}: closed-loop states")
    for i in rows:
        k = keep[i]
        readings = derivatives.q[k]
        sensed = readings[n_a:] if len(readings) > n_a else None
        if i:  # second-order prediction from the previous sample: Newton starts ~1e-6 away
            start = q[i - 1] + step * qdot[i - 1] + 0.5 * step**2 * qddot[i - 1]
        # branch and singularity checked every CHECK_EVERY samples (the warm start keeps the branch)
        q[i] = robot.solve_forward(readings[:n_a], sensed=sensed, start=start, checks=i % CHECK_EVERY == 0).q
        qdot[i], qddot[i] = robot.differential.states_from(q[i], measured, derivatives.qdot[k], derivatives.qddot[k])
    timings["kinematics_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    observation, gamma = regressor.equations(q, qdot, qddot, torque[keep])
    timings["regressor_s"] = time.perf_counter() - clock
    return BagData(
        path=bag, t=series.t[keep], q=q, qdot=qdot, qddot=qddot, torque=torque[keep], observation=observation,
        measured=gamma, cutoff_hz=cutoff, sample_rate_hz=sample_rate, timings=timings,
    )


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
    return decimate(data.measured, data.observation, factor=second, order=settings.filter_order,
                    names=regressor.names)


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
                "rank_eps": self.settings.rank_eps,
                "rotor_compensation": self.settings.rotor_model is not None,
            },
            "timings_s": self.timings,
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


def _validate(robot: Robot, bag: Path, settings: IdentificationSettings, identified: InverseDynamics,
              nominal: InverseDynamics, regressor: Regressor, physical: InverseDynamics | None = None) -> Validation:
    data = prepare_bag(robot, regressor, bag, settings)
    # Compare at the decimation cut-off, where the model is meant to be valid (eq. 40).
    cutoff = decimation_cutoff_hz(data.sample_rate_hz, factor=settings.decimation)
    rate = 1.0 / float(np.median(np.diff(data.t)))
    measured = zero_phase_lowpass(data.torque, sample_rate_hz=rate, cutoff_hz=min(cutoff, 0.4 * rate),
                                  order=settings.filter_order)
    predicted = identified.torques_batch(data.q, data.qdot, data.qddot)
    predicted_nominal = nominal.torques_batch(data.q, data.qdot, data.qddot)
    per_joint = relative_error_norms(measured, predicted)
    physical_figures = None
    if physical is not None:
        physical_figures = _figures(robot, measured, physical.torques_batch(data.q, data.qdot, data.qddot))
    return Validation(
        bag=Path(bag),
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
    bags: Sequence[Path | str],
    *,
    loaded_bags: Sequence[Path | str] = (),
    validate_bags: Sequence[Path | str] = (),
    settings: IdentificationSettings | None = None,
    show_progress: bool = True,
) -> IdentificationResult:
    """Identify ``robot``'s dynamic parameters from bags (module docstring for the steps).

    Args:
        robot: the robot (its YAML's nominal parameters give the parameter layout).
        bags: bags recorded without payload.
        loaded_bags: bags recorded with the payload fixed to the platform (eq. 49).
        validate_bags: held-out bags (without payload) for cross-validation.
        settings: pipeline settings (defaults: the papers' recipe).
        show_progress: progress lines on stderr.

    Raises:
        BagError: a bag that cannot be used (the message names bag, topic and time).
        InputError: inconsistent settings or data that excite nothing.
    """
    settings = settings or IdentificationSettings()
    if not bags:
        raise InputError("at least one bag without payload is needed")
    clock = time.perf_counter()
    regressor = Regressor(robot, projection=settings.projection(robot), projected=settings.projected)
    names = regressor.names
    timings: dict[str, float] = {}

    paths = [Path(p) for p in list(bags) + list(loaded_bags)]
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
    clock_decimate = time.perf_counter()
    system = stack_systems(*(_system(d, regressor, settings) for d in unloaded))
    if loaded:
        loaded_system = stack_systems(*(_system(d, regressor, settings) for d in loaded))
        system = payload_system(system, loaded_system, payload=payload_columns)
    else:
        # Without loaded data the payload regroups with the platform: drop its columns.
        system = system.select([k for k in range(len(names)) if k not in set(payload_columns)])
    timings["decimate_s"] = time.perf_counter() - clock_decimate
    clock_qr = time.perf_counter()
    order = symmetric_order(system.names)
    base = base_parameters(system.W, names=system.names, order=order, eps=settings.rank_eps)
    reduced = base.reduce_system(system)
    timings["qr_s"] = time.perf_counter() - clock_qr
    clock_solve = time.perf_counter()
    estimate = wls(reduced.W, reduced.Y, block_sizes=reduced.block_sizes, names=reduced.names,
                   rank_eps=settings.rank_eps)
    essential = essential_parameters(reduced.W, reduced.Y, names=reduced.names, block_sizes=reduced.block_sizes,
                                     ratio=settings.r_sigma, rank_eps=settings.rank_eps)
    timings["solve_s"] = time.perf_counter() - clock_solve
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
    for name, value in zip(system.names, vector_kept):
        full[layout.names.index(name)] = value
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
        validation = tuple(_validate(robot, Path(b), settings, identified, nominal, regressor, physical_model)
                           for b in validate_bags)

    fit_rows = reduced.block_sizes[0] if reduced.block_sizes else 0
    return IdentificationResult(
        robot=robot.name,
        model=settings.model_name(robot),
        settings=settings,
        samples=int(sum(len(d.t) for d in unloaded + loaded)),
        equations=reduced.rows,
        base=base,
        estimate=estimate,
        essential=essential,
        parameters=identified_params,
        row_names=regressor.row_names,
        fit_blocks=_block_labels(regressor.row_names, unloaded, loaded),
        cutoff_hz=float(np.mean([d.cutoff_hz for d in unloaded + loaded])),
        sample_rate_hz=float(np.mean([d.sample_rate_hz for d in unloaded + loaded])),
        payload=_payload(base, estimate) if loaded else None,
        validation=validation,
        fit_series={
            "measured": reduced.Y[: fit_rows * len(regressor.row_names)],
            "predicted": estimate.prediction[: fit_rows * len(regressor.row_names)],
            "block_size": np.array([fit_rows]),
        },
        timings=timings,
        physical=physical,
    )


def _block_labels(row_names: Sequence[str], unloaded: Sequence[BagData], loaded: Sequence[BagData]) -> tuple[str, ...]:
    labels = []
    for data, tag in [(d, "") for d in unloaded] + [(d, " (loaded)") for d in loaded]:
        labels.extend(f"{row}{tag} [{data.path.name}]" for row in row_names)
    return tuple(labels)
