"""``rrr3_robustness``: classical vs extended CTC under parameter errors (Zubizarreta et al. 2010, section 4.8).

Protocol (the paper's, on the MuJoCo plant standing for the "real robot"):

* **Trajectory**: one turn of the circle of radius ``radius_m`` (0.1 m) centred at
  ``centre`` ((0, 0)) with ``theta = 0``, starting at angle 0 (``(0.1, 0, 0)``),
  rest to rest in ``duration_s`` with the 5th-degree time law, then held ``settle_s``.
  Reachability is checked with :meth:`pardyn.Robot.solve_inverse` from home along the
  circle (every ``check_points`` points): every point must be solved in the home
  working mode with closure-Jacobian condition numbers below ``max_condition``.
  If the paper's centre fails, the nearest centre on a 1 cm grid that passes is used
  (reported in the JSON as ``centre_used``, with ``centre_reachable``).
* **Laws**: the classical CTC on the actuated joints
  (:class:`pardyn.control.computed_torque.ComputedTorque`, ``space="actuated"``)
  and the extended CTC of eq. (59) on actuated + sensed joints
  (:class:`~pardyn.control.computed_torque.ExtendedComputedTorque`), both with the
  robot's NOMINAL parameters (the model the controller believes) and the gains of
  a 2nd-order error dynamics with ``overshoot`` (10 %) and ``peak_time_s`` (0.1 s),
  as the paper (:func:`pardyn.control.gains.gains_from_step_response`:
  damping 0.591, natural frequency 6.20 Hz).
* **Real robot**: the plant robot's parameters perturbed by ``level`` % for every
  ``level`` in ``levels`` (1..5) with ``templates`` (10) random sign templates
  (seeded, entries in {-1, 0, +1} drawn uniformly, the same templates at every level):
  for every body of the parameter set (``DynamicParameters.bodies``: the 3 proximal
  links, 3 distal links, 3 sensor housings, the platform, the payload), three signs
  ``(s_m, s_c, s_I)`` scale its mass ``m (1 + s_m p)``, its centre-of-mass position
  ``c (1 + s_c p)`` (in the body frame: the distance l_c of the paper) and its
  rotational inertia about the centre of mass ``I_c (1 + s_I p)`` (``p = level / 100``).
  Every perturbed body stays physical. The link LENGTHS are not perturbed (the
  plant's kinematics would need another URDF): the paper perturbs them too.
  Level 0 (the nominal plant) is run once per law as the baseline.
* **Indices** (Table II): ISE, IAE, ITAE of the end-effector position error
  ``e(t) = || (x_d, y_d)(t) - (x, y)(t) ||`` (m), ``(x, y)`` the platform position of
  the plant's TRUE state, over the whole run (``t`` from 0), averaged over templates.
* **Claim** (the paper's Figs. 4-6: the extended CTC's indices "have a lower
  increase ratio"): ``claim_held`` when, for ISE, IAE and ITAE alike, the slope
  of the least-squares line of the template-averaged index against the level
  (levels 1..5, % -> index per %) is smaller for the extended CTC than for the
  classical one.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from pardyn.control.gains import gains_from_step_response
from pardyn.distributed import parallel_map
from pardyn.dynamics.parameters import (
    DynamicParameters,
    inertia_from_standard,
    standard_from_inertia,
)
from pardyn.errors import InputError, KinematicsError
from pardyn.experiments.plots import error_indices, law_joints, line_plot, write_json
from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon
from pardyn.plants.measurement import MeasurementModel
from pardyn.plants.mujoco_plant import MujocoPlant
from pardyn.registry import option
from pardyn.robot import Robot, load_robot
from pardyn.simulation.runner import run_closed_loop
from pardyn.trajectories import Circle, joint_trajectory

__all__ = ["COMPARED_LAWS", "RobustnessOptions", "check_circle", "perturbed_parameters", "rrr3_robustness", "sign_templates"]

COMPARED_LAWS = ("ctc", "extended_ctc")
"""Classical CTC (actuated joints), extended CTC (actuated + sensed joints, eq. 59)."""

INDICES = ("ISE", "IAE", "ITAE")


@dataclass(frozen=True)
class RobustnessOptions:
    """Options of :func:`rrr3_robustness` (defaults: the paper's protocol).

    Attributes:
        levels: perturbation levels (%).
        templates: random sign templates per level.
        seed: seed of the templates.
        centre: circle centre (x, y) (m); radius_m: radius (m); theta: platform angle (rad).
        duration_s: time of the turn (s); settle_s: hold after it (s).
        overshoot, peak_time_s: step response of the CTC error dynamics (-, s).
        max_condition: reachability margin (closure-Jacobian condition numbers).
        check_points: points of the reachability check.
        counts_per_revolution, torque_noise, measurement_seed: measurement model.
        laws: laws compared (subset of ``COMPARED_LAWS``, names of :mod:`pardyn.control.laws`).
        workers: parallel runs (default one per core); show_progress: stderr progress.
    """

    levels: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0, 5.0)
    templates: int = 10
    seed: int = 2010
    centre: tuple[float, float] = (0.0, 0.0)
    radius_m: float = 0.1
    theta: float = 0.0
    duration_s: float = 1.5
    settle_s: float = 0.3
    overshoot: float = 0.10
    peak_time_s: float = 0.1
    max_condition: float = 100.0
    check_points: int = 72
    counts_per_revolution: int = 2**17
    torque_noise: float = 0.01
    measurement_seed: int = 0
    laws: tuple[str, ...] = COMPARED_LAWS
    workers: int | None = None
    show_progress: bool = True


def sign_templates(parameters: DynamicParameters, *, count: int, seed: int) -> np.ndarray:
    """``count`` templates of signs in {-1, 0, +1}, shape (count, n_bodies, 3): (mass, com, inertia)."""
    return np.random.default_rng(seed).integers(-1, 2, size=(count, len(parameters.bodies), 3)).astype(float)


def perturbed_parameters(nominal: DynamicParameters, template: np.ndarray, level_pct: float) -> DynamicParameters:
    """The nominal bodies with ``m (1 + s_m p)``, ``c (1 + s_c p)``, ``I_c (1 + s_I p)``, ``p = level/100``.

    ``template`` (n_bodies, 3); drive parameters unchanged.
    """
    p = level_pct / 100.0
    vector = nominal.vector().copy()
    for k, body in enumerate(nominal.bodies):
        inertia = inertia_from_standard(body.standard, where=f"{nominal.robot}: body {body.name}")
        s_m, s_c, s_i = template[k]
        scaled = pin.Inertia(inertia.mass * (1 + s_m * p), inertia.lever * (1 + s_c * p),
                             inertia.inertia * (1 + s_i * p))
        vector[10 * k:10 * k + 10] = standard_from_inertia(scaled)
    return nominal.with_vector(vector)


def _circle(centre: np.ndarray, options: RobustnessOptions) -> Circle:
    start = np.array([centre[0] + options.radius_m, centre[1], options.theta])
    return Circle(start, radius_m=options.radius_m, duration_s=options.duration_s)


def check_circle(robot: Robot, centre: np.ndarray, options: RobustnessOptions) -> tuple[bool, float]:
    """``(reachable, worst condition number)`` of the circle around ``centre``, solved from home."""
    q = robot.home
    worst = 0.0
    try:
        for angle in np.linspace(0.0, 2 * math.pi, options.check_points + 1):
            pose = np.array([centre[0] + options.radius_m * math.cos(angle),
                             centre[1] + options.radius_m * math.sin(angle), options.theta])
            solution = robot.solve_inverse(pose, start=q)
            q = solution.q
            worst = max(worst, *solution.conditioning.values())
    except KinematicsError:
        return False, math.inf
    return worst <= options.max_condition, worst


def _reachable_centre(robot: Robot, options: RobustnessOptions) -> tuple[np.ndarray, bool, float]:
    centre = np.asarray(options.centre, dtype=float)
    ok, worst = check_circle(robot, centre, options)
    if ok:
        return centre, True, worst
    offsets = [np.array([i, j]) * 0.01 for i in range(-10, 11) for j in range(-10, 11) if i or j]
    for offset in sorted(offsets, key=lambda o: float(np.hypot(*o))):
        ok, worst = check_circle(robot, centre + offset, options)
        if ok:
            return centre + offset, False, worst
    raise InputError(f"rrr3_robustness: no reachable circle of radius {options.radius_m} m within 0.1 m of "
                     f"{options.centre} (condition number limit {options.max_condition})")


def _make_law(robot: Robot, kind: str, frequency_hz: float, damping: float):
    from pardyn.experiments.tracking import build_law  # noqa: PLC0415

    return build_law(robot, kind, bandwidth_hz=frequency_hz, damping=damping)


def _job(shared: tuple, item: tuple[str, float, int]) -> dict[str, Any]:
    robot, nominal, templates, laws, samples, circle, options = shared
    kind, level, index = item
    template = templates[index] if level else np.zeros_like(templates[0])
    plant = MujocoPlant(robot, perturbed_parameters(nominal, template, level))
    law = laws[kind]
    if hasattr(law, "reset"):
        law.reset(samples.q[0])
    recording = run_closed_loop(
        robot, plant, law, samples.select(robot.indices(law_joints(robot, law))),
        duration_s=options.duration_s + options.settle_s, start=samples.q[0],
        measurement=MeasurementModel(robot, counts_per_revolution=options.counts_per_revolution,
                                     torque_noise=options.torque_noise, seed=options.measurement_seed),
    )
    desired = circle.evaluate(np.clip(recording.t, 0.0, options.duration_s)).position[:, :2]  # (N, 2)
    actual = recording.q[:, robot.task_indices[:2]]  # true platform x, y (N, 2)
    error = np.linalg.norm(desired - actual, axis=1)  # (N,)
    out: dict[str, Any] = error_indices(recording.t, error)
    out["max_error_m"] = float(error.max())
    if index == 0:
        step = max(1, len(error) // 500)
        out["series"] = (recording.t[::step], error[::step])
    return out


def _slope(levels: np.ndarray, values: np.ndarray) -> float:
    return float(np.polyfit(levels, values, 1)[0]) if len(levels) > 1 else math.nan


def rrr3_robustness(out_dir: Path | str, options: RobustnessOptions | None = None) -> dict[str, Any]:
    """Run the experiment of the module docstring; writes ``out_dir/rrr3_robustness.json`` and PNGs."""
    options = options or RobustnessOptions()
    unknown = sorted(set(options.laws) - set(COMPARED_LAWS))
    if unknown or not options.laws:
        raise InputError(f"rrr3_robustness: unknown laws {unknown}; expected a subset of {list(COMPARED_LAWS)}")
    if options.templates < 1 or not options.levels or any(not level > 0 for level in options.levels):
        raise InputError("rrr3_robustness: need >= 1 template and positive levels (%)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    robot = load_robot("rrr3")
    nominal = robot.nominal_parameters
    centre, exact, worst = _reachable_centre(robot, options)
    circle = _circle(centre, options)
    samples = joint_trajectory(robot, circle, rate_hz=200.0, start=robot.home)
    frequency_hz, damping = gains_from_step_response(overshoot=options.overshoot, peak_time_s=options.peak_time_s)
    laws = {kind: _make_law(robot, kind, frequency_hz, damping) for kind in options.laws}
    templates = sign_templates(nominal, count=options.templates, seed=options.seed)
    levels = [float(level) for level in options.levels]
    items = [(kind, 0.0, 0) for kind in options.laws]
    items += [(kind, level, k) for kind in options.laws for level in levels for k in range(options.templates)]
    results = parallel_map(_job, (robot, nominal, templates, laws, samples, circle, options), items,
                       workers=options.workers,
                       label=f"rrr3_robustness: {len(items)} runs" if options.show_progress else None)
    by_item = dict(zip(items, results))
    table: dict[str, Any] = {}
    for kind in options.laws:
        rows = {"0": {name: by_item[(kind, 0.0, 0)][name] for name in (*INDICES, "max_error_m")}}
        for level in levels:
            runs = [by_item[(kind, level, k)] for k in range(options.templates)]
            rows[f"{level:g}"] = {
                **{name: float(np.mean([r[name] for r in runs])) for name in (*INDICES, "max_error_m")},
                **{f"{name}_std": float(np.std([r[name] for r in runs])) for name in INDICES},
            }
        slopes = {name: _slope(np.array(levels), np.array([rows[f"{lv:g}"][name] for lv in levels]))
                  for name in INDICES}
        table[kind] = {"per_level": rows, "slope_per_pct": slopes}
    claim = None
    if set(COMPARED_LAWS) <= set(options.laws) and len(levels) > 1:
        claim = all(table["extended_ctc"]["slope_per_pct"][n] < table["ctc"]["slope_per_pct"][n] for n in INDICES)
    plots = []
    axis = [0.0, *levels]
    for name in INDICES:
        path = line_plot(out_dir / f"rrr3_robustness_{name}.png",
                         [(np.array(axis), np.array([table[k]["per_level"][f"{lv:g}"][name] for lv in axis]), k)
                          for k in options.laws],
                         title=f"3-RRR: {name} vs parameter variation (mean of {options.templates} templates)",
                         xlabel="parameter variation (%)", ylabel=name, markers=True)
        plots.append(path.name)
    worst_level = levels[-1]
    path = line_plot(out_dir / "rrr3_robustness_error.png",
                     [(*by_item[(k, worst_level, 0)]["series"], k) for k in options.laws],
                     title=f"3-RRR: end-effector position error, {worst_level:g} % variation, template 0",
                     xlabel="t (s)", ylabel="e (m)")
    plots.append(path.name)
    report = {
        "experiment": "rrr3_robustness",
        "paper": "Zubizarreta et al. 2010, section 4.8, Table II, Figs. 4-6",
        "paper_claim": "the extended CTC's ISE, IAE, ITAE grow more slowly with the parameter variation than "
                       "the classical CTC's",
        "claim_held": claim,
        "claim_definition": "for ISE, IAE and ITAE alike, slope of the least-squares line of the template-averaged "
                            "index vs level (levels 1..5 %) smaller for extended_ctc than for ctc",
        "centre_requested": list(options.centre),
        "centre_used": centre.tolist(),
        "centre_reachable": exact,
        "worst_condition_number": worst,
        "gains": {"natural_frequency_hz": frequency_hz, "damping": damping,
                  "kp_per_s2": (2 * math.pi * frequency_hz) ** 2, "kd_per_s": 4 * math.pi * damping * frequency_hz},
        "perturbation": "per body (DynamicParameters.bodies): mass, centre-of-mass position and rotational inertia "
                        "about the centre of mass scaled by (1 + s p), s in {-1, 0, 1} from the template; "
                        "link lengths not perturbed",
        "bodies": [body.name for body in nominal.bodies],
        "templates": templates.tolist(),
        "error_source": "true plant platform position (MuJoCo state)",
        "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(options).items()},
        "results": table,
        "plots": plots,
        "runs": len(items),
        "elapsed_s": time.perf_counter() - clock,
    }
    write_json(out_dir / "rrr3_robustness.json", report)
    return report


@EXPERIMENTS.plugin
class Rrr3Robustness:
    """``pardyn experiment rrr3_robustness`` (:func:`rrr3_robustness`)."""

    name = "rrr3_robustness"
    summary = "Zubizarreta et al. 2010, section 4.8: ISE, IAE, ITAE of the classical and extended CTC vs parameter errors"

    @dataclass(frozen=True)
    class Options:
        templates: int = option(RobustnessOptions.templates, "sign templates per level", low=1, high=100_000)

    def run(self, out: Path, options: Rrr3Robustness.Options, common: ExperimentCommon) -> dict[str, Any]:
        return rrr3_robustness(out, RobustnessOptions(**common.settings(),
                                                      templates=options.templates))

    def show(self, report: dict[str, Any], out: Path) -> None:
        if not report["centre_reachable"]:
            print(f"centre {report['centre_requested']} not reachable with margin: using {report['centre_used']}")
        for kind, entry in report["results"].items():
            print(f"{kind}: level (%) ISE IAE ITAE (template means)")
            for level, row in entry["per_level"].items():
                print(f"  {level:>3s}  {row['ISE']:.4e} {row['IAE']:.4e} {row['ITAE']:.4e}")
            print("  slope per %: " + " ".join(f"{k} {v:.3e}" for k, v in entry["slope_per_pct"].items()))
