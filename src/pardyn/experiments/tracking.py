"""``dualv_tracking``: PD vs computed torque on the DualV (Briot, Krut, Gautier 2015, section 5.4, Table 4).

Protocol (the paper's, on the MuJoCo plant standing for the real robot):

1. **The robot as built.** The plant is the DualV with the as-built parameters of
   :func:`pardyn.simulation.identification_runs.as_built_parameters` (nominal
   inertias scaled per body by up to 15 %, drive friction and rotor inertia by up
   to 30 %, seed ``truth_seed``): the nominal (YAML) model is the "CAD" model.
2. **Identification.** One exciting run (Fourier trajectory, joint PD, encoder
   quantization and torque noise) is recorded from the plant
   (:func:`~pardyn.simulation.identification_runs.record_runs`) and identified
   (:func:`pardyn.identification.pipeline.identify`: case 1 model, base parameters).
3. **Tracking** on two trajectories different from the identification one
   (the paper's Fig. 7 shows two free-form paths; here, documented and rest to rest,
   both starting and ending at home ``(x, y, phi) = (0, 0, 0)``):

   * ``circle``: ``circle_turns`` revolutions of radius ``circle_radius_m`` through
     home (centre ``(-r, 0)``), in ``circle_s`` seconds (5th-degree time law);
   * ``star``: home -> vertex -> home for ``star_points`` vertices at ``star_radius_m``
     from home (angles 45 deg + k 360/star_points), each straight segment in
     ``star_segment_s`` seconds with the 5th-degree time law (rest at every vertex).

   each held for ``settle_s`` after its end, under

   * (a) ``pd``: the joint PD alone (:class:`pardyn.control.pd.JointPD`, gains of
     :func:`pardyn.control.gains.pd_gains_from_bandwidth`: bandwidth ``bandwidth_hz``,
     damping ``damping``, nominal inertia seen by each drive);
   * (b) ``ctc_nominal``: computed torque (:class:`pardyn.control.computed_torque.ComputedTorque`,
     actuated space) with the nominal parameters;
   * (c) ``ctc_identified``: the same with the identified parameters;

   CTC error dynamics with the same bandwidth and damping
   (:func:`pardyn.control.gains.ctc_gains`).

4. **Figures** (Table 4 layout): ``e_i = max_t |q_i^d(t) - q_i(t)|`` per actuated joint
   (rad), ``q_i`` the plant's *true* joint position, and the reductions
   ``100 (1 - e_i^b / e_i^a)`` (b/a) and ``100 (1 - e_i^c / e_i^a)`` (c/a) in percent
   (paper: 54-76 %). ``claim_held``: every CTC error (b and c) below the PD error on
   every joint of both trajectories.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.control.gains import pd_gains_from_bandwidth
from pardyn.control.laws import make_law
from pardyn.distributed import parallel_map
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError
from pardyn.experiments.plots import law_joints, line_plot, write_json
from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon, seconds
from pardyn.plants.measurement import MeasurementModel
from pardyn.plants.mujoco_plant import MujocoPlant
from pardyn.robot import Robot, load_robot
from pardyn.simulation.runner import run_closed_loop
from pardyn.trajectories import Circle, JointSamples, PointToPoint, joint_trajectory

__all__ = ["TrackingOptions", "build_law", "dualv_tracking", "star_trajectory", "tracking_trajectories"]

CASES = ("pd", "ctc_nominal", "ctc_identified")
"""The paper's cases a, b, c."""


