"""``estimator_benchmark``: Monte Carlo ranking of the registered estimators against the plant's truth.

BIRDy (Leboutet et al. 2021) ranks identification methods by Monte Carlo draws of the measurement
noise on simulated serial robots. This is the same protocol on pardyn's robots, closed-loop and
actuation-redundant ones included:

1. **Plant and runs.** Per robot, the MuJoCo plant *as built* (nominal parameters perturbed,
   :func:`pardyn.simulation.identification_runs.as_built_parameters`, ``truth_seed``) tracks one
   exciting trajectory (designed once, ``trajectory_seed``) under the identification runs' joint PD.
   Each **draw** re-runs it with new measurement noise (``seed = draw``): encoder quantization
   (``counts_per_revolution``, the controller sees it too) and relative torque noise, at three
   **noise levels** (:data:`LEVELS`: 2^17 counts and 1 %, 2^15 and 5 %, 2^14 and 20 %: the
   torque levels of the ``estimators`` study, after the UR5e paper's noise discussion; the
   encoder resolutions of a 17-bit absolute encoder down to a 14-bit one). A draw whose run cannot
   be recorded counts as a failure of every estimator. One held-out run (another
   trajectory, the lowest level) per robot.
2. **Estimators.** every registered one (:data:`pardyn.identification.estimators.ESTIMATORS`) or
   those named, each through :func:`pardyn.identification.pipeline.identify` on the draw's bag (the
   closed-loop ones simulate the model with the same PD and reference, at most ``max_iterations``
   simulations, stopping when a step moves the torques by less than ``tolerance`` of their norm: a budget, not
   convergence. On the Delta's draw 0 at ``low``, CLOE's model error is 0.478 % with the defaults (3, 1e-3) and
   0.317 % with 8 and 1e-6: ``--estimators wls,cloe --robots delta --levels low --draws 1 [--max-iterations 8
   --tolerance 1e-6]``). Every estimator evaluates the model at ``model_rate_hz``, 1 kHz by default, the control
   rate. The rate is a trade-off for the IDIM estimators (``python bench/estimator_benchmark.py noise_free ROBOT
   [1000]``, WLS model error at ``low``): at the pipeline's 100 Hz the Coulomb friction's filtering puts a floor
   under them on the Delta and the DualV (0.959 % and 0.318 %; 0.200 % and 0.146 % at 1 kHz), while on the UR5e,
   whose plant has no friction, the model evaluated on less filtered states at 1 kHz takes more of the noise
   (0.091 % at 100 Hz, 0.288 % at 1 kHz); doc/howto/identification.md.
3. **Figures per (robot, level, estimator)**, median and quartiles over the draws. ``model_error``
   (the ranking figure): the noise-free torque error the parameter error causes on the held-out trajectory,
   ``||W_v (chi_hat - chi_true)|| / ||W_v chi_true||`` (:func:`model_error`; chi_true: the plant's values
   regrouped; ``W_v``: the base regressor on the plant's true states of the held-out run,
   :func:`validation_regressor`, built once per robot), so that the directions the data do not excite, which
   no estimator can recover, do not rank the estimators. ``parameter_error``: ``||chi_hat - chi_true|| /
   ||chi_true||`` over the base parameters, kept for what it is: on robots with zero or near-zero true base
   parameters (torque offsets, products of inertia of symmetric bodies, light bars) it measures the poorly
   excited directions (hundreds to thousands of percent on the Delta, for every estimator). Per base parameter
   ``|chi_hat_i - chi_true_i| / |chi_true_i|`` only for the parameters identified at that level (:func:`identified`:
   ``|chi_true_i| > 10 sigma_i``, ``sigma_i`` of eq. (47) from the draws' WLS fits, :func:`level_sigmas`), the
   others listed as not identified; ``torque_error``: the held-out relative torque error (measured, noisy torques);
   ``failures``: draws where the estimator raised; ``time_s``: median wall time of ``identify``.
4. **Ranking** by median model error per (robot, level), beside the ranking the survey reports for serial
   robots (:data:`SURVEY_RANKING`).

Jobs (one per robot, level and draw: record, then every estimator) run on the Dask engine
(:func:`pardyn.distributed.parallel_map`); ``<out>/estimator_benchmark.json`` holds every draw's
figures and the summary, plots ``estimator_benchmark_<robot>_<figure>.png``. Every finished draw is kept in
``<out>/entries/`` (and a draw's finished estimators in ``<out>/entries/partial/``): a run stopped early gives its
table (:func:`from_entries`) and a re-run with the same ``out`` resumes where it stopped.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.distributed import parallel_map
from pardyn.errors import InputError
from pardyn.excitation.bounds import excitation_settings
from pardyn.excitation.design import design_exciting_trajectory
from pardyn.experiments.plots import line_plot, write_json
from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon, seconds
from pardyn.identification.estimators import ESTIMATORS
from pardyn.identification.estimators.protocol import DEFAULT_TOLERANCE
from pardyn.identification.model_simulation import ClosedLoopSetup, SharedRuns
from pardyn.identification.pipeline import identify
from pardyn.identification.preparation import prepared_once
from pardyn.identification.settings import IdentificationSettings
from pardyn.registry import option
from pardyn.robot import load_robot
from pardyn.textio import load_json
from pardyn.simulation.identification_runs import as_built_parameters, controller
from pardyn.trajectories.joint import joint_trajectory

__all__ = ["IDENTIFIED_K", "LEVELS", "SURVEY_RANKING", "BenchmarkOptions", "NoiseLevel", "base_columns",
           "estimator_benchmark", "from_entries", "identified", "level_sigmas", "model_error", "survey_comparison",
           "table", "validation_regressor"]


@dataclass(frozen=True)
class NoiseLevel:
    """One measurement noise level: encoder counts per revolution and relative torque noise."""

    name: str
    counts_per_revolution: int
    torque_noise: float


LEVELS = (NoiseLevel("low", 2**17, 0.01), NoiseLevel("mid", 2**15, 0.05), NoiseLevel("high", 2**14, 0.20))
"""The three noise levels of the benchmark (module docstring). Coarser encoders stop the DualV's runs: at 2^12
counts per revolution its closed-loop forward kinematics from the quantized actuated readings leaves the loops
open by 1.35e-4 m, beyond the solver's 1e-4 tolerance (ConvergenceError in the recording, measured)."""

