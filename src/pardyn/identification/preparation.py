"""One recording made ready for identification: steps 1-5 of :mod:`pardyn.identification.pipeline`.

:func:`prepare_bag` is the story, four steps each taking only its settings group:

1. :func:`read_recording` (:class:`~pardyn.identification.settings.DataSettings`): the joint states
   (any rosbag2 bag and topic, or a series read from CSV files), names mapped, motor side to joint
   side, and the notes on the data (:mod:`pardyn.identification.sources`,
   :mod:`pardyn.identification.diagnostics`);
2. :func:`filter_recording` (:class:`~pardyn.identification.settings.FilterSettings`): the
   derivative cut-off, the zero-phase band-pass derivatives (eq. 39), the low-passed (and, with a
   rotor model, link-side) torques at their true time, the samples kept for the model rate;
3. :func:`closed_loop_states` (:class:`~pardyn.identification.settings.ModelSettings`): every tree
   coordinate and rate from the measured joints (eqs. 21, 24);
4. :func:`model_equations`: the observation matrix and model inputs of the chosen model (eq. 19,
   30 or 36; the coupled motors' columns of a transmission).

:func:`decimated_system` is step 5 (eq. 40's second stage, slow samples dropped).

Within :func:`prepared_once`, a bag is prepared once and handed out again to every later identification or
validation of the same robot with the same data, filter and model settings (the estimator benchmark's eight
estimators on one draw and its held-out run: steps 1-4 took ~5 of the 10 s of a Delta WLS at a 1 kHz model rate).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.bags.errors import BagError
from pardyn.bags.joint_states import JointStateSeries
from pardyn.dynamics.regressor import Regressor
from pardyn.dynamics.transmission import Transmission
from pardyn.errors import InputError, KinematicsError, SampleError
from pardyn.identification.diagnostics import effort_notes, min_motion
from pardyn.identification.filtering import Derivatives, decimate, decimation_cutoff_hz, estimate_derivatives
from pardyn.identification.filtering import zero_phase_lowpass
from pardyn.identification.least_squares import LinearSystem
from pardyn.identification.rotor_compensation import compensate_bag_torques
from pardyn.identification.selection import drop_slow_samples
from pardyn.identification.settings import DataSettings, FilterSettings, IdentificationSettings, ModelSettings
from pardyn.identification.sources import Source, joint_side_series
from pardyn.kernels import CompiledSolver
from pardyn.kinematics import batch as closed_loop_batch
from pardyn.distributed import parallel_map
from pardyn.progress import progress

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = [
    "CHECK_EVERY",
    "prepared_once",
    "BagData",
    "Filtered",
    "Recording",
    "States",
    "closed_loop_states",
    "decimated_system",
    "dominant_bandwidth_hz",
    "filter_recording",
    "model_equations",
    "model_names",
    "motor_columns",
    "prepare_all",
    "prepare_bag",
    "read_recording",
]

CHECK_EVERY = 10
"""Along a bag, the closed-loop solution's branch and conditioning are checked every this many samples."""

MAX_TRIM_FRACTION = 0.1
"""The default trim (``1.5 / cutoff`` at each end) takes at most this fraction of a run at each end."""


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


@dataclass(frozen=True)
class Recording:
    """Step 1's output: the joint-side series of one recording.

    Attributes:
        series: the series (resampled, renamed, joint side); bag: its path;
        t: time from the first stamp (N,) (s); sample_rate_hz: its rate;
        positions: measured joints' positions (N, n_m); efforts: actuated joints' efforts (N, n_a);
        notes: what was done to the data on the way.
    """

    series: JointStateSeries
    bag: Path
    t: np.ndarray
    sample_rate_hz: float
    positions: np.ndarray
    efforts: np.ndarray
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Filtered:
    """Step 2's output.

    Attributes:
        derivatives: band-pass estimates of the measured positions and their derivatives (N, n_m);
        torque: the low-passed actuator torques at their true time (N, n_a);
        keep: the samples kept (trimmed, one in ``n_1``) (N_kept,);
        cutoff_hz: derivative cut-off; step_s: time between kept samples (s);
        notes: what the filtering did that the user should know (a trim shortened for a short run).
    """

    derivatives: Derivatives
    torque: np.ndarray
    keep: np.ndarray
    cutoff_hz: float
    step_s: float
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class States:
    """Step 3's output: tree states at the kept samples (N_kept, nv), and the first sample's configuration (nv,)."""

    q: np.ndarray
    qdot: np.ndarray
    qddot: np.ndarray
    start_q: np.ndarray


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