@dataclass(frozen=True)
class TrackingOptions:
    """Options of :func:`dualv_tracking` (defaults: the documented experiment).

    Attributes:
        identification_s: length of the identification run (s).
        truth_seed: seed of the as-built plant parameters.
        bandwidth_hz, damping: closed-loop error dynamics of every law (Hz, -).
        circle_radius_m, circle_turns, circle_s: the circle trajectory.
        star_radius_m, star_points, star_segment_s: the star trajectory.
        settle_s: time held at the end of each trajectory (s).
        counts_per_revolution, torque_noise: the measurement model (encoders, 1 % torque noise).
        seed: measurement noise seed.
        cases: the laws run (subset of ``CASES``); ``ctc_identified`` needs the identification.
        pd_gain_scale: factor on the PD gains (tests: 0 gives an uncontrolled robot).
        workers: parallel runs (:mod:`pardyn.distributed`; default one per core).
        show_progress: progress lines on stderr.
    """

    identification_s: float = 30.0
    truth_seed: int = 7
    bandwidth_hz: float = 15.0
    damping: float = 0.7
    circle_radius_m: float = 0.05
    circle_turns: float = 2.0
    circle_s: float = 1.2
    star_radius_m: float = 0.06
    star_points: int = 4
    star_segment_s: float = 0.2
    settle_s: float = 0.3
    counts_per_revolution: int = 2**17
    torque_noise: float = 0.01
    seed: int = 0
    cases: tuple[str, ...] = CASES
    pd_gain_scale: float = 1.0
    workers: int | None = None
    show_progress: bool = True


def star_trajectory(robot: Robot, *, radius_m: float, points: int, segment_s: float, rate_hz: float) -> JointSamples:
    """Home -> vertex k -> home for ``points`` vertices at ``radius_m`` (quintic segments, rest at each end)."""
    home = robot.home[robot.task_indices]
    parts = []
    offset = 0.0
    start = robot.home
    for k in range(points):
        angle = math.pi / 4 + 2 * math.pi * k / points
        vertex = home.copy()
        vertex[:2] += radius_m * np.array([math.cos(angle), math.sin(angle)])
        for a, b in ((home, vertex), (vertex, home)):
            samples = joint_trajectory(robot, PointToPoint(a, b, duration_s=segment_s), rate_hz=rate_hz, start=start)
            start = samples.q[-1]
            skip = 1 if parts else 0
            parts.append(JointSamples(samples.times[skip:] + offset, samples.q[skip:], samples.qdot[skip:],
                                      samples.qddot[skip:]))
            offset += segment_s
    return JointSamples(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("times", "q", "qdot", "qddot")))


def tracking_trajectories(robot: Robot, options: TrackingOptions, *, rate_hz: float = 200.0) -> dict[str, JointSamples]:
    """The two tracking trajectories of the module docstring, sampled at ``rate_hz``."""
    home = robot.home[robot.task_indices]
    circle = Circle(home, radius_m=options.circle_radius_m, duration_s=options.circle_s, turns=options.circle_turns)
    return {
        "circle": joint_trajectory(robot, circle, rate_hz=rate_hz, start=robot.home),
        "star": star_trajectory(robot, radius_m=options.star_radius_m, points=options.star_points,
                                segment_s=options.star_segment_s, rate_hz=rate_hz),
    }


def build_law(robot: Robot, kind: str, *, bandwidth_hz: float, damping: float,
              params: DynamicParameters | None = None, gain_scale: float = 1.0):
    """The law ``kind`` of the registry (:mod:`pardyn.control.laws`) for ``robot``, tuned to a bandwidth.

    ``pd``: gains from the
    nominal inertia seen by each drive (:func:`pardyn.control.gains.pd_gains_from_bandwidth`),
    times ``gain_scale``; the model-based laws: error dynamics of natural frequency ``bandwidth_hz``
    and ``damping`` (:func:`pardyn.control.gains.ctc_gains`), model with ``params`` (None: nominal).
    """
    if kind == "pd":
        kp, kd = pd_gains_from_bandwidth(robot, bandwidth_hz=bandwidth_hz, damping=damping)
        return make_law("pd", robot, options={"kp": gain_scale * kp, "kd": gain_scale * kd})
    return make_law(kind, robot, params, {"natural_frequency_hz": bandwidth_hz, "damping": damping})


