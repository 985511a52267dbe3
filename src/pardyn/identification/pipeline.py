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
7. **WLS** (eq. 48), standard deviations (eqs. 45-47) -- or another registered estimator
   (``settings.estimator``, :mod:`pardyn.identification.estimators`) --, **essential parameters**
   (iterative removal until ``max/min %sigma < r_sigma``, or until the next removal
   would let the fit error grow beyond ``1 + essential_tolerance`` times the base
   model's). A model whose fit collapsed (relative error norm above
   ``max_fit_error``, or an essential model outside the tolerance) is refused
   (:class:`~pardyn.identification.errors.FitCollapsedError`): nothing is written.
8. **Physically consistent estimate** (``settings.fit.physical``, UR5e paper Sect. 6 point 3):
   standard parameters with every body's pseudo-inertia positive definite and
   friction >= 0 (of either sign after rotor compensation: residuals of the rotor
   model), fitted to the same weighted system
   (:mod:`pardyn.identification.physical`), reported beside the unconstrained one.
9. **Validation** on other bags: actuator torques predicted by the identified
   (essential) model -- the minimum-norm, zero-internal-stress torques on a
   redundant robot, as the paper's Table 3 -- against the measured ones, and
   the same for the nominal (CAD) model (and the physically consistent one).

The steps live in their rooms: settings in :mod:`.settings` (five groups, each step takes its own),
steps 1-5 in :mod:`.preparation`, the estimators in :mod:`.estimators`, step 9 in
:mod:`pardyn.identification.validation`, the result and RESULT.json in :mod:`.result`. This module is the
story that chains them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import threadpool_limits

from pardyn.bags.joint_states import JointStateSeries
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.lumped import DYNAMIC_MODELS, bar_parameter_names, two_end_bars
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.dynamics.regressor import Regressor
from pardyn.errors import InputError
from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.diagnostics import (
    delay_note,
    effort_delay_s,
    MIN_MOTION,
    efforts_all_zero,
    min_motion,
    physical_notes,
    scale_notes,
    speed_notes,
)
from pardyn.identification.drive_gains import DriveGains, gain_system, gain_units, solve_drive_gains
from pardyn.identification.errors import FitCollapsedError, MissingRecordingError
from pardyn.identification.estimators import (
    ESTIMATORS,
    EstimatorContext,
    EstimatorResult,
    SimulatedSystem,
    estimate,
    estimator_options,
)
from pardyn.identification.filtering import decimate
from pardyn.identification.identifiability import (
    Identifiability,
    compare_bases,
    exact_blocks,
    structural_base,
)
from pardyn.identification.least_squares import (
    EssentialParameters,
    Estimate,
    LinearSystem,
    block_sigmas,
    essential_parameters,
    payload_system,
    stack_systems,
    wls,
)
from pardyn.identification.preparation import BagData, decimated_system, model_names, prepare_all, prepare_bag
from pardyn.identification.result import IdentificationResult, Validation
from pardyn.identification.selection import near_reversals
from pardyn.identification.settings import MODELS, FitSettings, IdentificationSettings
from pardyn.identification.metrics import relative_error_norm
from pardyn.identification.model_simulation import (ClosedLoopSetup, ModelSimulationError, ModelSimulator,
                                                   SharedRuns)
from pardyn.identification.sources import Source
from pardyn.identification.truth import TruthComparison, compare_with_truth
from pardyn.identification.validation import validate

if TYPE_CHECKING:
    from pardyn.identification.physical import PhysicalEstimate
    from pardyn.plants.payload import Payload
    from pardyn.robot import Robot

__all__ = [
    "MODELS",
    "IdentificationResult",
    "IdentificationSettings",
    "Validation",
    "check_fit",
    "identify",
    "identify_drive_gains",
    "prepare_bag",
]


def identify(
    robot: Robot,
    bags: Sequence[Source],
    *,
    loaded_bags: Sequence[Source] = (),
    validate_bags: Sequence[Source] = (),
    settings: IdentificationSettings | None = None,
    closed_loop: Sequence[ClosedLoopSetup] | None = None,
    show_progress: bool = True,
    truth: Mapping[str, float] | None = None,
    shared_runs: SharedRuns | None = None,
) -> IdentificationResult:
    """Identify ``robot``'s dynamic parameters from bags (module docstring for the steps).

    Args:
        robot: the robot (its YAML's nominal parameters give the parameter layout).
        bags: bags recorded without payload, or joint-state series (CSV files,
            :func:`pardyn.recordings.csv_series.read_csv_series`).
        loaded_bags: bags (series) recorded with the payload fixed to the platform (eq. 49): the robot's
            ``payload`` body, else one on its task frame (:meth:`~pardyn.robot.Robot.with_payload_body`).
        validate_bags: held-out bags (series) without payload, for cross-validation.
        settings: pipeline settings (defaults: the papers' recipe).
        closed_loop: a closed-loop estimator (iv, didim): the controller and reference of each
            bag (``bags`` then ``loaded_bags``), to simulate the model as it was run.
        show_progress: progress lines on stderr.
        truth: the true standard parameters by name, when known (simulated runs): the result compares
            the identified base parameters with them and gives their own held-out error
            (:mod:`pardyn.identification.truth`).
        shared_runs: closed-loop estimators: the model's run at the start of the iteration kept for other calls on
            the same bags and setups (:class:`~pardyn.identification.model_simulation.SharedRuns`: several
            estimators on one recording simulate their common start once).

    Raises:
        BagError: a bag that cannot be used (the message names bag, topic and time).
        InputError: inconsistent settings or data that excite nothing.
    """
    # Small dense problems (tens of columns): BLAS threads only contend for the cores (measured on the
    # TX40: 34 s with OpenBLAS's default threads on a loaded 2-core machine, 6.5 s with one).
    with threadpool_limits(limits=1, user_api="blas"):
        return _identify(robot, bags, loaded_bags=loaded_bags, validate_bags=validate_bags,
                         settings=settings or IdentificationSettings(), closed_loop=closed_loop,
                         show_progress=show_progress, truth=truth, shared_runs=shared_runs)