SURVEY_RANKING: dict[str, Any] = {
    "source": "Q. Leboutet, J. Roux, A. Janot, J. R. Guadarrama-Olvera, G. Cheng, 'Inertial parameter "
              "identification in robotics: a survey', Applied Sciences 11(9) 4303, 2021 (BIRDy; TX40 and RV2SQ, "
              "Monte Carlo on simulated serial robots: 15 noise conditions of Table 1, 25 initial guesses x b runs "
              "per method), sec. 10.1 (results) and Fig. 11 (decision tree)",
    "ranking": {
        "accuracy": ["didim", "iv"],
        "accuracy_note": "sec. 10.1.2: DIDIM and IDIM-IV the most accurate (MCS-RV2SQ-1-1, MCS-TX40-1-1, "
                         "MCS-TX40-4-1); AdaNN asymptotically IDIM-OLS but an order of magnitude more spread; the "
                         "DDIM Kalman filters good on undecimated TX40 data, much worse on decimated data",
        "position_noise_robust": ["didim", "clie", "cloe"],
        "position_noise_note": "sec. 10.1.1: the simulation-based methods are insensitive to joint-position noise; "
                               "IDIM-OLS/-WLS/-IRLS/-TLS, ML, AdaNN, HTRNN biased beyond sigma_q = 1e-4 rad unless "
                               "the data are low-pass filtered (zero-shift Butterworth), which brings them close to "
                               "the others",
        "cost": ["ols", "wls", "didim", "iv", "cloe", "clie", "ddim-nkf"],
        "cost_note": "sec. 10.1.3: DIDIM ~1 s, about 5x IDIM-OLS; CLOE and CLIE (finite-difference Jacobians) about "
                     "an order of magnitude slower than DIDIM and IDIM-IV; the sigma-point filters the most expensive",
    },
    "retrieved_from": "a public reading note of the paper (found by the search tool's code corpus, citing the "
                      "sections above); the paper's own text (MDPI page, stored) could be read only up to its "
                      "abstract, and BIRDy's README (github TUM-ICS/BIRDy, fetched) states no ranking: the section "
                      "numbers are the note's, not checked against the paper's tables",
    "note": "the survey's Kalman filters are DDIM (state [qdot, q, chi], observing q); pardyn's ekf/ukf are the "
            "parameter-only IDIM form, which ends at WLS: they compare with the survey's WLS, not its DDIM-NKF. "
            "The survey's ML is IDIM-ML (the inverse model with a noise-free regressor); pardyn's ml is the "
            "output-error maximum likelihood (CLOE with the joints' noise covariance estimated)",
}
"""The ranking the survey reports for serial robots, kept beside the benchmark's."""

DURATIONS = {"dualv": 12.0, "delta": 10.0, "ur5e": 15.0}
"""Exciting run per robot (s) unless ``identification_s`` says otherwise."""


