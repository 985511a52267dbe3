"""``h4_pfc_vs_ctc``: predictive functional control vs computed torque on the H4 (Vivas & Poignet 2003, section 5).

Protocol (the paper's, on the MuJoCo plant standing for the real robot; 1 ms sampling,
quantized encoders, 1 % torque noise, velocities by a filtered difference):

* **Motion** (section 5.1): a 5th-degree polynomial JOINT set point from home
  (``z = -0.32`` m) to the pose ``motion_m`` (0.1 m) lower along z, the four motors
  turning by the same angle (0.343 rad with our lengths; the paper: 0.35 rad); by the
  symmetry of the H4 the nacelle then moves along z only. It starts after ``start_s``
  at rest, lasts ``duration_s`` and is held ``settle_s``.
* **Laws**: ``pfc`` (:class:`pardyn.control.pfc.PredictiveFunctionalControl`: inner
  gains 50, 68, CLTR = 18 periods, 3 coincidence points, step/ramp/parabola, error
  extrapolation of degree ``pfc_degree``) and ``ctc``
  (:class:`pardyn.control.computed_torque.ComputedTorque`, actuated space, ``Kp = 10000``,
  ``Kv = 90``), both feedback-linearizing with the controller's model.
* **Cases**:

  - ``nominal``: controller model = plant (the YAML Table 1 values);
  - ``load`` (section 5.2): a ``load_kg`` (4 kg) point mass added to the nacelle at
    ``load_at_s`` (during the initial rest) and kept through the motion; the
    controllers are not told (MuJoCo model rebuilt with the payload, state kept);
  - ``mismatch{level}`` (section 5.3): every parameter of the controllers' model
    (Table 1's I_mot, M_nac, I_bc: all masses, first moments, inertias, rotor inertias)
    scaled by ``1 + level / 100`` for each ``level`` in ``mismatch_pct`` (-50, +50);
    the plant keeps the nominal values.

* **Figures** per case and law: max and RMS tracking error per joint (rad, true
  plant positions against the set point), max torque per motor (N m), the fraction of
  samples with a motor at its torque limit (``saturation``); for ``load``
  (:func:`load_figures`): the peak error after the load, the static error left at the
  end of the rest and the rejection time (from the load until every joint error stays
  within 10 % of the peak around that static value).
* **Claims** (``claim_definition``):

  - ``similar_tracking`` (5.1: "very similar" tracking, torques within the limits):
    in ``nominal``, on every joint ``1/similar_ratio <= e_pfc / e_ctc <= similar_ratio``
    for the max errors, and no saturation for either law;
  - ``similar_load_rejection`` (5.2: "the rejection time is equivalent"): both rejection
    times exist and their ratio is within ``similar_ratio``;
  - ``ctc_saturates_pfc_not`` (5.3): PFC never at a torque limit in any mismatch case,
    and CTC at a limit in at least one of the +-50 % cases;
  - ``claim_held``: all the claims whose cases were run.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.control.laws import make_law
from pardyn.distributed import parallel_map
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError
from pardyn.experiments.plots import joint_panels, write_json
from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon, NoOptions
from pardyn.plants import Plant, PlantState
from pardyn.plants.measurement import MeasurementModel
from pardyn.plants.mujoco_plant import MujocoPlant
from pardyn.plants.payload import Payload
from pardyn.robot import Robot, load_robot
from pardyn.simulation.runner import run_closed_loop
from pardyn.trajectories import SampledReference, quintic_time_law

__all__ = ["COMPARED_LAWS", "H4Options", "LoadStep", "h4_pfc_vs_ctc", "joint_quintic", "load_figures", "scaled_parameters"]

COMPARED_LAWS = ("pfc", "ctc")
"""The laws compared (names of :mod:`pardyn.control.laws`)."""
NAME = "h4_pfc_vs_ctc"


@dataclass(frozen=True)
class H4Options:
    """Options of :func:`h4_pfc_vs_ctc` (defaults: the documented experiment).

    Attributes:
        motion_m: descent of the nacelle along z (m); duration_s: its time (s).
        start_s: rest before the motion (s); settle_s: hold after it (s).
        load_kg: the load of the ``load`` case (kg); load_at_s: when it is put on (s).
        mismatch_pct: parameter errors of the controllers' model (%), one case each.
        ctc_kp, ctc_kv: CTC gains (1/s^2, 1/s).
        pfc_kp, pfc_kv: PFC inner-loop gains (1/s^2, 1/s); pfc_response_periods: CLTR (periods);
        pfc_points: coincidence points (periods); pfc_degree: error extrapolation degree;
        pfc_error_window: past errors its coefficients are fitted to (least squares).
        torque_limits_nm: per motor (N m); empty: the URDF's (``limits: effort:`` of h4.yaml).
        counts_per_revolution, torque_noise, seed: measurement model.
        velocity_cutoff_hz: low-pass of the velocity estimate (Hz).
        similar_ratio: tolerance of the ``similar_tracking`` claim.
        cases: subset of ``("nominal", "load", "mismatch")``.
        workers: parallel runs; show_progress: stderr progress.
    """

    motion_m: float = 0.1
    duration_s: float = 0.5
    start_s: float = 0.5
    settle_s: float = 0.3
    load_kg: float = 4.0
    load_at_s: float = 0.05
    mismatch_pct: tuple[float, ...] = (-50.0, 50.0)
    ctc_kp: float = 10000.0
    ctc_kv: float = 90.0
    pfc_kp: float = 50.0
    pfc_kv: float = 68.0
    pfc_response_periods: float = 18.0
    pfc_points: tuple[int, ...] = (6, 12, 18)
    pfc_degree: int = 1
    pfc_error_window: int = 20
    torque_limits_nm: tuple[float, ...] = ()
    counts_per_revolution: int = 2**17
    torque_noise: float = 0.01
    seed: int = 0
    velocity_cutoff_hz: float = 50.0
    similar_ratio: float = 2.0
    cases: tuple[str, ...] = ("nominal", "load", "mismatch")
    workers: int | None = None
    show_progress: bool = True


class LoadStep(Plant):
    """A :class:`MujocoPlant` whose nacelle receives ``payload`` at ``at_s`` (removed again by :meth:`reset`)."""

    def __init__(self, plant: MujocoPlant, payload: Payload, at_s: float) -> None:
        self.plant, self.payload, self.at_s = plant, payload, float(at_s)
        self.robot = plant.robot

    def reset(self, q: np.ndarray, qdot: np.ndarray | None = None) -> PlantState:
        self.plant.set_payload(None)
        return self.plant.reset(q, qdot)

    def step(self, tau: np.ndarray, duration: float) -> PlantState:
        if self.plant.payload is None and self.plant.state().time >= self.at_s - 1e-9:
            self.plant.set_payload(self.payload)
        return self.plant.step(tau, duration)

    def state(self) -> PlantState:
        return self.plant.state()


def joint_quintic(start: np.ndarray, end: np.ndarray, *, duration_s: float, start_s: float,
                  rate_hz: float = 1000.0) -> SampledReference:
    """Rest-to-rest 5th-degree polynomial from ``start`` to ``end`` (n_a,) over ``duration_s``, after ``start_s``."""
    times = np.linspace(0.0, duration_s, int(round(duration_s * rate_hz)) + 1)
    s, ds, dds = quintic_time_law(times / duration_s)
    delta = np.asarray(end) - np.asarray(start)
    return SampledReference(times, start + np.outer(s, delta), np.outer(ds / duration_s, delta),
                            np.outer(dds / duration_s**2, delta)).shifted(start_s)


def scaled_parameters(nominal: DynamicParameters, level_pct: float) -> DynamicParameters:
    """Every parameter (masses, first moments, inertias, drive terms) times ``1 + level / 100``."""
    if not level_pct > -100.0:
        raise InputError(f"{NAME}: a mismatch level must be > -100 %, got {level_pct}")
    return nominal.with_vector(nominal.vector() * (1.0 + level_pct / 100.0))


def _law(robot: Robot, kind: str, params: DynamicParameters, options: H4Options, limits: np.ndarray):
    values = {**asdict(options), "ctc_kp": (options.ctc_kp,), "ctc_kd": (options.ctc_kv,)}  # pfc_*: the node's names
    return make_law(kind, robot, params, values, limits=limits)


def _cases(options: H4Options) -> list[tuple[str, float | None]]:
    cases: list[tuple[str, float | None]] = []
    for case in options.cases:
        if case == "mismatch":
            cases += [(f"mismatch{level:+g}", float(level)) for level in options.mismatch_pct]
        elif case in ("nominal", "load"):
            cases.append((case, None))
        else:
            raise InputError(f"{NAME}: unknown case {case!r}; expected nominal, load, mismatch")
    return cases


def _job(shared: tuple, item: tuple[str, float | None, str]) -> dict[str, Any]:
    robot, nominal, reference, limits, options = shared
    case, level, kind = item
    params = nominal if level is None else scaled_parameters(nominal, level)
    law = _law(robot, kind, params, options, limits)
    plant: Plant = MujocoPlant(robot, nominal)
    if case == "load":
        plant = LoadStep(plant, Payload(options.load_kg, frame="nacelle"), options.load_at_s)
    recording = run_closed_loop(
        robot, plant, law, reference, duration_s=options.start_s + options.duration_s + options.settle_s,
        start=robot.home,
        measurement=MeasurementModel(robot, counts_per_revolution=options.counts_per_revolution,
                                     torque_noise=options.torque_noise, seed=options.seed),
        velocity_cutoff_hz=options.velocity_cutoff_hz,
        label=f"{NAME} {case} {kind}" if options.show_progress else None,
    )
    error = recording.reference - recording.q[:, robot.actuated_indices]  # (N, n_a), true positions
    at_limit = np.abs(recording.tau) >= limits * (1.0 - 1e-9)  # (N, n_a)
    out = {
        "t": recording.t, "error": error, "tau": recording.tau,
        "max_error_rad": np.abs(error).max(axis=0),
        "rms_error_rad": np.sqrt((error**2).mean(axis=0)),
        "max_torque_nm": np.abs(recording.tau).max(axis=0),
        "saturation": float(at_limit.any(axis=1).mean()),
        "saturation_per_motor": at_limit.mean(axis=0),
    }
    if case == "load":
        out.update(load_figures(recording.t, error, load_at_s=options.load_at_s, end_s=options.start_s))
    return out


def load_figures(t: np.ndarray, error: np.ndarray, *, load_at_s: float, end_s: float) -> dict[str, float | None]:
    """Load rejection over the rest ``[load_at_s, end_s)``: errors ``error`` (N, n_a) at times ``t`` (N,).

    ``load_peak_error_rad``: max |e|; ``load_static_error_rad``: max over joints of |e| averaged
    over the last 20 ms of the rest; ``rejection_time_s``: from the load until every joint's
    ``|e - e_static|`` stays below 10 % of the peak (None if it does not before ``end_s``).
    """
    rest = (t >= load_at_s) & (t < end_s)
    errors, times = error[rest], t[rest]
    final = errors[times >= end_s - 0.02].mean(axis=0)  # (n_a,)
    peak = float(np.abs(errors).max())
    outside = np.flatnonzero(np.abs(errors - final).max(axis=1) > 0.1 * peak)
    rejection = None
    if outside.size == 0:
        rejection = 0.0
    elif outside[-1] < len(times) - 1 and times[-1] - times[outside[-1]] > 0.02:
        rejection = float(times[outside[-1] + 1] - load_at_s)
    return {"load_peak_error_rad": peak, "load_static_error_rad": float(np.abs(final).max()),
            "rejection_time_s": rejection}


def _summary(result: dict[str, Any], joints: list[str]) -> dict[str, Any]:
    summary = {key: dict(zip(joints, result[key])) for key in ("max_error_rad", "rms_error_rad", "max_torque_nm")}
    summary["saturation"] = result["saturation"]
    summary["saturation_per_motor"] = dict(zip(joints, result["saturation_per_motor"]))
    for key in ("load_peak_error_rad", "load_static_error_rad", "rejection_time_s"):
        if key in result:
            summary[key] = result[key]
    return summary


def _claims(by_item: dict, cases: list[tuple[str, float | None]], options: H4Options) -> dict[str, bool | None]:
    names = [case for case, _ in cases]
    similar = None
    if "nominal" in names:
        ratio = by_item[("nominal", "pfc")]["max_error_rad"] / by_item[("nominal", "ctc")]["max_error_rad"]
        similar = bool(np.all(ratio <= options.similar_ratio) and np.all(ratio >= 1.0 / options.similar_ratio)
                       and by_item[("nominal", "pfc")]["saturation"] == 0.0
                       and by_item[("nominal", "ctc")]["saturation"] == 0.0)
    rejection = None
    if "load" in names:
        times = [by_item[("load", kind)]["rejection_time_s"] for kind in COMPARED_LAWS]
        rejection = bool(None not in times and max(times) <= options.similar_ratio * max(min(times), 1e-3))
    mismatch = [(case, level) for case, level in cases if level is not None]
    saturation = None
    if mismatch:
        pfc_free = all(by_item[(case, "pfc")]["saturation"] == 0.0 for case, _ in mismatch)
        ctc_hits = any(by_item[(case, "ctc")]["saturation"] > 0.0 for case, level in mismatch if abs(level) >= 50.0)
        saturation = bool(pfc_free and ctc_hits)
    return {"similar_tracking": similar, "similar_load_rejection": rejection, "ctc_saturates_pfc_not": saturation}


def _plots(out_dir: Path, by_item: dict, cases: list[tuple[str, float | None]], joints: list[str],
           limits: np.ndarray) -> list[str]:
    plots = []
    for case, _ in cases:
        t = by_item[(case, "pfc")]["t"]
        for key, label, unit in (("error", "tracking error", "rad"), ("tau", "torque", "N m")):
            path = joint_panels(
                out_dir / f"{NAME}_{case}_{'errors' if key == 'error' else 'torques'}.png",
                t, {kind: by_item[(case, kind)][key] for kind in COMPARED_LAWS}, joints,
                title=f"H4 {case}: {label} per motor", ylabel=f"{label} ({unit})",
                limits=limits if key == "tau" else None)
            plots.append(path.name)
    return plots


def h4_pfc_vs_ctc(out_dir: Path | str, options: H4Options | None = None) -> dict[str, Any]:
    """Run the experiment of the module docstring; writes ``out_dir/h4_pfc_vs_ctc.json`` and PNGs."""
    options = options or H4Options()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    cases = _cases(options)
    robot: Robot = load_robot("h4")
    nominal = robot.nominal_parameters
    from pardyn.control import actuator_limits  # noqa: PLC0415

    limits = actuator_limits(robot, options.torque_limits_nm or None)
    goal = robot.home[robot.task_indices] - np.array([0.0, 0.0, options.motion_m, 0.0])
    start_q = robot.home[robot.actuated_indices]
    end_q = robot.solve_inverse(goal).q[robot.actuated_indices]
    reference = joint_quintic(start_q, end_q, duration_s=options.duration_s, start_s=options.start_s)
    items = [(case, level, kind) for case, level in cases for kind in COMPARED_LAWS]
    results = parallel_map(_job, (robot, nominal, reference, limits, options), items, workers=options.workers,
                       label=f"{NAME}: {len(items)} runs" if options.show_progress else None)
    by_item = {(case, kind): result for (case, _, kind), result in zip(items, results)}
    joints = list(robot.actuated_names)
    claims = _claims(by_item, cases, options)
    held = [v for v in claims.values() if v is not None]
    report = {
        "experiment": NAME,
        "paper": "Vivas & Poignet 2003, section 5, Figs. 7-18",
        "paper_claim": "PFC and CTC track the 0.1 m z motion very similarly within the torque limits, reject a "
                       "4 kg load alike, and under 50 % model mismatch CTC saturates the torques while PFC does not",
        "claim_held": all(held) if held else None,
        "claims": claims,
        "claim_definition": {
            "similar_tracking": f"nominal case: on every joint 1/{options.similar_ratio:g} <= max|e_pfc| / "
                                f"max|e_ctc| <= {options.similar_ratio:g} and no sample at a torque limit for "
                                "either law",
            "similar_load_rejection": f"load case: both rejection times exist and the larger is at most "
                                      f"{options.similar_ratio:g} x the smaller (floor 1 ms)",
            "ctc_saturates_pfc_not": "PFC never at a torque limit in any mismatch case, and CTC at a limit "
                                     "(|tau_i| >= limit_i) in at least one sample of a +-50 % case",
            "claim_held": "every claim whose case was run held",
        },
        "motion": {"joint_start_rad": start_q, "joint_end_rad": end_q, "joint_amplitude_rad": end_q - start_q,
                   "task_start": robot.home[robot.task_indices], "task_end": goal,
                   "law": "5th-degree polynomial in joint space (rest to rest)"},
        "torque_limits_nm": dict(zip(joints, limits)),
        "error_source": "true plant joint positions (MuJoCo state) vs the joint set point",
        "mismatch": "controllers' model = every nominal parameter (Table 1) times 1 + level/100; plant nominal",
        "joints": joints,
        "results": {case: {kind: _summary(by_item[(case, kind)], joints) for kind in COMPARED_LAWS} for case, _ in cases},
        "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(options).items()},
        "plots": _plots(out_dir, by_item, cases, joints, limits),
        "elapsed_s": time.perf_counter() - clock,
    }
    write_json(out_dir / f"{NAME}.json", report)
    return report


@EXPERIMENTS.plugin
class H4PfcVsCtc:
    """``pardyn experiment h4_pfc_vs_ctc`` (:func:`h4_pfc_vs_ctc`)."""

    name = NAME
    summary = "Vivas & Poignet 2003, section 5: predictive functional control vs computed torque on the H4"
    Options = NoOptions

    def run(self, out: Path, options: NoOptions, common: ExperimentCommon) -> dict[str, Any]:
        return h4_pfc_vs_ctc(out, H4Options(**common.settings()))

    def show(self, report: dict[str, Any], out: Path) -> None:
        joints = report["joints"]
        print(f"max tracking error (1e-3 rad) and max torque (N m), motors {', '.join(joints)}; "
              f"limits {[float(v) for v in report['torque_limits_nm'].values()]} N m")
        for case, laws in report["results"].items():
            for law, entry in laws.items():
                errors = " ".join(f"{1e3 * v:7.3f}" for v in entry["max_error_rad"].values())
                torques = " ".join(f"{v:6.2f}" for v in entry["max_torque_nm"].values())
                extra = "" if "rejection_time_s" not in entry else (
                    f"  load: peak {1e3 * entry['load_peak_error_rad']:.3f}e-3 rad, static "
                    f"{1e3 * entry['load_static_error_rad']:.3f}e-3 rad, rejection {entry['rejection_time_s']} s")
                print(f"  {case:12s} {law:4s} e {errors} | tau {torques} | saturated {100 * entry['saturation']:.1f} %"
                      + extra)
        print("claims: " + ", ".join(f"{k} {v}" for k, v in report["claims"].items()))
