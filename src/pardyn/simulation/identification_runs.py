"""Identification runs recorded from the MuJoCo plant, as on a real robot.

A real robot differs from its CAD model: the plant here is the robot *as
built*, its nominal (YAML) parameters perturbed by a seeded draw
(:func:`as_built_parameters`: every body scaled as a whole, by up to
``inertia_spread``, which keeps it physical; rotor inertia and friction
coefficients by up to ``friction_spread``). Identification recovers the
as-built values, which the tests know; the nominal model is the "CAD" baseline
of the validation.

Each run follows its own exciting trajectory (:mod:`pardyn.excitation.design`,
seeded, within the robot's bounds of :mod:`pardyn.excitation.bounds`) under a joint PD tuned from a bandwidth (:mod:`pardyn.control.gains`)
with the internal-stress projection on redundant robots, with encoder
quantization and torque noise (:class:`pardyn.plants.measurement.MeasurementModel`),
and is written as a rosbag2 MCAP bag with ``joint_states``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pardyn.control.gains import pd_gains_from_bandwidth
from pardyn.control.pd import JointPD
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError
from pardyn.distributed import parallel_map
from pardyn.simulation.runner import run_closed_loop
from pardyn.plants.measurement import MeasurementModel
from pardyn.plants.mujoco_plant import MujocoPlant
from pardyn.plants.payload import Payload
from pardyn.robot import Robot, load_robot
from pardyn.excitation.bounds import excitation_settings
from pardyn.excitation.design import design_exciting_trajectory
from pardyn.trajectories.joint import joint_trajectory

__all__ = [
    "DUALV_PAYLOAD",
    "PAYLOADS",
    "Run",
    "RecordedRuns",
    "as_built_parameters",
    "controller",
    "record_runs",
    "standard_runs",
]

DUALV_PAYLOAD = Payload(mass=5.37, com=np.array([-0.02, 0.0, 0.0]), inertia=np.diag([0.01, 0.01, 0.012]))
"""The DualV paper's 5.37 kg payload (section 5.3); centre of mass 2 cm off the platform centre."""

PAYLOADS: dict[str, Payload] = {
    "dualv": DUALV_PAYLOAD,
    # the rated load of the IRB 360-1/1600 (1 kg), 3 cm below the platform centre
    "delta": Payload(mass=1.0, com=np.array([0.0, 0.0, -0.03]), inertia=np.diag([2e-4, 2e-4, 2e-4])),
    # a 2 kg load on the hexapod's platform, 1 cm off centre, 3 cm above it
    "hexapod": Payload(mass=2.0, com=np.array([0.01, 0.0, 0.03]), inertia=np.diag([1e-3, 1e-3, 1.5e-3])),
}
"""Known loads of the identification runs with payload (``pardyn demo``), per robot."""


@dataclass(frozen=True)
class Run:
    """One recorded run: a bag ``name`` of ``duration_s`` seconds, trajectory and noise ``seed``."""

    name: str
    seed: int
    duration_s: float
    payload: Payload | None = None


@dataclass(frozen=True)
class RecordedRuns:
    """Bags written by :func:`record_runs` and the truth behind them.

    Attributes:
        bags: ``{run name: bag path}``.
        truth: the as-built parameters of the plant.
        payloads: ``{run name: payload}`` for loaded runs.
        figures: per run: excitation condition number, max tracking error (rad), max |tau| (N m).
        references: per run: the actuated reference the controller tracked (``reference(t)``, bag time).
        controller: the law of every run (:func:`controller`).
    """

    bags: dict[str, Path]
    truth: DynamicParameters
    payloads: dict[str, Payload]
    figures: dict[str, dict[str, float]] = field(default_factory=dict)
    references: dict[str, object] = field(default_factory=dict)
    controller: JointPD | None = None


def as_built_parameters(
    nominal: DynamicParameters, *, seed: int, inertia_spread: float = 0.15, friction_spread: float = 0.3
) -> DynamicParameters:
    """The nominal parameters perturbed as a built robot differs from its CAD model.

    Every body's 10 standard parameters are scaled by one factor in
    ``1 +- inertia_spread`` (a density error: the body stays physical); each
    drive's ``ia``, ``fv``, ``fs`` by factors in ``1 +- friction_spread``.
    """
    rng = np.random.default_rng(seed)
    vector = nominal.vector().copy()
    bodies = len(nominal.bodies)
    for k in range(bodies):
        vector[10 * k:10 * k + 10] *= 1.0 + rng.uniform(-inertia_spread, inertia_spread)
    for k in range(len(nominal.drives)):
        start = 10 * bodies + 4 * k
        vector[start:start + 3] *= 1.0 + rng.uniform(-friction_spread, friction_spread, 3)
    return nominal.with_vector(vector)