@dataclass(frozen=True)
class BenchmarkOptions:
    """Options of :func:`estimator_benchmark` (defaults: the documented benchmark).

    Attributes:
        robots: robots benchmarked.
        draws: noise draws per level.
        levels: the noise levels.
        estimators: the estimators (empty: every registered one).
        identification_s: the exciting run's length (s) for every robot; None: :data:`DURATIONS`.
        validation_s: the held-out run (s).
        max_iterations: simulations allowed to the closed-loop estimators.
        tolerance: their stopping rule (a step that moves ``||W chi||`` by less than this fraction of ``||Y||``).
        model_rate_hz: the rate at which every estimator evaluates the model before the last decimation stage
            (the identification setting ``model_rate_hz``).
        trajectory_seed: the fixed exciting trajectory.
        validation_seed: the held-out trajectory.
        truth_seed: the as-built plant.
        keep_bags: keep every draw's bag (they are deleted once identified otherwise).
        workers: Dask worker processes.
        show_progress: progress lines on the terminal.
        durations: the exciting run's length per robot (s), used where ``identification_s`` is None.
    """

    robots: tuple[str, ...] = ("dualv", "delta", "ur5e")
    draws: int = 50
    levels: tuple[NoiseLevel, ...] = LEVELS
    estimators: tuple[str, ...] = ()
    identification_s: float | None = None
    validation_s: float = 6.0
    max_iterations: int = 3
    tolerance: float = DEFAULT_TOLERANCE
    model_rate_hz: float = 1000.0
    trajectory_seed: int = 1
    validation_seed: int = 3
    truth_seed: int = 7
    keep_bags: bool = False
    workers: int | None = None
    show_progress: bool = True
    durations: dict[str, float] = field(default_factory=lambda: dict(DURATIONS))

    def duration(self, robot: str) -> float:
        return self.identification_s if self.identification_s is not None else self.durations.get(robot, 12.0)

    def names(self) -> tuple[str, ...]:
        return self.estimators or ESTIMATORS.names


def _design(robot_name: str, duration_s: float, seed: int) -> tuple[Any, np.ndarray]:
    """The reference (actuated joints, 100 Hz samples) and the start pose of an exciting trajectory."""
    robot = load_robot(robot_name)
    design = design_exciting_trajectory(robot, duration_s=duration_s, candidates=6, seed=seed,
                                        **excitation_settings(robot).design_options())
    samples = joint_trajectory(robot, design.trajectory, rate_hz=100.0)
    return samples.select(robot.actuated_indices), samples.q[0]


def _record(robot_name: str, truth: Any, reference: Any, start: np.ndarray, duration_s: float, level: NoiseLevel,
            seed: int, path: Path) -> Path:
    """One closed-loop run of the MuJoCo plant with the level's noise (``seed``), written as a bag at ``path``."""
    return _run(robot_name, truth, reference, start, duration_s, level, seed).write_bag(path, reference=reference)


def _run(robot_name: str, truth: Any, reference: Any, start: np.ndarray, duration_s: float, level: NoiseLevel,
         seed: int) -> Any:
    """One closed-loop run of the MuJoCo plant with the level's noise (``seed``): the recording, truth included."""
    from pardyn.plants.measurement import MeasurementModel  # noqa: PLC0415
    from pardyn.plants.mujoco_plant import MujocoPlant  # noqa: PLC0415
    from pardyn.simulation.runner import run_closed_loop  # noqa: PLC0415 - the host loop

    robot = load_robot(robot_name)
    return run_closed_loop(
        robot, MujocoPlant(robot, truth), controller(robot), reference, duration_s=duration_s, start=start,
        rate_hz=1000.0, measurement=MeasurementModel(robot, counts_per_revolution=level.counts_per_revolution,
                                                     torque_noise=level.torque_noise, seed=seed),
    )


VALIDATION_STRIDE = 5
"""Every 5th sample of the held-out run (1 kHz) enters ``W_v``: 200 Hz, far above the trajectories' bandwidth."""


def validation_regressor(robot_name: str, recording: Any, stride: int = VALIDATION_STRIDE) -> tuple[np.ndarray,
                                                                                                 tuple[str, ...]]:
    """``W_v`` in standard parameters: the identification model's regressor (the pipeline's, default settings: one
    row per equation, :func:`pardyn.identification.preparation.model_equations`) on the plant's TRUE states of the
    held-out run, stacked ``(samples x rows, n_st)``, and the standard names of its columns.

    Each control period (1 ms, torque held) gives one sample: the plant's true tree states (``Recording.q``,
    ``Recording.qdot``) at the period's midpoint (the mean of its two ends) and its mean acceleration (the
    difference of the true velocities over the period), so that ``W_v chi_true`` is the torque applied over that
    period: the plant's torques to 2e-7 on the UR5e and 0.7 % on the Delta and the DualV (relative norm, measured on
    the held-out runs; the closed-loop plants' effects outside the model, e.g. loops closed by soft constraints,
    not separated here; the states at the samples with central differences: 4.7 % on the UR5e). Neither a draw's
    noise nor the held-out run's enters ``W_v``.
    """
    from pardyn.dynamics.regressor import Regressor  # noqa: PLC0415

    robot = load_robot(robot_name)
    settings = IdentificationSettings()
    regressor = Regressor(robot, projection=settings.model.projection(robot), projected=settings.model.projected)
    q, qdot = recording.q, recording.qdot
    qddot = np.diff(qdot, axis=0) / np.diff(recording.t)[:, None]
    keep = slice(0, len(recording.t) - 1, stride)
    observation, _ = regressor.equations((0.5 * (q[1:] + q[:-1]))[keep], (0.5 * (qdot[1:] + qdot[:-1]))[keep],
                                         qddot[keep])
    return observation.reshape(-1, observation.shape[-1]), tuple(regressor.names)


