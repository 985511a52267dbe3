"""``wu_redundancy``: driving forces of the redundant and non-redundant Wu machines (Wu et al. 2009, Figs. 2-3).

Protocol (section 5 of the paper):

1. **Motion.** The platform moves on a straight line in task space from the
   paper's ``[0.3 m, 3.2 m, pi/3]`` to ``[0.9 m, 2.3 m, 0]`` with accelerating,
   constant-velocity and decelerating phases (:class:`pardyn.trajectories.Trapezoidal`;
   the paper gives no durations: ``accel_s`` = 0.5 s each for accelerating and
   decelerating, ``cruise_s`` = 1 s at constant velocity, 2 s in all).
   **The paper's x is shifted by -d/2 = -0.6 m** (``x_shift_m``): with the
   columns at ``x = -+d/2`` (eq. 20a) and ``l = d = 1.2 m`` the reachable x is
   ``|x| < l - d/2 = 0.6 m``, so x = 0.9 m cannot be reached; the paper's x reads
   as measured from column 1 (``x + d/2``), i.e. the motion used is
   ``[-0.3, 3.2, pi/3] -> [0.3, 2.3, 0]``.
2. **Forces.** ``wu3r``: the minimum-norm driving forces of eq. (39);
   ``wu3n`` (strut E_1B_1 removed): the unique forces of eq. (38); both from the
   virtual-work model (:class:`pardyn.dynamics.wu.WuVirtualWork`) and checked
   against the generic engine (:class:`pardyn.dynamics.InverseDynamics`).
3. **Figures.** Per machine: ``max_t |F_i|`` (N), ``max_t |F_1 - F_2|`` (N) and
   ``slider_difference = max_t |F_1 - F_2| / max_t max(|F_1|, |F_2|)``,
   ``slider_ratio = max_t |F_1| / max_t |F_2|``; ``wu3n_over_wu3r``: the ratio of
   ``max_t |F_i|`` of the two machines for ``F_1, F_2, F_4``; plots of ``F_i(t)`` (Figs. 2, 3).
   ``claim_held``: ``slider_difference <= 0.1`` for ``wu3r`` (F_1, F_2 "differ
   little") and ``slider_ratio >= 2`` for ``wu3n`` (F_1 "much bigger" than F_2).
4. **Sensitivity** (not the paper's protocol; the paper leaves these open): the same
   figures without counterweights (their mass set to 0) and for a ten times slower
   motion (quasi-static), under ``sensitivity``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.dynamics import InverseDynamics
from pardyn.dynamics.wu import WuVirtualWork
from pardyn.experiments.plots import line_plot, write_json
from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon, NoOptions
from pardyn.robot import load_robot
from pardyn.trajectories import Trapezoidal

__all__ = ["WuOptions", "force_figures", "machine_forces", "paper_motion", "sample_times", "wu_redundancy"]

PAPER_START = (0.3, 3.2, math.pi / 3)  # m, m, rad (section 5)
PAPER_GOAL = (0.9, 2.3, 0.0)
FORCE_NAMES = {"wu3r": ("F1", "F2", "F3", "F4"), "wu3n": ("F1", "F2", "F4")}  # eqs. (35), (37)
MAX_DIFFERENCE = 0.1  # wu3r: F_1, F_2 "differ little"
MIN_RATIO = 2.0  # wu3n: F_1 "much bigger" than F_2


@dataclass(frozen=True)
class WuOptions:
    """Options of :func:`wu_redundancy` (defaults: the documented experiment).

    Attributes:
        accel_s: duration of the accelerating and of the decelerating phase (s).
        cruise_s: duration of the constant-velocity phase (s).
        x_shift_m: added to the paper's x (m), see the module docstring.
        rate_hz: sampling rate of the force curves (Hz).
    """

    accel_s: float = 0.5
    cruise_s: float = 1.0
    x_shift_m: float = -0.6
    rate_hz: float = 500.0


def paper_motion(options: WuOptions) -> Trapezoidal:
    """The paper's straight-line motion with the given phase durations (trapezoidal profile)."""
    shift = np.array([options.x_shift_m, 0.0, 0.0])
    start, goal = np.array(PAPER_START) + shift, np.array(PAPER_GOAL) + shift
    distance = np.abs(goal - start)
    path_speed = 1.0 / (options.accel_s + options.cruise_s)  # sdot on the cruise (1/s)
    return Trapezoidal(start, goal, path_speed * distance, path_speed / options.accel_s * distance)


def sample_times(trajectory: Trapezoidal, rate_hz: float) -> np.ndarray:
    """Mid-interval sample times (s) covering ``[0, T]``: no sample on a switching instant,
    where the trapezoidal acceleration steps."""
    count = max(1, round(trajectory.duration_s * rate_hz))
    return (np.arange(count) + 0.5) * (trajectory.duration_s / count)


def machine_forces(
    name: str, times: np.ndarray, trajectory: Trapezoidal, *, counterweights: bool = True
) -> tuple[np.ndarray, float]:
    """Driving forces (N, n_a) of ``name`` along the motion, eq. (39) / (38), and the largest
    difference (N) to the generic engine's; ``counterweights=False`` sets their mass to 0."""
    robot = load_robot(name)
    params = robot.nominal_parameters
    if not counterweights:
        params = params.with_values({f"{p}_slider{i}_joint": 0.0 for i in (1, 2) for p in ("ia", "offset")})
    model = WuVirtualWork(robot, params)
    samples = trajectory.evaluate(times)
    forces = model.forces(model.motion(samples.position, samples.velocity, samples.acceleration))
    generic = InverseDynamics(robot, params)
    q = np.stack([robot.solve_inverse(pose, method="analytic").q for pose in samples.position])
    states = [robot.differential.task_states(qk, v, a) for qk, v, a in zip(q, samples.velocity, samples.acceleration)]
    reference = generic.torques_batch(q, np.stack([s[1] for s in states]), np.stack([s[2] for s in states]))
    return forces, float(np.max(np.abs(forces - reference)))