def standard_runs(robot_name: str, *, duration_s: float = 60.0, validation_s: float = 20.0,
                  payload: bool = True) -> list[Run]:
    """The paper's protocol: a run without payload, one with (DualV), two validation runs."""
    runs = [Run("unloaded", 1, duration_s)]
    if payload:
        if robot_name != "dualv":
            raise InputError(f"no reference payload for {robot_name}; pass payload=False")
        runs.append(Run("loaded", 2, duration_s, DUALV_PAYLOAD))
    runs += [Run("validation_1", 3, validation_s), Run("validation_2", 4, validation_s)]
    return runs


def controller(robot: Robot) -> JointPD:
    """The identification runs' controller: a joint PD of 15 Hz bandwidth, damping 0.7."""
    kp, kd = pd_gains_from_bandwidth(robot, bandwidth_hz=15.0, damping=0.7)
    return JointPD.for_robot(robot, kp, kd)


def _record_job(shared: tuple, run: Run) -> tuple[Path, dict[str, float], object]:
    robot, truth, law, out_dir, rate_hz, counts_per_revolution, torque_noise, candidates, show_progress = shared
    design = design_exciting_trajectory(
        robot, duration_s=run.duration_s, candidates=candidates, seed=run.seed,
        **excitation_settings(robot).design_options()
    )
    samples = joint_trajectory(robot, design.trajectory, rate_hz=100.0)
    reference = samples.select(robot.actuated_indices)
    recording = run_closed_loop(
        robot, MujocoPlant(robot, truth, payload=run.payload), law, reference,
        duration_s=run.duration_s, start=samples.q[0], rate_hz=rate_hz,
        measurement=MeasurementModel(robot, counts_per_revolution=counts_per_revolution,
                                     torque_noise=torque_noise, seed=run.seed),
        label=f"{robot.name} {run.name}" if show_progress else None,
    )
    step = max(1, len(recording.q) // 200)
    return recording.write_bag(out_dir / run.name, reference=reference), {
        "excitation_condition_number": design.condition_number,
        "max_tracking_error_rad": float(recording.tracking_error().max()),
        "max_torque": float(np.abs(recording.tau).max()),
        "max_closure_violation": float(max(np.abs(robot.closures.residual(q)).max(initial=0.0)
                                           for q in recording.q[::step])),
    }, reference


def record_runs(
    robot_name: str,
    runs: Sequence[Run],
    out_dir: Path | str,
    *,
    truth_seed: int = 7,
    rate_hz: float = 1000.0,
    counts_per_revolution: int = 2**17,
    torque_noise: float = 0.01,
    candidates: int = 6,
    show_progress: bool = True,
    workers: int | None = None,
    truth: DynamicParameters | None = None,
) -> RecordedRuns:
    """Record ``runs`` of ``robot_name`` on the MuJoCo plant as bags in ``out_dir``.

    Writes ``out_dir/<run>/`` bags and ``out_dir/truth.json`` (as-built parameters
    and payloads, for comparison). Existing bags are not overwritten (BagError).
    Runs are simulated ``workers`` at a time (:mod:`pardyn.distributed`; one per core by default).
    ``truth``: the plant's parameters (default: :func:`as_built_parameters` of ``truth_seed``).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    robot = load_robot(robot_name)
    if truth is None:
        truth = as_built_parameters(robot.nominal_parameters, seed=truth_seed)  # the plant, as built
    law = controller(robot)
    shared = (robot, truth, law, out_dir, rate_hz, counts_per_revolution, torque_noise,
              candidates, show_progress)
    recorded = parallel_map(_record_job, shared, list(runs), workers=workers)
    bags = {run.name: path for run, (path, _, _) in zip(runs, recorded)}
    figures = {run.name: numbers for run, (_, numbers, _) in zip(runs, recorded)}
    references = {run.name: reference for run, (_, _, reference) in zip(runs, recorded)}
    payloads = {run.name: run.payload for run in runs if run.payload is not None}
    (out_dir / "truth.json").write_text(json.dumps({
        "robot": robot_name,
        "truth_seed": truth_seed,
        "standard_parameters": truth.as_dict(),
        "payloads": {name: {"mass": p.mass, "com": p.com.tolist(), "inertia": p.inertia.tolist(), "frame": p.frame}
                     for name, p in payloads.items()},
        "runs": figures,
    }, indent=2) + "\n")
    return RecordedRuns(bags=bags, truth=truth, payloads=payloads, figures=figures, references=references,
                        controller=law)