def _identify(robot: Robot, bags: Sequence[Source], *, loaded_bags: Sequence[Source],
              validate_bags: Sequence[Source], settings: IdentificationSettings,
              closed_loop: Sequence[ClosedLoopSetup] | None, show_progress: bool,
              truth: Mapping[str, float] | None, shared_runs: SharedRuns | None = None) -> IdentificationResult:
    """:func:`identify` with the BLAS thread limit in place: the story, one step a line."""
    _check_settings(robot, bags, settings)
    if loaded_bags:  # a robot without a 'payload' link carries its load on its task frame (Robot.payload_frame)
        robot = robot.with_payload_body()
    clock = time.perf_counter()
    regressor = Regressor(robot, projection=settings.model.projection(robot), projected=settings.model.projected)
    sources = [_source(b) for b in [*bags, *loaded_bags]]
    every = prepare_all(robot, regressor, sources, settings, show_progress=show_progress)  # steps 1-4
    timings = _summed_timings(every)
    unloaded, loaded = _with_efforts(every[: len(bags)]), _with_efforts(every[len(bags):])  # all-zero runs out
    payload_columns = _payload_columns(regressor)
    if not unloaded:
        raise InputError(f"{', '.join(str(d.path) for d in every[: len(bags)])}: the efforts of every run are all "
                         "zero (planned trajectories logged without torques?): give runs that recorded the efforts")
    scale = _scale_notes(robot, unloaded[0])

    clock_step = time.perf_counter()
    system = _assemble(unloaded, loaded, regressor, settings, payload_columns)  # step 5
    if settings.model.dynamic_model == "simplified":  # the two-end bars' columns go: their ends' bodies absorb them
        dropped = set(bar_parameter_names(robot))
        system = system.select([k for k, name in enumerate(system.names) if name not in dropped])
    timings["decimate_s"] = time.perf_counter() - clock_step
    clock_step = time.perf_counter()
    system = _without_still_drives(robot, system, [*unloaded, *loaded])
    system = _without_silent_blocks(regressor, system, [*unloaded, *loaded])
    system, rests = _without_rests(robot, regressor, system, [*unloaded, *loaded], settings)
    labels = _block_labels(regressor.row_names, unloaded, loaded)
    sigmas, weighting = _block_weights(system, settings, labels)  # eq. (48), or OLS when undefined
    base, reduced = _base_system(system, settings, sources, sigmas)  # step 6, on the matrix solved
    identifiability = _identifiability(robot, regressor, system, base, [*unloaded, *loaded], settings)
    timings["qr_s"] = time.perf_counter() - clock_step

    clock_step = time.perf_counter()
    solved = reduced if sigmas is not None else LinearSystem(reduced.W, reduced.Y, (reduced.rows,), reduced.names)
    weighted = wls(solved.W, solved.Y, block_sizes=solved.block_sizes, names=solved.names,
                   rank_eps=_solver_eps(settings))
    essential = essential_parameters(solved.W, solved.Y, names=solved.names, block_sizes=solved.block_sizes,
                                     ratio=settings.fit.r_sigma, fit_tolerance=settings.fit.essential_tolerance,
                                     rank_eps=_solver_eps(settings))
    estimator = _run_estimator(robot, regressor, base, solved, weighted, unloaded, loaded, settings,
                               payload_columns, closed_loop, show_progress, shared_runs)  # step 7
    timings["solve_s"] = time.perf_counter() - clock_step
    check_fit(estimator.estimate, essential, settings)
    physical = _estimator_physical(estimator, solved) if estimator.physical is not None else (
        _physical(system, base, robot, estimator.estimate, settings) if settings.fit.physical else None)
    if physical is not None:
        timings["physical_s"] = physical.solve_time_s  # step 8

    chosen = essential.estimate if settings.fit.parameters == "essential" else estimator.estimate
    parameters, motor_values = _standard_parameters(robot.nominal_parameters, base, system.names, chosen)
    timings["total_s"] = time.perf_counter() - clock
    validation = _validate_all(robot, validate_bags, settings, regressor, parameters, physical, motor_values)  # 9
    found = [*rests, *weighting, *identifiability.notes(),
             *_residual_notes(robot, regressor, unloaded, parameters, motor_values, settings, solved, estimator.estimate),
             *physical_notes(estimator.estimate.names, estimator.estimate.chi, estimator.estimate.std,
                             robot.nominal_parameters.as_dict(),
                             physical=None if physical is None else _base_values(base, physical.parameters),
                             reach=_reach(robot), effort_range=_effort_range(robot, [*unloaded, *loaded]))]
    compared = None if truth is None else _compare_with_truth(
        base, estimator.estimate, system.names, truth, bool(loaded),
        [_truth_floor(robot, b, settings, regressor, truth, motor_values) for b in validate_bags])

    first_blocks = np.array(reduced.block_sizes[: len(regressor.row_names)], dtype=int)  # first bag, per row
    fit_rows = int(first_blocks.sum())
    return IdentificationResult(
        robot=robot.name, model=settings.model.model_name(robot), settings=settings,
        samples=int(sum(len(d.t) for d in every)), equations=reduced.rows, base=base,
        estimate=estimator.estimate, essential=essential, estimator=estimator, parameters=parameters,
        row_names=regressor.row_names, fit_blocks=labels,
        cutoff_hz=float(np.mean([d.cutoff_hz for d in every])),
        sample_rate_hz=float(np.mean([d.sample_rate_hz for d in every])),
        payload=_payload(base, estimator.estimate) if loaded else None, validation=validation,
        fit_series={"measured": reduced.Y[:fit_rows], "predicted": estimator.estimate.prediction[:fit_rows],
                    "block_sizes": first_blocks},
        timings=timings, physical=physical, motor_parameters=motor_values,
        notes=tuple(dict.fromkeys([*(note for d in every for note in d.notes), *scale, *found])),
        identifiability=identifiability, truth=compared,
    )