def read_recording(robot: Robot, source: Source, data: DataSettings,
                   transmission: Transmission | None = None) -> Recording:
    """Step 1: the joint-side series of ``source`` (a bag path or a series) and the notes on its efforts."""
    series = joint_side_series(source, robot, topic=data.topic, joint_map=dict(data.joint_map or ()),
                               transmission=transmission, max_gap=data.max_gap)
    positions = series.position[:, series.columns(robot.measured_names)]
    efforts = series.effort[:, series.columns(robot.actuated_names)]
    bag = Path(series.bag_path)
    notes = (*series.notes, *effort_notes(bag.name, robot.actuated_names, efforts, positions[:, :efforts.shape[1]],
                                               min_motion(robot, robot.actuated_names)))
    # time from the first stamp, from the integer stamps: epoch seconds in float64 resolve only 0.24 us
    t = (series.stamp_ns - series.stamp_ns[0]).astype(np.float64) * 1e-9  # (N,) s
    sample_rate = 1.0 / float(np.median(np.diff(t)))
    return Recording(series, bag, t, sample_rate, positions, efforts, notes)


def filter_recording(robot: Robot, recording: Recording, filters: FilterSettings, data: DataSettings) -> Filtered:
    """Step 2: derivative cut-off and band-pass derivatives, torques low-passed and delayed, samples kept.

    ``data`` says how old the efforts are and whether the rotor model makes them link-side torques.
    """
    t, sample_rate, series = recording.t, recording.sample_rate_hz, recording.series
    first, second = filters.stages(sample_rate)
    ceiling = decimation_cutoff_hz(sample_rate, factor=filters.decimation)
    if filters.cutoff_hz is not None:
        cutoff = filters.cutoff_hz
    else:
        bandwidth = filters.bandwidth_hz or dominant_bandwidth_hz(t, recording.positions)
        cutoff = min(filters.bandwidth_factor * bandwidth, ceiling)
    trim, notes = filters.trim_s, ()
    if trim is None:  # the filters' transients, at most a tenth of a run longer than both transients together
        duration = float(t[-1] - t[0])
        trim = 1.5 / cutoff
        if duration >= 2 * trim and MAX_TRIM_FRACTION * duration < trim:
            trim = MAX_TRIM_FRACTION * duration
            notes = (f"{recording.bag.name}: {duration:.3g} s long: trimmed {trim:.3g} s at each end "
                     f"({100 * MAX_TRIM_FRACTION:.0f} % of the run) instead of {1.5 / cutoff:.3g} s (1.5 / cut-off): "
                     "the filters' start and end transients may remain; --trim S sets it",)
    derivatives = estimate_derivatives(t, recording.positions, cutoff_hz=cutoff, order=filters.filter_order)
    model_rate = sample_rate / first
    delay = 0.5 / sample_rate if data.effort_delay_s is None else data.effort_delay_s
    efforts = recording.efforts
    if data.rotor_model is not None:  # link-side torque from the motor-side encoders, sample by sample
        efforts = compensate_bag_torques(recording.bag, robot, series.t, efforts, data.rotor_model,
                                         topic=data.motor_topic, cutoff_hz=ceiling, order=filters.filter_order,
                                         delay_s=delay)
    torque = zero_phase_lowpass(efforts, sample_rate_hz=sample_rate, cutoff_hz=0.8 * model_rate / 2,
                                order=filters.filter_order)
    if delay:
        # torque(t) = effort stamped t + delay: interpolate the (band-limited) efforts
        torque = np.column_stack([np.interp(t + delay, t, column) for column in torque.T])
    keep = np.arange(int(math.ceil(trim * sample_rate)), len(series.t) - int(math.ceil(trim * sample_rate)), first)
    if keep.size < 8 * second + 8:
        raise BagError(
            f"{series.t[-1] - series.t[0]:.3f} s of data is too short to "
            f"identify (trim {trim:.3f} s at each end, decimation {filters.decimation})",
            bag=recording.bag, topic=series.topic, kind="count",
        )
    return Filtered(derivatives, torque, keep, cutoff, first / sample_rate, notes)


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