def _job(shared: tuple, item: tuple[str, str]) -> dict[str, Any]:
    robot, truth, laws, trajectories, options = shared
    trajectory_name, case = item
    samples = trajectories[trajectory_name]
    law = laws[case]
    if hasattr(law, "reset"):  # warm starts of a law reused by the worker process
        law.reset(samples.q[0])
    actuated_reference = samples.select(robot.actuated_indices)
    duration = float(samples.times[-1]) + options.settle_s
    recording = run_closed_loop(
        robot, MujocoPlant(robot, truth), law, samples.select(robot.indices(law_joints(robot, law))),
        duration_s=duration, start=samples.q[0],
        measurement=MeasurementModel(robot, counts_per_revolution=options.counts_per_revolution,
                                     torque_noise=options.torque_noise, seed=options.seed),
        label=f"dualv {trajectory_name} {case}" if options.show_progress else None,
    )
    desired = np.array([actuated_reference(t).position for t in recording.t])  # (N, n_a)
    error = desired - recording.q[:, robot.actuated_indices]  # true plant positions (N, n_a)
    return {
        "max_error_rad": np.abs(error).max(axis=0),
        "rms_error_rad": np.sqrt((error**2).mean(axis=0)),
        "max_torque": np.abs(recording.tau).max(axis=0),
        "t": recording.t,
        "error_norm": np.linalg.norm(error, axis=1),
    }