def identify_drive_gains(robot: Robot, bags: Sequence[Source], loaded_bags: Sequence[Source], payload: Payload, *,
                         settings: IdentificationSettings | None = None, nominal: Mapping[str, float] | None = None,
                         show_progress: bool = True) -> DriveGains:
    """Each actuated joint's drive gain (N m/A) from runs whose efforts are currents (A), without and with a
    payload whose parameters are known: (G1)-(G3) of :mod:`pardyn.identification.drive_gains`.

    Steps 1-5 as :func:`identify` (the runs read, filtered, decimated the same way); then the gains and the
    dynamic parameters from one system, the known payload torque on its right-hand side. ``nominal``: the
    maker's gains, compared with and standing in for a gain the runs do not fix.

    Raises:
        InputError: no loaded run, a model other than the standard one, coupled motors or rotor compensation
            (their efforts are not one current per joint), or a gain the runs do not fix (one line each).
    """
    settings = settings or IdentificationSettings()
    _check_settings(robot, bags, settings)
    if not loaded_bags:
        raise InputError("drive gains: give runs with the known payload on (--loaded-run) beside the runs without")
    if settings.model.projection(robot) != "standard" or settings.model.transmission is not None \
            or settings.data.rotor_model is not None or settings.model.dynamic_model != "exact":
        raise InputError("drive gains are identified with the standard exact model, one current per actuated joint "
                         "(no --model case1/case2, transmissions, rotor compensation or simplified model)")
    if payload.mass <= 0.0:
        raise InputError(f"drive gains: the known payload must have a mass > 0 kg, got {payload.mass:g}")
    with threadpool_limits(limits=1, user_api="blas"):
        robot = robot.with_payload_body()
        regressor = Regressor(robot)
        every = prepare_all(robot, regressor, [_source(b) for b in [*bags, *loaded_bags]], settings,
                            show_progress=show_progress)
        unloaded, loaded = every[: len(bags)], every[len(bags):]
        columns = _payload_columns(regressor)
        full = _without_still_drives(robot, _assemble(unloaded, loaded, regressor, settings, columns), every)
        full, _ = _without_rests(robot, regressor, full, every, settings)  # sign(qdot) flips there: G1's worst rows
        split = sum(full.block_sizes[: len(unloaded) * len(regressor.row_names)])
        sizes = full.block_sizes
        parts = [LinearSystem(full.W[rows], full.Y[rows], blocks, full.names)
                 for rows, blocks in ((slice(0, split), sizes[: len(unloaded) * len(regressor.row_names)]),
                                      (slice(split, None), sizes[len(unloaded) * len(regressor.row_names):]))]
        system = gain_system(*parts, payload=columns, payload_values=_payload_values(robot, payload),
                             joints=regressor.row_names)
        return solve_drive_gains(system, joints=regressor.row_names, units=gain_units(robot, regressor.row_names), payload_mass_kg=payload.mass,
                                 nominal=nominal, rank_eps=settings.fit.rank_eps)


def _payload_values(robot: Robot, payload: Payload) -> np.ndarray:
    """The known payload's 10 standard parameters (eq. 2 order) in the frame of the robot's ``payload`` body."""
    from pardyn.dynamics.parameters import standard_from_inertia  # noqa: PLC0415

    body = next(b for b in robot.nominal_parameters.bodies if b.name == "payload")
    joint, inertia = payload.joint_inertia(robot.model)
    if joint != body.joint:
        raise InputError(f"payload: frame {payload.frame!r} is not on the link that carries the robot's payload "
                         f"({robot.payload_frame!r}); give a frame of that link")
    return standard_from_inertia(body.placement.actInv(inertia))


def _reach(robot: Robot) -> float:
    """The robot's size (m): the joint placements' lengths summed, a bound on any body's centre of mass distance."""
    return float(sum(np.linalg.norm(robot.model.jointPlacements[j].translation) for j in range(1, robot.model.njoints)))


def _effort_range(robot: Robot, runs: Sequence[BagData]) -> dict[str, float]:
    """The largest |effort| each actuated joint logged over the runs (N m or N)."""
    return {name: float(max(np.max(np.abs(d.torque[:, j])) for d in runs))
            for j, name in enumerate(robot.actuated_names)}


def _with_efforts(runs: Sequence[BagData]) -> list[BagData]:
    """The runs that recorded efforts: a run whose efforts are all zero (a planned trajectory) gives no equation
    (its data note says it is excluded)."""
    return [d for d in runs if not efforts_all_zero(d.torque)]


def _motion(runs: Sequence[BagData]) -> np.ndarray:
    """Each tree joint's largest peak-to-peak motion within one run (nv,) (rad or m)."""
    return np.max([np.ptp(d.q, axis=0) for d in runs], axis=0)