def force_figures(forces: np.ndarray, labels: tuple[str, ...]) -> dict[str, Any]:
    """The figures of one machine from its forces (N, n_a): module docstring, step 3."""
    f1, f2 = np.abs(forces[:, 0]), np.abs(forces[:, 1])
    difference = float(np.max(np.abs(forces[:, 0] - forces[:, 1])))
    return {
        "max_abs_force_n": {label: float(np.max(np.abs(forces[:, k]))) for k, label in enumerate(labels)},
        "max_abs_f1_minus_f2_n": difference,
        "slider_difference": difference / float(np.max(np.maximum(f1, f2))),
        "slider_ratio": float(np.max(f1) / np.max(f2)),
    }


def wu_redundancy(out_dir: Path | str, options: WuOptions | None = None) -> dict[str, Any]:
    """Run the experiment; writes ``wu_redundancy.json`` and ``wu_redundancy_<robot>.png`` into ``out_dir``."""
    options = WuOptions() if options is None else options
    out_dir = Path(out_dir)
    trajectory = paper_motion(options)
    times = sample_times(trajectory, options.rate_hz)
    results: dict[str, Any] = {}
    plots = []
    for name, title in (("wu3r", "redundant (Fig. 2)"), ("wu3n", "non-redundant, E1B1 removed (Fig. 3)")):
        forces, generic_gap = machine_forces(name, times, trajectory)
        labels = FORCE_NAMES[name]
        results[name] = {**force_figures(forces, labels), "max_gap_to_generic_engine_n": generic_gap}
        path = out_dir / f"wu_redundancy_{name}.png"
        line_plot(path, [(times, forces[:, k], label) for k, label in enumerate(labels)],
                  title=f"{name}: driving forces, {title}", xlabel="t (s)", ylabel="force (N)")
        plots.append(str(path))
    removal = {  # what removing the strut E_1B_1 does to each common actuator
        label: results["wu3n"]["max_abs_force_n"][label] / results["wu3r"]["max_abs_force_n"][label]
        for label in FORCE_NAMES["wu3n"]
    }
    # Not the paper's protocol: how the figures move with the assumptions the paper leaves open.
    slow = WuOptions(accel_s=10 * options.accel_s, cruise_s=10 * options.cruise_s, x_shift_m=options.x_shift_m)
    variants = {"no_counterweights": (trajectory, False), "ten_times_slower": (paper_motion(slow), True)}
    sensitivity = {}
    for variant, (motion, counterweights) in variants.items():
        variant_times = sample_times(motion, 200.0 / motion.duration_s)  # 200 samples
        sensitivity[variant] = {
            name: force_figures(machine_forces(name, variant_times, motion, counterweights=counterweights)[0],
                                FORCE_NAMES[name])
            for name in FORCE_NAMES
        }
    claim = results["wu3r"]["slider_difference"] <= MAX_DIFFERENCE and results["wu3n"]["slider_ratio"] >= MIN_RATIO
    report = {
        "experiment": "wu_redundancy",
        "paper": "Wu, Wang, Wang, Li, Mechatronics 19 (2009), section 5, Figs. 2-3",
        "motion": {"start": trajectory.start.tolist(), "goal": trajectory.goal.tolist(),
                   "duration_s": trajectory.duration_s, "accel_time_s": trajectory.accel_time_s},
        "options": asdict(options),
        "results": results,
        "wu3n_over_wu3r": removal,
        "sensitivity": sensitivity,
        "paper_claim": "redundant machine: F1 and F2 differ little; non-redundant: F1 much bigger than F2",
        "claim_held": bool(claim),
        "claim_definition": (f"wu3r: max|F1-F2| / max(max|F1|, max|F2|) <= {MAX_DIFFERENCE}; "
                             f"wu3n: max|F1| / max|F2| >= {MIN_RATIO}"),
        "plots": plots,
    }
    write_json(out_dir / "wu_redundancy.json", report)
    return report


@EXPERIMENTS.plugin
class WuRedundancy:
    """``pardyn experiment wu_redundancy`` (:func:`wu_redundancy`)."""

    name = "wu_redundancy"
    summary = "Wu et al. 2009, section 5, Figs. 2-3: driving forces of the redundant and non-redundant machines"
    Options = NoOptions

    def run(self, out: Path, options: NoOptions, common: ExperimentCommon) -> dict[str, Any]:
        return wu_redundancy(out)

    def show(self, report: dict[str, Any], out: Path) -> None:
        for name, entry in report["results"].items():
            forces = " ".join(f"{label} {value:.0f}" for label, value in entry["max_abs_force_n"].items())
            print(f"{name}: max |F| (N) {forces}; max|F1-F2|/max|F| {entry['slider_difference']:.3f}; "
                  f"max|F1|/max|F2| {entry['slider_ratio']:.3f}")
        print("max|F| of wu3n / wu3r: " + " ".join(f"{k} {v:.3f}" for k, v in report["wu3n_over_wu3r"].items()))