def dualv_tracking(out_dir: Path | str, options: TrackingOptions | None = None) -> dict[str, Any]:
    """Run the experiment of the module docstring; writes ``out_dir/dualv_tracking.json`` and PNGs.

    Returns the JSON content.
    """
    options = options or TrackingOptions()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    unknown = sorted(set(options.cases) - set(CASES))
    if unknown:
        raise InputError(f"dualv_tracking: unknown cases {unknown}; expected a subset of {list(CASES)}")
    clock = time.perf_counter()
    robot = load_robot("dualv")
    from pardyn.simulation.identification_runs import Run, as_built_parameters, record_runs  # noqa: PLC0415

    nominal = robot.nominal_parameters
    identification: dict[str, Any] | None = None
    identified = None
    if "ctc_identified" in options.cases:
        from pardyn.identification.pipeline import IdentificationSettings, identify  # noqa: PLC0415

        with tempfile.TemporaryDirectory(prefix="dualv_tracking_") as bags:
            recorded = record_runs("dualv", [Run("identification", 1, options.identification_s)], bags,
                                   truth_seed=options.truth_seed, show_progress=options.show_progress, workers=1)
            truth = recorded.truth
            result = identify(robot, [recorded.bags["identification"]],
                              settings=IdentificationSettings(workers=1), show_progress=options.show_progress)
        identified = result.parameters
        data = result.as_json()
        identification = {
            "duration_s": options.identification_s,
            "model": data["model"],
            "base_parameters": len(data["base_parameters"]),
            "fit_relative_error_norm": data["fit"]["relative_error_norm"],
            "condition_number": data["fit"]["condition_number"],
            "run": recorded.figures["identification"],
        }
    else:
        truth = as_built_parameters(nominal, seed=options.truth_seed)
    trajectories = tracking_trajectories(robot, options)
    common = dict(bandwidth_hz=options.bandwidth_hz, damping=options.damping)
    factories = {
        "pd": lambda: build_law(robot, "pd", gain_scale=options.pd_gain_scale, **common),
        "ctc_nominal": lambda: build_law(robot, "ctc", params=nominal, **common),
        "ctc_identified": lambda: build_law(robot, "ctc", params=identified, **common),
    }
    laws = {case: factories[case]() for case in options.cases}
    items = [(name, case) for name in trajectories for case in options.cases]
    results = parallel_map(_job, (robot, truth, laws, trajectories, options), items, workers=options.workers,
                       label="dualv_tracking runs" if options.show_progress else None)
    by_item = dict(zip(items, results))
    joints = list(robot.actuated_names)
    table: dict[str, Any] = {}
    claim = True
    for name in trajectories:
        rows = {case: dict(zip(joints, by_item[(name, case)]["max_error_rad"])) for case in options.cases}
        entry: dict[str, Any] = {"max_error_rad": rows,
                                 "rms_error_rad": {c: dict(zip(joints, by_item[(name, c)]["rms_error_rad"]))
                                                   for c in options.cases},
                                 "max_torque": {c: dict(zip(joints, by_item[(name, c)]["max_torque"]))
                                                for c in options.cases}}
        if "pd" in options.cases:
            pd = by_item[(name, "pd")]["max_error_rad"]
            for case, key in (("ctc_nominal", "b/a"), ("ctc_identified", "c/a")):
                if case in options.cases:
                    ctc = by_item[(name, case)]["max_error_rad"]
                    entry.setdefault("reduction_pct", {})[key] = dict(zip(joints, 100.0 * (1.0 - ctc / pd)))
                    claim = claim and bool(np.all(ctc < pd))
        table[name] = entry
        line_plot(out_dir / f"dualv_tracking_{name}.png",
                  [(by_item[(name, c)]["t"], by_item[(name, c)]["error_norm"], c) for c in options.cases],
                  title=f"DualV {name}: joint tracking error", xlabel="t (s)", ylabel="|q_d - q| (rad)", logy=True)
    has_ctc = any(c != "pd" for c in options.cases) and "pd" in options.cases
    reductions = [v for t in table.values() for r in t.get("reduction_pct", {}).values() for v in r.values()]
    report = {
        "experiment": "dualv_tracking",
        "paper": "Briot, Krut, Gautier 2015, section 5.4, Table 4",
        "paper_claim": "computed torque lowers the max tracking error of every joint by 54-76 % vs PD",
        "claim_held": bool(claim) if has_ctc else None,
        "claim_definition": "every CTC case's max error below the PD's on every actuated joint of both trajectories",
        "reduction_range_pct": [min(reductions), max(reductions)] if reductions else None,
        "error_source": "true plant joint positions (MuJoCo state), not the quantized encoders",
        "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(options).items()},
        "trajectories": {
            "circle": f"{options.circle_turns} turns, radius {options.circle_radius_m} m through home, "
                      f"{options.circle_s} s, quintic time law",
            "star": f"home -> vertex -> home, {options.star_points} vertices at {options.star_radius_m} m "
                    f"(45 deg + k {360 / options.star_points:g} deg), {options.star_segment_s} s per segment",
            "settle_s": options.settle_s,
            "durations_s": {n: float(s.times[-1]) for n, s in trajectories.items()},
        },
        "identification": identification,
        "joints": joints,
        "results": table,
        "plots": [f"dualv_tracking_{n}.png" for n in trajectories],
        "elapsed_s": time.perf_counter() - clock,
    }
    write_json(out_dir / "dualv_tracking.json", report)
    return report


@EXPERIMENTS.plugin
class DualvTracking:
    """``pardyn experiment dualv_tracking`` (:func:`dualv_tracking`)."""

    name = "dualv_tracking"
    summary = "Briot et al. 2015, section 5.4, Table 4: max tracking errors of PD vs computed torque"

    @dataclass(frozen=True)
    class Options:
        identification_s: float = seconds(TrackingOptions.identification_s, "length of the identification run in s")

    def run(self, out: Path, options: DualvTracking.Options, common: ExperimentCommon) -> dict[str, Any]:
        return dualv_tracking(out, TrackingOptions(**common.settings(),
                                                   identification_s=options.identification_s))

    def show(self, report: dict[str, Any], out: Path) -> None:
        for name, entry in report["results"].items():
            print(f"{name}: max tracking errors (1e-3 rad), joints {', '.join(report['joints'])}")
            for case, errors in entry["max_error_rad"].items():
                print(f"  {case:15s} " + " ".join(f"{1e3 * v:7.3f}" for v in errors.values()))
            for key, values in entry.get("reduction_pct", {}).items():
                print(f"  {key + ' (%)':15s} " + " ".join(f"{v:7.1f}" for v in values.values()))