def _without_silent_blocks(regressor: Regressor, system: LinearSystem, runs: Sequence[BagData]) -> LinearSystem:
    """The equations of a joint whose efforts are constant in a run (not measured) set to ``0 = 0``.

    They would pull its parameters towards what explains a constant; as zero rows they weigh nothing
    and the layout (one block per run and row) stays. Such a block is fitted exactly, so the WLS
    weights become undefined and the system is solved by OLS (:func:`_block_weights` says so). Standard
    model only (its rows are the actuated joints' efforts).
    """
    if regressor.projection != "standard":
        return system
    slices = system.block_slices()
    silent = [slices[r * len(regressor.row_names) + j] for r, data in enumerate(runs)
              for j in range(len(regressor.row_names)) if np.ptp(data.torque[:, j]) == 0.0]
    if not silent:
        return system
    W, Y = system.W.copy(), system.Y.copy()
    for part in silent:
        W[part], Y[part] = 0.0, 0.0
    return LinearSystem(W, Y, system.block_sizes, system.names)


def _without_still_drives(robot: Robot, system: LinearSystem, runs: Sequence[BagData]) -> LinearSystem:
    """The drive columns (``ia_``, ``fv_``, ``fs_``) of joints that hardly move set to zero: their speeds are
    filter noise, whose sign would make a Coulomb column out of nothing (they become unidentifiable, and the
    identifiability notes say why)."""
    motion = _motion(runs)
    still = {name for name, moved, limit in zip(robot.joint_names, motion, min_motion(robot, robot.joint_names))
             if moved < limit}
    columns = [k for k, name in enumerate(system.names) if name.partition("_")[0] in ("ia", "fv", "fs")
               and name.partition("_")[2] in still]
    if not columns:
        return system
    W = system.W.copy()
    W[:, columns] = 0.0
    return LinearSystem(W, system.Y, system.block_sizes, system.names)


def _without_rests(robot: Robot, regressor: Regressor, system: LinearSystem, runs: Sequence[BagData],
                   settings: IdentificationSettings) -> tuple[LinearSystem, list[str]]:
    """The equations written while a joint they hold a Coulomb term of is at rest set to ``0 = 0``; a data note.

    At a rest (the start and end of a run, a joint held still by dry friction) ``fs sign(qdot)`` flips on encoder
    noise and stiction holds any torque within ``+-fs``, which no column explains: zeroing the sign there would
    still leave that torque in ``Y``, so the equation goes (as zero rows it weighs nothing and the layout, one
    block per run and row, stays). Row ``j`` of a run at a sample is left out when any joint whose ``fs_`` column
    is non-zero in that block (its own; through a loop, passive joints too) is slower than
    ``settings.filter.rest_speed`` (decimated speeds, filtered as ``W``), or within
    ``settings.filter.reversal_window_s`` of a reversal of its speed. Joints that hardly move in the run are
    not tested (:func:`_without_still_drives` and the identifiability notes deal with them). Not done when
    minimum speeds are given (they are the user's selection), for other models than the standard one, or for
    closed-loop estimators (they rebuild the rows from simulations).
    """
    limit = settings.filter.rest_speed
    if (limit is None or settings.filter.min_speed is not None or regressor.projection != "standard"
            or ESTIMATORS.get(settings.estimator.name).closed_loop):
        return system, []
    coulomb = {name.partition("_")[2]: k for k, name in enumerate(system.names)
               if name.startswith("fs_") and np.any(system.W[:, k])}
    if not coulomb:
        return system, []
    joints = list(coulomb)
    indices = [robot.joint_names.index(name) for name in joints]
    thresholds = limit * min_motion(robot, joints) / MIN_MOTION  # a prismatic joint: the same encoder steps
    rows, slices = len(regressor.row_names), system.block_slices()
    W, Y = system.W.copy(), system.Y.copy()
    left_out, written = np.zeros(rows, dtype=int), np.zeros(rows, dtype=int)
    for r, data in enumerate(runs):
        _, second = settings.filter.stages(data.sample_rate_hz)
        speeds = decimate(data.qdot[:, indices], np.zeros((len(data.t), len(indices), 1)), factor=second,
                          order=settings.filter.filter_order).Y.reshape(len(indices), -1).T  # (N_d, joints)
        moving = np.ptp(data.q[:, indices], axis=0) >= min_motion(robot, joints)
        period = second * float(np.median(np.diff(data.t)))
        resting = ((np.abs(speeds) < thresholds)
                   | near_reversals(speeds, period, settings.filter.reversal_window_s)) & moving
        for j in range(rows):
            part = slices[r * rows + j]
            coupled = [c for c, name in enumerate(joints) if np.any(W[part, coulomb[name]])]
            at_rest = part.start + np.flatnonzero(resting[:, coupled].any(axis=1))
            W[at_rest], Y[at_rest] = 0.0, 0.0
            left_out[j] += at_rest.size
            written[j] += part.stop - part.start
    if not left_out.any():
        return system, []
    window = settings.filter.reversal_window_s
    reversal = f" or was within {window:g} s of a reversal" if window > 0 else ""
    counts = ", ".join(f"{name} {count} of {total}" for name, count, total
                       in zip(regressor.row_names, left_out, written) if count)
    if not W.any():  # nothing left to identify from: say which setting did it, not that W is zero
        raise InputError(
            f"rests: every equation left out ({counts}): at each sample a joint with a Coulomb term in it moved "
            f"slower than {limit:g} rad/s{reversal}; lower the rest speed (--rest-speed, settings "
            "filter.rest_speed)" + (" or the reversal window (--reversal-window, settings filter.reversal_window_s)"
                                    if window > 0 else "") + ", or give 0 to keep the rests")
    note = (f"rests: equations left out ({counts}) where a joint with a Coulomb term in them moved slower than "
            f"{limit:g} rad/s{reversal}: held by dry friction there, fs sign(qdot) flips on encoder noise and the stiction "
            "torque has no column (--rest-speed, settings filter.rest_speed: 0 keeps them; minimum speeds "
            "replace this selection)")
    return LinearSystem(W, Y, system.block_sizes, system.names), [note]