def closed_loop_states(robot: Robot, recording: Recording, filtered: Filtered, model: ModelSettings, *,
                       show_progress: bool = False) -> States:
    """Step 3: the tree states at the kept samples (eqs. 21, 24).

    A serial robot with every joint measured: the readings. Otherwise sample by sample from a second-order
    prediction, the branch and conditioning checked every :data:`CHECK_EVERY` samples: in C when the robot has
    compiled kernels (:mod:`pardyn.kernels`, the Python loop taking over at the first sample that is not the plain
    case), else the whole bag at once where :mod:`pardyn.kinematics.batch` applies (``model.batch_kinematics``),
    else in Python.
    """
    series, bag, positions, keep = recording.series, recording.bag, recording.positions, filtered.keep
    derivatives, step = filtered.derivatives, filtered.step_s
    count = keep.size
    q = np.empty((count, robot.nv))
    qdot = np.empty_like(q)
    qddot = np.empty_like(q)
    measured = robot.measured_indices
    n_a = len(robot.actuated_names)
    first_sensed = positions[0, n_a:] if positions.shape[1] > n_a else None
    start = start_q = robot.solve_forward(positions[0, :n_a], sensed=first_sensed, start=robot.home).q
    rows = range(count)
    if robot.closures.size == 0 and sorted(measured) == list(range(robot.nv)):
        # no loop to close and every joint measured (a serial robot): the states are the readings
        q[:, measured], qdot[:, measured], qddot[:, measured] = (
            derivatives.q[keep], derivatives.qdot[keep], derivatives.qddot[keep])
        rows = ()
    elif robot.kernels is not None:
        # the compiled kernels (pardyn.kernels): the sample-by-sample loop below in one C call, up to the first
        # sample that is not the plain case (budget spent, branch, singular), from which the loop below goes on
        problem = CompiledSolver.FORWARD if len(measured) == n_a else CompiledSolver.FORWARD_SENSED
        done, q, qdot, qddot = robot.kernels.series(problem, derivatives.q[keep], derivatives.qdot[keep],
                                                    derivatives.qddot[keep], start_q, step, CHECK_EVERY)
        rows = range(done, count)
    elif model.batch_kinematics and closed_loop_batch.supports(robot):
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
    return States(q, qdot, qddot, start_q)


def model_equations(robot: Robot, regressor: Regressor, states: States, torque: np.ndarray,
                    transmission: Transmission | None) -> tuple[np.ndarray, np.ndarray]:
    """Step 4: ``W`` (N, rows, n) and ``Gamma`` (N, rows) of the regressor's model, coupled motors' columns last."""
    observation, gamma = regressor.equations(states.q, states.qdot, states.qddot, torque)
    extra = motor_columns(robot, regressor, transmission, states.qdot, states.qddot)
    if extra is not None:
        observation = np.concatenate([observation, extra], axis=2)
    return observation, gamma


_PREPARED: ContextVar[dict[tuple, tuple[Robot, object, BagData]] | None] = ContextVar(
    "pardyn_prepared_bags", default=None)


@contextlib.contextmanager
def prepared_once() -> Iterator[None]:
    """Within the block, :func:`prepare_bag` prepares each bag once (module docstring).

    A bag is told apart by its path (a series: the object), the robot object, and the ``repr`` of the data,
    filter and model settings (the regressor follows from the robot and the model settings). The arrays handed
    out are read-only: a caller that changed one in place would change every later identification's.
    """
    token = _PREPARED.set({})
    try:
        yield
    finally:
        _PREPARED.reset(token)