def base_columns(W_standard: np.ndarray, standard_names: tuple[str, ...], base: Any) -> np.ndarray:
    """``W_v`` of a base: the standard columns the identification kept (``base.standard_names``), reduced to the
    base columns (``W_st = W_b K``: the torques of standard values ``chi_st`` are ``W_b (K chi_st)``)."""
    index = {name: k for k, name in enumerate(standard_names)}
    return base.reduce(W_standard[:, [index[name] for name in base.standard_names]])


def model_error(W: np.ndarray, chi_hat: np.ndarray, chi_true: np.ndarray) -> float:
    """``||W (chi_hat - chi_true)|| / ||W chi_true||``: the noise-free torque error the parameter error causes on
    the trajectory of ``W`` (the held-out run's true states): zero for an error in the null space of ``W``, ``|s - 1|``
    for ``chi_hat = s chi_true``."""
    W = np.asarray(W, dtype=float)
    return float(np.linalg.norm(W @ (np.asarray(chi_hat) - np.asarray(chi_true))) / np.linalg.norm(W @ chi_true))


IDENTIFIED_K = 10.0
"""A base parameter counts as identified at a level when ``|chi_true_i| > k sigma_i`` with k = 10: a relative
standard deviation ``%sigma_i = 100 sigma_i / |chi_i|`` below 10 %, the threshold usually taken for a well
identified parameter (Gautier and Khalil; Briot, Gautier et al. 2015 (the DualV paper) give ``%sigma`` of eq. (47) in their Table 2, and
their essential parameters end at a ratio r_sigma = 10 of the largest to the smallest, sec. 4.5). A looser k (3) would count
parameters whose estimate still moves by a third of their value from draw to draw."""


def identified(chi_true: np.ndarray, sigma: np.ndarray, k: float = IDENTIFIED_K) -> np.ndarray:
    """The identifiable base parameters (boolean mask): ``|chi_true_i| > k sigma_i``, ``sigma_i`` of eq. (47)
    (Briot et al. 2015, ``sigma_i^2 = sigma_rho^2 [(W^T W)^-1]_ii``), i.e. relative standard deviation below
    ``100 / k`` %."""
    return np.abs(np.asarray(chi_true, dtype=float)) > k * np.asarray(sigma, dtype=float)


def _draw_job(shared: tuple, job: tuple[str, int, int]) -> dict[str, Any]:
    """Record one draw, then every estimator on it: the figures of each.

    After each estimator the draw so far is kept in ``<out>/entries/partial/``; a run stopped within a draw
    resumes it there (the draw's noise is its seed: the same bag is recorded again), and the finished draw
    moves to ``<out>/entries/``."""
    prepared, options, out = shared
    robot_name, level_index, draw = job
    level = options.levels[level_index]
    setup = prepared[robot_name]
    robot = load_robot(robot_name)
    path = out / "bags" / robot_name / level.name / f"draw_{draw}"
    if path.exists():
        shutil.rmtree(path)
    key = f"{robot_name}_{level.name}_{draw}.json"
    partial = out / "entries" / "partial" / key
    entry: dict[str, Any] = {"robot": robot_name, "level": level.name, "draw": draw, **_budget(options)}
    kept = load_json(partial, what="benchmark entry") if partial.exists() else None
    if kept is not None and _same_budget(kept, options):
        entry = kept
    clock = time.perf_counter()
    try:
        bag = _record(robot_name, setup["truth_parameters"], setup["reference"], setup["start"],
                      options.duration(robot_name), level, 1000 + draw, path)
    except Exception as error:  # noqa: BLE001 - a run the noise makes impossible is a finding, counted as failures
        message = f"recording failed: {type(error).__name__}: {error}"
        entry.update({name: {"failed": message} for name in options.names()})
        shutil.rmtree(path, ignore_errors=True)
        return entry
    entry.setdefault("record_s", time.perf_counter() - clock)
    truth = setup["truth"]
    closed_loop = [ClosedLoopSetup(controller(robot), setup["reference"])]
    settings = IdentificationSettings(workers=1, estimator_iterations=options.max_iterations,
                                      estimator_tolerance=options.tolerance, model_rate_hz=options.model_rate_hz)
    runs = SharedRuns()  # the closed-loop estimators' common start (the WLS estimate): simulated once
    with prepared_once():  # the draw's bag and the held-out one read, filtered and modelled once for all estimators
        for name in options.names():
            if name in entry:
                continue
            entry[name] = _estimator_figures(robot, bag, setup, settings.replace(estimator=name), closed_loop, truth,
                                             entry, runs)
            write_json(partial, entry)
    if not options.keep_bags:
        shutil.rmtree(path, ignore_errors=True)
    write_json(out / "entries" / key, entry)  # a stopped run keeps its draws
    partial.unlink(missing_ok=True)
    return entry