def _identifiability(robot: Robot, regressor: Regressor, system: LinearSystem, base: BaseParameters,
                     runs: Sequence[BagData], settings: IdentificationSettings) -> Identifiability:
    """The runs' base parameters against the model's structural ones (:mod:`.identifiability`)."""
    structural = structural_base(robot, regressor, system.names, eps=settings.fit.rank_eps)
    motion = dict(zip(robot.joint_names, _motion(runs).tolist()))
    torque = [d.torque for d in runs]
    silent = [name for j, name in enumerate(robot.actuated_names) if all(np.ptp(t[:, j]) == 0.0 for t in torque)]
    body_joints = {body.name: robot.model.names[body.joint] for body in robot.nominal_parameters.bodies}
    limits = dict(zip(robot.joint_names, min_motion(robot, robot.joint_names).tolist()))
    return compare_bases(structural, base, motion=motion, silent=silent, body_joints=body_joints, min_motion=limits)


def _block_weights(system: LinearSystem, settings: IdentificationSettings,
                   labels: Sequence[str]) -> tuple[np.ndarray | None, list[str]]:
    """Eq. (48)'s ``sigma_j`` of every block (each block's own OLS on the standard columns), or ``None`` with a
    note when OLS replaces WLS.

    Computed before the rank decision, which is made on the weighted matrix (:func:`_base_system`). WLS
    needs each block's error deviation: when some blocks are fitted exactly (efforts the model reproduces
    to round-off, e.g. a joint whose efforts are zero while it does not move) and others are not, the
    weights are undefined and the system is solved as one block (OLS, eqs. 44-47).
    """
    try:
        return block_sigmas(system, rank_eps=settings.fit.rank_eps), []
    except InputError:
        exact = exact_blocks(system, rank_eps=settings.fit.rank_eps)
        if not exact:
            raise
        note = (f"OLS instead of WLS: the equations of {', '.join(labels[k] for k in exact[:4])}"
                f"{' ...' if len(exact) > 4 else ''} are fitted exactly (efforts not measured: left out, or "
                "noise-free) while others are not: the WLS weights are undefined")
        return None, [note]


SOLVER_MARGIN = 1e-4
"""The estimators' own QR test is ``SOLVER_MARGIN x rank_eps``: a round-off guard, not a second rank decision.

The rank is decided once, on the weighted matrix (:func:`_base_system`); the estimators solve the same
columns with weights recomputed on them and in another column order, which moves ``|R_kk|`` by the
ratio of the weights and of the column norms, never by 1e4."""


def _solver_eps(settings: IdentificationSettings) -> float:
    return settings.fit.rank_eps * SOLVER_MARGIN


def _residual_notes(robot: Robot, regressor: Regressor, runs: Sequence[BagData], parameters: DynamicParameters,
                    motor_values: dict[str, float], settings: IdentificationSettings, solved: LinearSystem,
                    estimate_: Estimate) -> list[str]:
    """The identified model against the runs without payload (standard model: one row per actuated joint).

    Friction near zero speed (:func:`~pardyn.identification.diagnostics.speed_notes`, unless minimum speeds
    are given) on the decimated equations, where the measured and the modelled torques went through the same
    low-pass (eq. 40): before it, the efforts' filter rings at every Coulomb step the model's ``sign`` does
    not have. Each run's effort delay by least squares over shifts at the model rate (both zero-phase filtered).
    Joints that hardly move are left out (their speeds are noise).
    """
    if regressor.projection != "standard":
        return []
    rows = [robot.joint_names.index(name) for name in regressor.row_names]
    moving = _motion(runs)[rows] >= min_motion(robot, regressor.row_names)
    notes = []
    for data in runs:
        delay = 0.5 / data.sample_rate_hz if settings.data.effort_delay_s is None else settings.data.effort_delay_s
        notes += delay_note(data.path.name, *effort_delay_s(data.t, data.measured, data.observation), delay,
                            float(np.median(np.diff(data.t))))
    if settings.filter.min_speed is not None:
        return notes
    residual = solved.Y - estimate_.prediction
    speeds, residuals, start = [], [], 0
    for data in runs:  # the unloaded runs' equations come first, joint after joint (decimated_system's order)
        _, second = settings.filter.stages(data.sample_rate_hz)
        speed = decimate(data.qdot[:, rows], np.zeros((len(data.t), len(rows), 1)), factor=second,
                         order=settings.filter.filter_order).Y.reshape(len(rows), -1).T  # (N_d, rows)
        speeds.append(speed)
        residuals.append(residual[start:start + speed.size].reshape(len(rows), -1).T)
        start += speed.size
    label = runs[0].path.name if len(runs) == 1 else f"{len(runs)} runs"
    found = np.concatenate(residuals) * moving  # joints that hardly move: no note
    return speed_notes(label, regressor.row_names, np.concatenate(speeds), found)[0] + notes


def _base_values(base: BaseParameters, parameters: DynamicParameters) -> dict[str, float]:
    """Standard parameters -> the base parameters' values by name (standard names missing count 0)."""
    values = parameters.as_dict()
    return dict(zip(base.names, base.from_standard(np.array([values.get(n, 0.0) for n in base.standard_names]))))


def _compare_with_truth(base: BaseParameters, estimate_: Estimate, names: Sequence[str], truth: Mapping[str, float],
                        loaded: bool, floor: Sequence[float]) -> TruthComparison:
    """The identified base parameters against the truth's (the payload's unknown when a payload is identified)."""
    true = np.array([np.nan if loaded and name.endswith("_payload") else truth.get(name, np.nan) for name in names])
    return compare_with_truth(estimate_.names, estimate_.chi, estimate_.std, base.regrouping, true, floor)