def prepare_bag(
    robot: Robot,
    regressor: Regressor,
    bag: Source,
    settings: IdentificationSettings,
    *,
    show_progress: bool = False,
) -> BagData:
    """Steps 1-4 (module docstring) for one bag (or series read from CSV files), at the model rate; once per bag
    within :func:`prepared_once`."""
    kept = _PREPARED.get()
    if kept is None:
        return _prepare_bag(robot, regressor, bag, settings, show_progress)
    key = (str(bag) if isinstance(bag, str | Path) else id(bag), id(robot), repr(settings.data),
           repr(settings.filter), repr(settings.model))
    found = kept.get(key)
    if found is not None and found[0] is robot:
        return found[2]
    data = _prepare_bag(robot, regressor, bag, settings, show_progress)
    for values in (data.t, data.q, data.qdot, data.qddot, data.torque, data.observation, data.measured, data.start_q):
        if values is not None:
            values.setflags(write=False)
    kept[key] = (robot, bag if not isinstance(bag, str | Path) else None, data)  # a series object stays alive
    return data


def _prepare_bag(robot: Robot, regressor: Regressor, bag: Source, settings: IdentificationSettings,
                 show_progress: bool) -> BagData:
    clock = time.perf_counter()
    recording = read_recording(robot, bag, settings.data, settings.model.transmission)
    timings = {"read_s": time.perf_counter() - clock}
    clock = time.perf_counter()
    filtered = filter_recording(robot, recording, settings.filter, settings.data)
    timings["filter_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    states = closed_loop_states(robot, recording, filtered, settings.model, show_progress=show_progress)
    timings["kinematics_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    torque = filtered.torque[filtered.keep]
    observation, gamma = model_equations(robot, regressor, states, torque, settings.model.transmission)
    timings["regressor_s"] = time.perf_counter() - clock
    return BagData(
        path=recording.bag, t=recording.series.t[filtered.keep], q=states.q, qdot=states.qdot, qddot=states.qddot,
        torque=torque, observation=observation, measured=gamma, cutoff_hz=filtered.cutoff_hz,
        sample_rate_hz=recording.sample_rate_hz, timings=timings, notes=(*recording.notes, *filtered.notes),
        start_time=float(recording.series.t[0]), start_q=states.start_q,
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


def model_names(regressor: Regressor, model: ModelSettings) -> tuple[str, ...]:
    """Column names of the identification model: the standard parameters, then the coupled motors'."""
    extra = model.transmission.column_names if model.transmission is not None else ()
    return tuple(regressor.names) + tuple(extra)


def _prepare_job(shared: tuple, path: Path) -> BagData:
    robot, regressor, settings = shared
    return prepare_bag(robot, regressor, path, settings)


def prepare_all(
    robot: Robot, regressor: Regressor, paths: Sequence[Source], settings: IdentificationSettings, *,
    show_progress: bool,
) -> list[BagData]:
    """:func:`prepare_bag` on every bag, as tasks of :mod:`pardyn.distributed` (``settings.data.workers``).

    ``workers=None`` or 1: in this process. Preparing a bag takes a fraction of a second to a few seconds;
    shipping the robot and its regressor to workers (and starting a cluster, 1-2 s) does not pay for a few
    bags (measured: the identification tests 20 % slower on a running two-worker cluster).
    """
    workers = settings.data.workers or 1
    label = f"preparing {len(paths)} bags"
    if workers == 1 or len(paths) == 1:  # the same progress line as the workers' (one per run)
        items = progress(paths, total=len(paths), label=label) if show_progress and len(paths) > 1 else paths
        return [prepare_bag(robot, regressor, path, settings, show_progress=show_progress) for path in items]
    return parallel_map(_prepare_job, (robot, regressor, settings), paths, workers=workers,
                        label=label if show_progress else None)


def decimated_system(data: BagData, regressor: Regressor, filters: FilterSettings, model: ModelSettings) -> LinearSystem:
    """Step 5 for one bag: ``Y`` and ``W`` low-passed and decimated (eq. 40's second stage), slow samples dropped."""
    _, second = filters.stages(data.sample_rate_hz)
    system = decimate(data.measured, data.observation, factor=second, order=filters.filter_order,
                      names=model_names(regressor, model))
    if filters.min_speed is None:
        return system
    if regressor.projection != "standard":
        raise InputError("minimum speeds: only with the standard model (one equation row per actuated joint)")
    rows = [regressor.robot.joint_names.index(name) for name in regressor.row_names]
    speeds = decimate(data.qdot[:, rows], np.zeros((len(data.t), len(rows), 1)), factor=second,
                      order=filters.filter_order).Y
    selected, _ = drop_slow_samples(system, speeds, filters.min_speed, row_names=regressor.row_names)
    return selected