def _estimator_figures(robot: Any, bag: Path, setup: dict[str, Any], settings: IdentificationSettings,
                       closed_loop: list[ClosedLoopSetup], truth: dict[str, float],
                       entry: dict[str, Any], shared: SharedRuns | None = None) -> dict[str, Any]:
    """One estimator on one draw: its base parameters and std, the errors against the truth (``true_base``
    written in ``entry``), the held-out figures, the time; or its failure."""
    name = settings.estimator.name
    clock = time.perf_counter()
    try:
        result = identify(robot, [bag], validate_bags=[setup["validation"]], settings=settings,
                          closed_loop=closed_loop if ESTIMATORS.get(name).closed_loop else None, show_progress=False,
                          shared_runs=shared)
    except Exception as error:  # noqa: BLE001 - a failed estimator is a finding, counted as such
        return {"failed": f"{type(error).__name__}: {error}", "time_s": time.perf_counter() - clock}
    base = result.base
    true_base = base.from_standard(np.array([truth[n] for n in base.standard_names]))
    entry.setdefault("true_base", dict(zip(base.names, true_base.tolist())))
    chi = result.estimate.chi
    return {
        "model_error": model_error(base_columns(setup["validation_regressor"][0], setup["validation_regressor"][1],
                                                base), chi, true_base),
        "parameter_error": float(np.linalg.norm(chi - true_base) / np.linalg.norm(true_base)),
        "parameter_errors": dict(zip(result.estimate.names,
                                     (np.abs(chi - true_base) / np.maximum(np.abs(true_base), 1e-12)).tolist())),
        "chi": dict(zip(result.estimate.names, chi.tolist())),
        "std": dict(zip(result.estimate.names, np.asarray(result.estimate.std, dtype=float).tolist())),
        "torque_error": result.as_json()["validation"]["relative_error_norm"],
        "time_s": time.perf_counter() - clock,
    }