def _truth_floor(robot: Robot, bag: Source, settings: IdentificationSettings, regressor: Regressor,
                 truth: Mapping[str, float], motor_values: dict[str, float]) -> float:
    """The true parameters' held-out relative error on ``bag``: the floor of this model on these data."""
    layout = robot.nominal_parameters
    true = layout.with_values({k: v for k, v in truth.items() if k in layout.names}).without_payload()
    model = InverseDynamics(robot, true)
    return validate(robot, _source(bag), settings, model, model, regressor, None, motor_values).relative_error_norm


def _source(bag: Source) -> Source:
    return bag if isinstance(bag, JointStateSeries) else Path(bag)


def _check_settings(robot: Robot, bags: Sequence[Source], settings: IdentificationSettings) -> None:
    """Refuse what cannot be identified before any bag is read (one line each)."""
    if not bags:
        raise InputError("at least one bag without payload is needed")
    model = settings.model
    if model.dynamic_model not in DYNAMIC_MODELS:
        raise InputError(f"dynamic model must be one of {list(DYNAMIC_MODELS)}, got {model.dynamic_model!r}")
    estimator = ESTIMATORS.get(settings.estimator.name)
    if model.dynamic_model == "simplified":
        two_end_bars(robot)  # the robot has one (else a one-line error naming its YAML)
        if estimator.closed_loop or settings.fit.physical:
            raise InputError("the simplified dynamic model is identified without closed-loop simulation "
                             f"({settings.estimator.name}) and without the physical estimate")


def _summed_timings(every: Sequence[BagData]) -> dict[str, float]:
    timings: dict[str, float] = {}
    for data in every:
        for key, value in data.timings.items():
            timings[key] = timings.get(key, 0.0) + value
    return timings


def _payload_columns(regressor: Regressor) -> list[int]:
    """The payload's standard columns (eq. 38); none when the robot carries no payload body."""
    try:
        return regressor.payload_columns().tolist()
    except InputError:
        return []


def _scale_notes(robot: Robot, first: BagData) -> list[str]:
    """The recorded efforts against the nominal model's torques on the first run (every 10th sample)."""
    nominal_torques = InverseDynamics(robot).torques_batch(first.q[::10], first.qdot[::10], first.qddot[::10])
    notes = scale_notes(first.path.name, robot.actuated_names, first.torque[::10], nominal_torques)
    limits = robot.description.limits.effort
    for j, name in enumerate(robot.actuated_names):  # an RMS beyond the drive's limit is no drive's effort
        rms = float(np.sqrt(np.mean(first.torque[:, j] ** 2))) if j < first.torque.shape[1] else 0.0
        if name in limits and j < first.torque.shape[1] and rms > limits[name]:
            notes.append(f"{first.path.name}: {name}: recorded efforts have RMS {rms:.4g}, beyond its effort limit "
                         f"{limits[name]:.4g} N m or N (limits.effort): another unit (mN m?) or a gear ratio? The "
                         "identified parameters are in the unit of the recorded efforts")
    return notes


def _base_system(system: LinearSystem, settings: IdentificationSettings, sources: Sequence[Source],
                 sigmas: np.ndarray | None) -> tuple[BaseParameters, LinearSystem]:
    """Step 6: base parameters by QR in eq. (43)'s column order, and the system on their columns.

    The one rank decision: made on the matrix the estimator solves, each block weighted by ``1 / sigma_j``
    (eq. 48; unweighted when OLS replaces WLS). A column is a base parameter when its weighted distance from
    the kept ones exceeds ``rank_eps`` of the largest (eq. 42); the identifiability report is built from
    this decision and the estimators solve exactly these columns.
    """
    rows, columns = system.W.shape
    if rows < columns:
        raise InputError(
            f"bags {[str(p) for p in sources]}: {rows} equations (samples x joints after decimation by "
            f"{settings.filter.decimation}) for {columns} standard parameters: the runs are too short, record longer runs"
        )
    weighted = system.W if sigmas is None else system.W * np.repeat(1.0 / sigmas, system.block_sizes)[:, None]
    base = base_parameters(weighted, names=system.names, order=symmetric_order(system.names),
                           eps=settings.fit.rank_eps)
    return base, base.reduce_system(system)


def _physical(system: LinearSystem, base: BaseParameters, robot: Robot, estimate_: Estimate,
              settings: IdentificationSettings) -> PhysicalEstimate:
    """Step 8: the physically consistent standard parameters fitted to the same weighted system."""
    from pardyn.identification.physical import physical_estimate  # noqa: PLC0415 - cvxpy on demand

    # after rotor compensation the link-side drive terms are residuals of the rotor model: either sign
    return physical_estimate(system, base, robot.nominal_parameters, block_sigmas=estimate_.block_sigmas,
                             **({} if settings.data.rotor_model is None else {"nonnegative_drive_parameters": ()}))


def _estimator_physical(estimator: EstimatorResult, solved: LinearSystem) -> PhysicalEstimate:
    """Step 8 of a physically consistent estimator (``pc_ekf``, ``pc_ukf``): its own standard parameters, the fit
    figures taken on the data system (the projection's own system is the filter's metric, not the data)."""
    lookup = dict(zip(estimator.physical.base_names, estimator.physical.base_values))
    prediction = solved.W @ np.array([lookup[name] for name in solved.names])
    blocks = np.array([relative_error_norm(solved.Y[s], prediction[s]) if np.any(solved.Y[s]) else np.nan
                       for s in solved.block_slices()])
    return replace(estimator.physical, relative_error=relative_error_norm(solved.Y, prediction),
                   block_relative_errors=blocks)


