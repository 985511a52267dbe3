"""``estimators``: the registered estimators (IDIM-WLS, IDIM-OLS, IDIM-IV, DIDIM) on the MuJoCo plant, as noise grows and filters are mistuned.

The UR5e paper (section 1) names IDIM-IV (Janot et al.) and DIDIM (Gautier et
al.) as the answers to IDIM-LS's weak points, its bias under noise and its
dependence on well-tuned band-pass filters, and cites a comparison ([12]) in
which they brought nothing over a well-tuned IDIM-LS. This study measures it on
a closed-loop, actuation-redundant robot (the DualV, case 1 model) and a serial
one (the UR5e):

1. **Runs.** For each robot, the MuJoCo plant *as built* (nominal parameters
   perturbed, :func:`pardyn.simulation.identification_runs.as_built_parameters`)
   runs an exciting trajectory under the identification runs' joint PD, with
   relative torque noise ``noise_levels`` (1 %, 5 %, 20 %; seeded), and one
   held-out run at the lowest level.
2. **Conditions.** Every noise level with the pipeline's derivative filter as
   tuned (cut-off 5 x the dynamics bandwidth), and the middle noise level with
   the cut-off mistuned by ``cutoff_factors`` (x 0.5, x 2).
3. **Estimators.** every registered one (:data:`pardyn.identification.estimators.ESTIMATORS`:
   ``wls``, ``iv``, ``didim``, ``ols``), the closed-loop ones (IV, DIDIM) simulating
   the model in closed loop with the same PD and the recorded reference, at most
   ``max_iterations`` simulations, started from WLS.
4. **Figures.** ``parameter_error``: ``||chi_hat - chi_true|| / ||chi_true||`` over the
   base parameters (chi_true: the plant's as-built values regrouped);
   ``torque_error``: the held-out run's relative torque error norm (the
   pipeline's validation); iterations and convergence. Plots: both figures
   against noise and against the filter factor, per robot.

``claim_held``: the paper's citation says IV/DIDIM bring no improvement over a
well-tuned IDIM-LS: held if, at the tuned filter and the lowest noise, no
closed-loop estimator (IV, DIDIM) lowers the held-out torque error by more than
10 % of the default estimator's (WLS).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.distributed import parallel_map
from pardyn.experiments.plots import line_plot, write_json
from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon, seconds
from pardyn.identification.estimators import DEFAULT_ESTIMATOR, ESTIMATORS
from pardyn.identification.model_simulation import ClosedLoopSetup
from pardyn.identification.pipeline import identify
from pardyn.identification.settings import IdentificationSettings
from pardyn.registry import option
from pardyn.robot import load_robot
from pardyn.simulation.identification_runs import Run, record_runs

__all__ = ["EstimatorsOptions", "estimators_study"]



def _closed_loop() -> tuple[str, ...]:
    return tuple(name for name in ESTIMATORS.names if ESTIMATORS.get(name).closed_loop)

@dataclass(frozen=True)
class EstimatorsOptions:
    """Options of :func:`estimators_study` (defaults: the documented experiment).

    Attributes:
        robots: robots studied; noise_levels: relative torque noise of the runs;
        cutoff_factors: derivative cut-off mistuning factors, applied at ``mistuned_noise``;
        identification_s: exciting run (s) per robot (``{robot: s}``); validation_s: the held-out run (s);
        max_iterations: simulations allowed to IV and DIDIM; workers, show_progress.
    """

    robots: tuple[str, ...] = ("dualv", "ur5e")
    noise_levels: tuple[float, ...] = (0.01, 0.05, 0.20)
    cutoff_factors: tuple[float, ...] = (0.5, 2.0)
    mistuned_noise: float = 0.05
    identification_s: dict[str, float] | None = None
    validation_s: float = 6.0
    max_iterations: int = 3
    workers: int | None = None
    show_progress: bool = True

    def duration(self, robot: str) -> float:
        default = {"dualv": 12.0, "ur5e": 15.0}
        return (self.identification_s or default).get(robot, 12.0)


def _condition_job(shared: tuple, job: tuple[str, float, float]) -> dict[str, Any]:
    """The three estimators on one (robot, noise, cutoff factor) condition."""
    recorded, options = shared
    robot_name, noise, factor = job
    runs = recorded[robot_name]
    robot = load_robot(robot_name)
    bag = runs["bags"][noise]
    setups = [ClosedLoopSetup(runs["controller"], runs["reference"])]
    truth = runs["truth"]
    settings = IdentificationSettings(workers=1, estimator_iterations=options.max_iterations)
    entry: dict[str, Any] = {"robot": robot_name, "noise": noise, "cutoff_factor": factor}
    tuned = None
    for name in ESTIMATORS.names:
        clock = time.perf_counter()
        chosen = settings.replace(estimator=name)
        if factor != 1.0:
            if tuned is None:
                tuned = identify(robot, [bag], settings=settings, show_progress=False).cutoff_hz
            chosen = chosen.replace(cutoff_hz=factor * tuned)
        try:
            result = identify(robot, [bag], validate_bags=[runs["validation"]], settings=chosen, closed_loop=setups,
                              show_progress=False)
        except Exception as error:  # noqa: BLE001 - a failed estimator is a finding, reported as such
            entry[name] = {"failed": f"{type(error).__name__}: {error}"}
            continue
        base = result.base
        true_base = base.from_standard(np.array([truth[n] for n in base.standard_names]))
        data = result.as_json()
        entry[name] = {
            "parameter_error": float(np.linalg.norm(result.estimate.chi - true_base) / np.linalg.norm(true_base)),
            "torque_error": data["validation"]["relative_error_norm"],
            "fit_error": data["fit"]["relative_error_norm"],
            "iterations": data["estimator"]["iterations"],
            "converged": data["estimator"]["converged"],
            "cutoff_hz": result.cutoff_hz,
            "time_s": time.perf_counter() - clock,
        }
    return entry


def _record(robot_name: str, out: Path, options: EstimatorsOptions) -> dict[str, Any]:
    bags, reference, controller, truth = {}, None, None, None
    for level in options.noise_levels:  # same trajectory (seed), same plant, noise scaled
        recorded = record_runs(robot_name, [Run("identification", 1, options.duration(robot_name))],
                               out / robot_name / f"noise_{100 * level:g}pct", torque_noise=level,
                               show_progress=options.show_progress, workers=1)
        bags[level] = recorded.bags["identification"]
        reference, controller, truth = recorded.references["identification"], recorded.controller, recorded.truth
    held_out = record_runs(robot_name, [Run("validation", 3, options.validation_s)], out / robot_name / "validation",
                           torque_noise=min(options.noise_levels), show_progress=options.show_progress, workers=1)
    return {"bags": bags, "reference": reference, "controller": controller, "truth": truth.as_dict(),
            "validation": held_out.bags["validation"]}


def estimators_study(out: Path | str, options: EstimatorsOptions | None = None) -> dict[str, Any]:
    """Run the study (module docstring); writes ``<out>/estimators.json`` and plots."""
    options = options or EstimatorsOptions()
    out = Path(out)
    clock = time.perf_counter()
    recorded = {robot: _record(robot, out / "bags", options) for robot in options.robots}
    jobs = [(robot, level, 1.0) for robot in options.robots for level in options.noise_levels]
    jobs += [(robot, options.mistuned_noise, factor) for robot in options.robots for factor in options.cutoff_factors]
    entries = parallel_map(_condition_job, (recorded, options), jobs, workers=options.workers,
                       label="estimators" if options.show_progress else None)
    plots = _plots(out, entries, options)
    lowest = min(options.noise_levels)
    improvements = {}
    for robot in options.robots:
        row = next(e for e in entries if e["robot"] == robot and e["noise"] == lowest and e["cutoff_factor"] == 1.0)
        base = row[DEFAULT_ESTIMATOR].get("torque_error")
        improvements[robot] = {
            name: (None if base is None or "torque_error" not in row[name] else 1.0 - row[name]["torque_error"] / base)
            for name in _closed_loop()
        }
    held = all(v is None or v <= 0.1 for entry in improvements.values() for v in entry.values())
    report = {
        "experiment": "estimators",
        "paper_claim": "UR5e paper section 1, citing [12]: with well-tuned band-pass filters, IV/DIDIM "
                       "do not improve on IDIM-LS",
        "claim_held": held,
        "claim_definition": f"at the lowest noise and the tuned filter, none of {list(_closed_loop())} lowers the "
                            f"held-out torque error by more than 10 % of {DEFAULT_ESTIMATOR}'s",
        "held_out_improvement_at_lowest_noise": improvements,
        "results": entries,
        "options": asdict(options),
        "plots": plots,
        "time_s": time.perf_counter() - clock,
    }
    write_json(out / "estimators.json", report)
    return report


def _plots(out: Path, entries: list[dict[str, Any]], options: EstimatorsOptions) -> list[str]:
    plots = []
    for robot in options.robots:
        tuned = sorted((e for e in entries if e["robot"] == robot and e["cutoff_factor"] == 1.0),
                       key=lambda e: e["noise"])
        mistuned = sorted((e for e in entries if e["robot"] == robot and e["noise"] == options.mistuned_noise),
                          key=lambda e: e["cutoff_factor"])
        for key, label in (("parameter_error", "base-parameter error vs the plant (%)"),
                           ("torque_error", "held-out torque error (%)")):
            for rows, x_key, x_label, tag in ((tuned, "noise", "torque noise (%)", "noise"),
                                               (mistuned, "cutoff_factor", "derivative cut-off factor", "cutoff")):
                curves = []
                for name in ESTIMATORS.names:
                    points = [(e[x_key], e[name][key]) for e in rows if key in e[name]]
                    if points:
                        x, y = np.array(points).T
                        curves.append((100 * x if x_key == "noise" else x, 100 * y, name))
                path = line_plot(out / f"estimators_{robot}_{key}_vs_{tag}.png", curves,
                                 title=f"{robot}: {label.split(' (')[0]}", xlabel=x_label, ylabel=label,
                                 logy=True, markers=True)
                plots.append(str(path))
    return plots


@EXPERIMENTS.plugin
class Estimators:
    """``pardyn experiment estimators`` (:func:`estimators_study`)."""

    name = "estimators"
    summary = ("the registered estimators on the DualV and the UR5e as the torque noise grows and the derivative "
               "filter is mistuned (UR5e paper, section 1)")

    @dataclass(frozen=True)
    class Options:
        robots: tuple[str, ...] = option(EstimatorsOptions.robots, "comma-separated robots")
        identification_s: float = seconds(None, "every robot's run in s (default dualv 12, ur5e 15)")
        validation_s: float = seconds(EstimatorsOptions.validation_s, "the held-out run in s")

    def run(self, out: Path, options: Estimators.Options, common: ExperimentCommon) -> dict[str, Any]:
        durations = None if options.identification_s is None else dict.fromkeys(options.robots,
                                                                                 options.identification_s)
        return estimators_study(out, EstimatorsOptions(
            robots=options.robots, identification_s=durations, validation_s=options.validation_s,
            **common.settings()))

    def show(self, report: dict[str, Any], out: Path) -> None:
        names = ESTIMATORS.names
        closed_loop = [name for name in names if ESTIMATORS.get(name).closed_loop]
        print(f"robot  noise  cut-off x  | base-parameter error (%) {' '.join(names)} | held-out torque error (%) "
              f"{' '.join(names)} | iterations {' '.join(closed_loop)}")
        for entry in report["results"]:
            def figure(name: str, key: str) -> str:
                value = entry[name].get(key)
                return "failed" if value is None else f"{100 * value:.3g}"

            print(f"{entry['robot']:6s} {100 * entry['noise']:4.0f} % {entry['cutoff_factor']:5.2g}     | "
                  + " ".join(figure(n, "parameter_error") for n in names) + " | "
                  + " ".join(figure(n, "torque_error") for n in names) + " | "
                  + " ".join(str(entry[n].get("iterations", "-")) for n in closed_loop))