def _quartiles(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    q25, q50, q75 = np.percentile(values, [25, 50, 75])
    return {"median": float(q50), "q25": float(q25), "q75": float(q75)}


SIGMA_FROM = ("wls", "ols")
"""The estimators whose eq. (47) standard deviations decide the identifiable parameters (the first run)."""


def level_sigmas(draws: list[dict[str, Any]], names: tuple[str, ...]) -> dict[str, float]:
    """Per base parameter, the median over the draws of ``sigma_i`` (eq. 47) of the draws' WLS fits (OLS's without
    WLS, else the first estimator that reports one)."""
    for source in (*SIGMA_FROM, *names):
        fits = [e[source]["std"] for e in draws if "std" in e.get(source, {})]
        if fits:
            return {p: float(np.median([fit[p] for fit in fits if p in fit])) for p in fits[0]}
    return {}


def summarise(entries: list[dict[str, Any]], options: BenchmarkOptions) -> list[dict[str, Any]]:
    """Median and quartiles per (robot, level, estimator), ranked by median model error.

    Per-parameter errors only of the parameters identified at that level (:func:`identified`, ``sigma_i`` of
    :func:`level_sigmas`); the others are listed as not identified."""
    rows = []
    for robot in options.robots:
        for level in options.levels:
            draws = [e for e in entries if e["robot"] == robot and e["level"] == level.name]
            sigmas = level_sigmas(draws, options.names())
            true_base: dict[str, float] = next((e["true_base"] for e in draws if "true_base" in e), {})
            kept = [p for p in true_base if p in sigmas]
            mask = identified(np.array([true_base[p] for p in kept]), np.array([sigmas[p] for p in kept]))
            chosen = {p for p, ok in zip(kept, mask) if ok}
            group: list[dict[str, Any]] = []
            for name in options.names():
                good = [e[name] for e in draws if name in e and "failed" not in e[name]]
                per_parameter: dict[str, list[float]] = {}
                for figures in good:
                    for parameter, value in figures["parameter_errors"].items():
                        if parameter in chosen:
                            per_parameter.setdefault(parameter, []).append(value)
                group.append({
                    "robot": robot, "level": level.name, "estimator": name, "draws": len(draws),
                    "failures": len(draws) - len(good),
                    "model_error": _quartiles([f["model_error"] for f in good if "model_error" in f]),
                    "parameter_error": _quartiles([f["parameter_error"] for f in good]),
                    "torque_error": _quartiles([f["torque_error"] for f in good]),
                    "time_s": _quartiles([f["time_s"] for f in good]),
                    "per_parameter": {p: _quartiles(v) for p, v in per_parameter.items()},
                    "identified": len(chosen), "not_identified": sorted(set(true_base) - chosen),
                    "first_failure": next((e[name]["failed"] for e in draws if "failed" in e.get(name, {})), None),
                })
            ranked = sorted((r for r in group if r["model_error"]), key=lambda r: r["model_error"]["median"])
            for rank, row in enumerate(ranked, 1):
                row["rank"] = rank
            rows.extend(group)
    return rows


def table(summary: list[dict[str, Any]]) -> str:
    """The summary as a Markdown table (percentages: median [quartiles]); the ranking figure is the model error,
    the base-parameter norm error is shown for what it is (dominated by the weakly excited directions). The
    identified column: how many base parameters pass :func:`identified` at that level, and the median and the
    largest of their per-parameter median errors."""

    def cell(figure: dict[str, float] | None, scale: float = 100.0, digits: str = ".3g") -> str:
        if figure is None:
            return "-"
        return (f"{scale * figure['median']:{digits}} [{scale * figure['q25']:{digits}}, "
                f"{scale * figure['q75']:{digits}}]")

    def spread(row: dict[str, Any]) -> str:
        medians = [f["median"] for f in row["per_parameter"].values() if f]
        return f"{100 * np.median(medians):.3g} / {100 * max(medians):.3g}" if medians else "-"

    lines = ["| robot | level | estimator | rank | model error (%) | held-out torque error (%) | "
             "identified: their errors' median / worst (%) | base-parameter norm error (%) | failures | time (s) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in summary:
        identified_ = f"{row['identified']}/{row['identified'] + len(row['not_identified'])}: {spread(row)}"
        lines.append(f"| {row['robot']} | {row['level']} | {row['estimator']} | {row.get('rank', '-')} | "
                     f"{cell(row['model_error'])} | {cell(row['torque_error'])} | {identified_} | "
                     f"{cell(row['parameter_error'])} | {row['failures']}/{row['draws']} | "
                     f"{cell(row['time_s'], 1.0, '.2g')} |")
    return "\n".join(lines)


def estimator_benchmark(out: Path | str, options: BenchmarkOptions | None = None) -> dict[str, Any]:
    """Run the benchmark (module docstring); writes ``<out>/estimator_benchmark.json``, the table and plots."""
    options = options or BenchmarkOptions()
    out = Path(out)
    clock = time.perf_counter()
    prepared = {robot_name: _prepare(robot_name, options, out) for robot_name in options.robots}
    # draw after draw (every robot and level at draw k before draw k + 1): a run stopped early has as many
    # draws of each, and ``<out>/entries/`` (one JSON per finished draw) gives its table (:func:`from_entries`)
    jobs = [(robot, level, draw) for draw in range(options.draws) for robot in options.robots
            for level in range(len(options.levels))]
    finished = _finished(out, options)  # a re-run with the same ``out`` resumes: the finished draws are kept
    entries = [finished[job] for job in jobs if job in finished] + parallel_map(
        _draw_job, (prepared, options, out), [job for job in jobs if job not in finished], workers=options.workers,
        label="estimator_benchmark" if options.show_progress else None)
    summary = summarise(entries, options)
    text = table(summary)
    comparison = survey_comparison(summary)
    (out / "estimator_benchmark.md").parent.mkdir(parents=True, exist_ok=True)
    (out / "estimator_benchmark.md").write_text(text + "\n\nBeside the survey (Leboutet et al. 2021):\n\n"
                                                + "".join(f"* {line}\n" for line in comparison))
    held = _filters_are_wls(summary)
    report = {
        "experiment": "estimator_benchmark",
        "paper_claim": "Gautier and Poignet 2001: with constant parameters the Kalman filter of the identification "
                       "model ends at the weighted least-squares estimate",
        "claim_held": held,
        "claim_definition": "in every (robot, level) where both ran, the EKF's median base-parameter error equals "
                            "WLS's within 1e-6 of it (None: not both run)",
        "summary": summary,
        "table": text,
        "survey_ranking": SURVEY_RANKING,
        "survey_comparison": comparison,
        "draws": entries,
        "options": {**asdict(options), "levels": [asdict(level) for level in options.levels]},
        "plots": _plots(out, summary, options),
        "time_s": time.perf_counter() - clock,
    }
    write_json(out / "estimator_benchmark.json", report)
    return report


def _prepare(robot_name: str, options: BenchmarkOptions, out: Path) -> dict[str, Any]:
    """A robot's truth, exciting reference, held-out bag and ``W_v`` (:func:`validation_regressor`)."""
    robot = load_robot(robot_name)
    truth = as_built_parameters(robot.nominal_parameters, seed=options.truth_seed)
    reference, start = _design(robot_name, options.duration(robot_name), options.trajectory_seed)
    held_reference, held_start = _design(robot_name, options.validation_s, options.validation_seed)
    validation = out / "bags" / robot_name / "validation"
    if validation.exists():
        shutil.rmtree(validation)
    recording = _run(robot_name, truth, held_reference, held_start, options.validation_s, options.levels[0], 999)
    recording.write_bag(validation, reference=held_reference)
    return {"truth_parameters": truth, "truth": truth.as_dict(), "reference": reference, "start": start,
            "validation": validation, "validation_regressor": validation_regressor(robot_name, recording)}


def _finished(out: Path, options: BenchmarkOptions) -> dict[tuple[str, int, int], dict[str, Any]]:
    """The draws a former run with this ``out`` finished with every estimator asked now (and its model error)."""
    finished = {}
    for index, level in enumerate(options.levels):
        for robot in options.robots:
            for path in (out / "entries").glob(f"{robot}_{level.name}_*.json"):
                entry = load_json(path, what="benchmark entry")
                if entry["robot"] == robot and entry["level"] == level.name and entry["draw"] < options.draws and \
                        _same_budget(entry, options) and all(
                        name in entry and ("failed" in entry[name] or "model_error" in entry[name])
                        for name in options.names()):
                    finished[(robot, index, entry["draw"])] = entry
    return finished


def _budget(options: BenchmarkOptions) -> dict[str, float]:
    """What a draw's figures depend on beyond the draw and the estimators (the closed-loop estimators' budget, the
    model rate): kept in its entry."""
    return {"max_iterations": options.max_iterations, "tolerance": options.tolerance,
            "model_rate_hz": options.model_rate_hz}


UNRECORDED_BUDGET = {"max_iterations": 3, "tolerance": DEFAULT_TOLERANCE, "model_rate_hz": 100.0}
"""What an entry written before its budget was recorded was made with (sixth session: the pipeline's model rate)."""


def _same_budget(entry: dict[str, Any], options: BenchmarkOptions) -> bool:
    """Whether a kept entry was made with ``options``' budget (:data:`UNRECORDED_BUDGET` where it says none): a
    re-run with another budget in the same ``out`` recomputes the draws rather than mixing them."""
    return all(entry.get(key, UNRECORDED_BUDGET[key]) == value for key, value in _budget(options).items())


def survey_comparison(summary: list[dict[str, Any]]) -> list[str]:
    """One line per (robot, level): the benchmark's most accurate estimators beside the survey's (DIDIM and IV,
    :data:`SURVEY_RANKING`), agreement or difference stated; the estimators the survey ranks that did not run."""
    ranked_by_survey = SURVEY_RANKING["ranking"]["accuracy"]
    lines = []
    for robot, level in dict.fromkeys((r["robot"], r["level"]) for r in summary):
        rows = sorted((r for r in summary if r["robot"] == robot and r["level"] == level and r.get("rank")),
                      key=lambda r: r["rank"])
        if not rows:
            continue
        order = [r["estimator"] for r in rows]
        present = [name for name in ranked_by_survey if name in order]
        failed = [r["estimator"] for r in summary if r["robot"] == robot and r["level"] == level
                  and r["estimator"] in ranked_by_survey and not r.get("rank") and r["draws"]]
        head = f"{robot}/{level}: most accurate here (model error) {', '.join(order[:2])} (of {len(order)})"
        if not present:
            said = ("survey's most accurate (didim, iv) failed on every draw here" if failed
                    else "survey's most accurate (didim, iv) not run here")
        else:
            top = set(order[:len(present)])
            verdict = "agrees" if top == set(present) else "differs"
            said = (f"survey: didim, iv most accurate (sec. 10.1.2): {verdict} "
                    f"({', '.join(f'{n} rank {order.index(n) + 1}' for n in present)})")
        lines.append(f"{head}; {said}")
    return lines


def from_entries(out: Path | str, options: BenchmarkOptions) -> dict[str, Any]:
    """The summary and table of the draws a run (perhaps stopped early) finished: ``<out>/entries/*.json`` made with
    ``options``' budget (:func:`_same_budget`: draws of another model rate or iteration budget are not mixed in)."""
    out = Path(out)
    read = (load_json(path, what="benchmark entry") for path in sorted((out / "entries").glob("*.json")))
    entries = [entry for entry in read if _same_budget(entry, options)]
    summary = summarise(entries, options)
    return {"summary": summary, "table": table(summary), "draws": entries, "survey_ranking": SURVEY_RANKING,
            "survey_comparison": survey_comparison(summary), "claim_held": _filters_are_wls(summary)}


def _filters_are_wls(summary: list[dict[str, Any]]) -> bool | None:
    """The claim (module docstring's report): EKF's median parameter error is WLS's, wherever both ran."""
    pairs = []
    for row in summary:
        if row["estimator"] != "ekf" or row["parameter_error"] is None:
            continue
        wls = next((r for r in summary if r["robot"] == row["robot"] and r["level"] == row["level"]
                    and r["estimator"] == "wls" and r["parameter_error"] is not None), None)
        if wls is not None:
            pairs.append((row["parameter_error"]["median"], wls["parameter_error"]["median"]))
    if not pairs:
        return None
    return all(abs(a - b) <= 1e-6 * b for a, b in pairs)


def _plots(out: Path, summary: list[dict[str, Any]], options: BenchmarkOptions) -> list[str]:
    """Per robot and figure: the median over the draws against the noise level, one curve per estimator."""
    plots = []
    levels = [level.name for level in options.levels]
    for robot in options.robots:
        for key, label in (("model_error", "model error on the held-out trajectory (%)"),
                           ("parameter_error", "base-parameter norm error vs the plant (%)"),
                           ("torque_error", "held-out torque error (%)")):
            curves = []
            for name in options.names():
                points = [(levels.index(r["level"]), 100 * r[key]["median"]) for r in summary
                          if r["robot"] == robot and r["estimator"] == name and r[key]]
                if points:
                    x, y = np.array(points).T
                    curves.append((x, y, name))
            if curves:
                path = line_plot(out / f"estimator_benchmark_{robot}_{key}.png", curves,
                                 title=f"{robot}: median over {options.draws} draws",
                                 xlabel="noise level (0: " + ", ".join(levels) + ")", ylabel=label, logy=True,
                                 markers=True)
                plots.append(str(path))
    return plots


@EXPERIMENTS.plugin
class EstimatorBenchmark:
    """``pardyn experiment estimator_benchmark`` (:func:`estimator_benchmark`)."""

    name = "estimator_benchmark"
    summary = ("Monte Carlo draws of the measurement noise at three levels on the DualV, the Delta and the UR5e: "
               "every estimator's errors, failures and time, ranked")

    @dataclass(frozen=True)
    class Options:
        robots: tuple[str, ...] = option(BenchmarkOptions.robots, "comma-separated robots")
        draws: int = option(BenchmarkOptions.draws, "noise draws per level and robot", low=1, high=100_000)
        estimators: tuple[str, ...] = option((), "comma-separated estimators (none: every registered one)")
        levels: tuple[str, ...] = option((), "comma-separated noise levels among low,mid,high (none: all three)")
        identification_s: float = seconds(None, "every robot's exciting run in s (default dualv 12, delta 10, ur5e 15)")
        validation_s: float = seconds(BenchmarkOptions.validation_s, "the held-out run in s")
        max_iterations: int = option(BenchmarkOptions.max_iterations, "simulations allowed to each closed-loop "
                                     "estimator (IV, DIDIM, CLOE, ML)", low=1, high=1000)
        model_rate: float = option(BenchmarkOptions.model_rate_hz, "rate (Hz) at which every estimator evaluates "
                                   "the model before the last decimation stage (pardyn identify --model-rate)",
                                   low=1.0, high=1e6)
        tolerance: float = option(BenchmarkOptions.tolerance, "the closed-loop estimators stop when a step changes "
                                  "||W chi|| by less than this fraction of ||Y||", low=1e-15, high=1.0)

    def run(self, out: Path, options: EstimatorBenchmark.Options, common: ExperimentCommon) -> dict[str, Any]:
        for name in options.estimators:
            ESTIMATORS.get(name)  # InputError naming the known ones
        known = {level.name: level for level in LEVELS}
        unknown = [name for name in options.levels if name not in known]
        if unknown:
            raise InputError(f"unknown noise levels {unknown}, expected some of {list(known)}")
        levels = tuple(known[name] for name in options.levels) or LEVELS
        return estimator_benchmark(out, BenchmarkOptions(
            robots=options.robots, draws=options.draws, levels=levels, estimators=options.estimators,
            identification_s=options.identification_s, validation_s=options.validation_s,
            max_iterations=options.max_iterations, tolerance=options.tolerance, model_rate_hz=options.model_rate,
            **common.settings()))

    def show(self, report: dict[str, Any], out: Path) -> None:
        print(report["table"])
        for line in report["survey_comparison"]:
            print(f"beside the survey: {line}")
        print(f"table: {out / 'estimator_benchmark.md'} ({report['time_s']:.0f} s)")