def _standard_parameters(layout: DynamicParameters, base: BaseParameters, names: Sequence[str],
                         chosen: Estimate) -> tuple[DynamicParameters, dict[str, float]]:
    """The chosen estimate as standard parameters, and the coupled motors' values.

    Each base value on its leading standard column, the regrouped and removed columns zero:
    ``W_st chi_st = W_base chi_base`` since ``W_base = W_st[:, independent]``.
    """
    vector = np.zeros(len(names))
    lookup = dict(zip(base.names, base.independent))
    for name, value in zip(chosen.names, chosen.chi):
        vector[lookup[name]] = value
    full = np.zeros(layout.size)
    motor_values = {}
    for name, value in zip(names, vector):
        if name in layout.names:
            full[layout.names.index(name)] = value
        else:  # a coupled motor's column (transmission)
            motor_values[name] = float(value)
    return layout.with_vector(full), motor_values


def _validate_all(robot: Robot, validate_bags: Sequence[Source], settings: IdentificationSettings,
                  regressor: Regressor, parameters: DynamicParameters, physical: PhysicalEstimate | None,
                  motor_values: dict[str, float]) -> tuple[Validation, ...]:
    """Step 9 on every held-out bag; the robot as identified carries no payload (validation bags are unloaded)."""
    if not validate_bags:
        return ()
    identified = InverseDynamics(robot, parameters.without_payload())
    nominal = InverseDynamics(robot)
    physical_model = None if physical is None else InverseDynamics(robot, physical.parameters.without_payload())
    return tuple(validate(robot, _source(b), settings, identified, nominal, regressor, physical_model, motor_values)
                 for b in validate_bags)


def _assemble(unloaded: Sequence[BagData], loaded: Sequence[BagData], regressor: Regressor,
              settings: IdentificationSettings, payload_columns: Sequence[int]) -> LinearSystem:
    """The filtered, decimated system of every bag: stacked, with eq. (49)'s payload columns if loaded."""
    filters, model = settings.filter, settings.model
    system = stack_systems(*(decimated_system(d, regressor, filters, model) for d in unloaded))
    if loaded:
        loaded_system = stack_systems(*(decimated_system(d, regressor, filters, model) for d in loaded))
        return payload_system(system, loaded_system, payload=payload_columns)
    # Without loaded data the payload regroups with the platform: drop its columns.
    return system.select([k for k in range(len(model_names(regressor, model))) if k not in set(payload_columns)])


def _run_estimator(robot: Robot, regressor: Regressor, base: BaseParameters, reduced: LinearSystem,
                   weighted: Estimate, unloaded: Sequence[BagData], loaded: Sequence[BagData],
                   settings: IdentificationSettings, payload_columns: Sequence[int],
                   closed_loop: Sequence[ClosedLoopSetup] | None, show_progress: bool,
                   shared_runs: SharedRuns | None = None) -> EstimatorResult:
    """``settings.estimator`` on the reduced system; a closed-loop one simulates every bag with the model."""
    chosen = settings.estimator
    options = estimator_options(chosen.name, chosen.values())
    if not ESTIMATORS.get(chosen.name).closed_loop:
        context = EstimatorContext(weighted=weighted, rank_eps=_solver_eps(settings), base=base,
                                   layout=robot.nominal_parameters)
        return estimate(chosen.name, reduced, options, context)
    every = list(unloaded) + list(loaded)
    _check_closed_loop(chosen.name, settings, len(every), closed_loop)
    simulators = [ModelSimulator(robot, robot.nominal_parameters, base, shared_runs)]  # the last one simulates
    keep = shared_runs.keep if shared_runs is not None else (lambda chi: None)  # the start's run, for other calls
    actuated = list(robot.actuated_indices)
    tried: dict[bytes, SimulatedSystem] = {}  # the start's run, simulated to choose the start, used once

    recordings = list(zip(every, closed_loop, [False] * len(unloaded) + [True] * len(loaded)))  # with payload?

    def model_runs(chi: np.ndarray, accelerations: bool = True):
        """Each recording's closed-loop run of the model ``chi``, with that recording."""
        for data, setup, with_payload in recordings:
            yield data, simulators[-1].run(chi, setup, start_time=data.start_time, start=data.start_q, times=data.t,
                                           payload=with_payload, accelerations=accelerations)

    def simulate(chi: np.ndarray) -> SimulatedSystem:
        if chi.tobytes() in tried:
            return tried.pop(chi.tobytes())
        runs, positions = [], []
        for data, run in model_runs(chi):
            observation, measured = regressor.equations(run.q, run.qdot, run.qddot, run.tau)
            runs.append(replace(data, observation=observation, measured=measured))
            positions.append(run.q[:, actuated])
        full = _assemble(runs[: len(unloaded)], runs[len(unloaded):], regressor, settings, payload_columns)
        system = base.reduce_system(full)
        return SimulatedSystem(system.W, system.Y, system.block_sizes, system.names,
                               positions=np.concatenate(positions))

    def simulate_positions(chi: np.ndarray) -> np.ndarray:  # CLOE, ML: the positions alone
        if chi.tobytes() in tried:
            return np.asarray(tried.pop(chi.tobytes()).positions)
        return np.concatenate([run.q[:, actuated] for _, run in model_runs(chi, accelerations=False)])

    simulate_linearised = _linearised_runs(options, simulators, recordings, regressor, actuated)

    say = (lambda line: print(line, file=sys.stderr)) if show_progress else None
    start, kind = None, getattr(options, "start", "wls")  # a plug-in's options may have no start
    if kind == "nominal":
        values = robot.nominal_parameters.as_dict()
        start = base.from_standard(np.array([values[n] for n in base.standard_names]))
        keep(start)
    elif kind == "wls":
        keep(weighted.chi)
        try:
            if simulate_linearised is None:
                tried[weighted.chi.tobytes()] = simulate(weighted.chi)
            else:  # the run is kept for the estimator's first step
                simulate_linearised(weighted.chi)
        except ModelSimulationError as error:
            if not hasattr(options, "start"):
                raise
            if say:
                say(f"{chosen.name}: the WLS estimate's model cannot be simulated ({error}); starting from the "
                    "physically consistent WLS")
            options, kind = replace(options, start="physical"), "physical"
    if kind == "physical":
        consistent = _physical_start(reduced, base, robot, weighted, settings)
        start = consistent.base_values
        simulators.append(ModelSimulator(robot, consistent.parameters, base, shared_runs))  # the min-norm correction
        keep(start)
    context = EstimatorContext(weighted=weighted, simulate=simulate, start=start, block_sigmas=weighted.block_sigmas,
                               rank_eps=_solver_eps(settings), progress=say, simulate_positions=simulate_positions,
                               simulate_linearised=simulate_linearised,
                               positions=np.concatenate([data.q[:, actuated] for data in every]))
    return estimate(chosen.name, reduced, options, context)


def _check_closed_loop(name: str, settings: IdentificationSettings, bags: int,
                       closed_loop: Sequence[ClosedLoopSetup] | None) -> None:
    """Refuse a closed-loop estimator what it cannot simulate: transmissions, minimum speeds, missing setups."""
    if settings.model.transmission is not None or settings.filter.min_speed is not None:
        raise InputError(f"the {name} estimator does not support transmissions or minimum speeds yet "
                         "(the simulated model has neither the motor columns nor the same rows): use an estimator "
                         f"without closed-loop simulation ({[n for n in ESTIMATORS.names if not ESTIMATORS.get(n).closed_loop]})")
    if closed_loop is None or len(closed_loop) != bags:
        given = 0 if closed_loop is None else len(closed_loop)
        raise MissingRecordingError(
            f"the {name} estimator simulates the model in closed loop: it needs the controller and "
            f"the reference of each of the {bags} bags, got {given}")


def _linearised_runs(options: object, simulators: list[ModelSimulator],
                     recordings: list[tuple[BagData, ClosedLoopSetup, bool]], regressor: Regressor, actuated: list[int]):
    """``simulate_linearised(chi)`` of the position output-error estimators (None unless their ``sensitivity`` is
    ``"linearised"`` and every recording's law has gains ``kp``, ``kd``): every recording's run of the last
    simulator's model ``chi`` (its actuated positions, stacked) and their linearised sensitivity (N, n_a, n_b),
    computed when asked. The last answer is kept until the next call and given again to a call with the same
    ``chi`` (the start's run, simulated to choose the start, is the estimator's first)."""
    if getattr(options, "sensitivity", None) != "linearised" or not all(
            hasattr(setup.law, "kp") and hasattr(setup.law, "kd") for _, setup, _ in recordings):
        return None
    last: dict[bytes, tuple] = {}

    def simulate_linearised(chi: np.ndarray) -> tuple[np.ndarray, Callable[[], np.ndarray]]:
        if chi.tobytes() in last:
            return last.pop(chi.tobytes())
        last.clear()
        runs = [simulators[-1].run_linearised(chi, setup, regressor, start_time=data.start_time, start=data.start_q,
                                              times=data.t, payload=with_payload)
                for data, setup, with_payload in recordings]
        last[chi.tobytes()] = answer = (np.concatenate([run.q[:, actuated] for run, _ in runs]),
                                        lambda: np.concatenate([sensitivity() for _, sensitivity in runs]))
        return answer

    return simulate_linearised


def _physical_start(reduced: LinearSystem, base: BaseParameters, robot: Robot, weighted: Estimate,
                    settings: IdentificationSettings) -> PhysicalEstimate:
    """The closed-loop estimators' ``"physical"`` start: the physically consistent WLS of the reduced system (its
    base columns placed on their standard ones, :func:`pardyn.identification.physical.physical_estimate`), whose
    bodies give the model a positive definite reduced mass matrix (Wensing, Kim, Slotine 2017, Thm. 1)."""
    columns = np.zeros((reduced.rows, len(base.standard_names)))
    columns[:, base.independent] = reduced.W
    system = LinearSystem(columns, reduced.Y, reduced.block_sizes, tuple(base.standard_names))
    return _physical(system, base, robot, weighted, settings)


def check_fit(estimate: Estimate, essential: EssentialParameters, settings: IdentificationSettings | FitSettings) -> None:
    """Refuse a written model whose fit collapsed (:class:`FitCollapsedError`, one line).

    The model of ``fit.parameters`` must explain its own data: relative error norm at most
    ``fit.max_fit_error``, and for the essential model at most ``1 + fit.essential_tolerance``
    times the base model's (``settings``: the fit group or the whole settings).
    """
    fit = settings.fit if isinstance(settings, IdentificationSettings) else settings
    base_error = estimate.relative_error
    if fit.parameters == "essential":
        error = essential.estimate.relative_error
        limit = min(fit.max_fit_error, (1.0 + fit.essential_tolerance) * base_error)
        what = (f"the essential model ({len(essential.kept)} of {len(estimate.names)} base parameters) fits with "
                f"{100 * error:.3g} % relative error against {100 * base_error:.3g} % for the base model")
        hint = "use --parameters base or a larger --essential-tolerance"
    else:
        error, limit = base_error, fit.max_fit_error
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


def _payload(base: BaseParameters, estimate_: Estimate) -> dict[str, float] | None:
    """``{mass, mx, my, mz, xx, ...}`` of the payload's base parameters (SI, platform frame)."""
    standard = dict(zip(base.names, (base.standard_names[k] for k in base.independent)))
    found = {}
    for name, value in zip(estimate_.names, estimate_.chi):
        parameter = standard[name]
        if parameter.endswith("_payload"):
            key = parameter.removesuffix("_payload")
            found["mass" if key == "m" else key] = float(value)
    return found or None
