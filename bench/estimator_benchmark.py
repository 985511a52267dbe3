#!/usr/bin/env python3
"""The estimator benchmark as far as it fits, and the cost of one output-error fit.

Four uses (``PYTHONPATH=src OPENBLAS_NUM_THREADS=1``):

* ``python bench/estimator_benchmark.py table OUT``: the table, the survey comparison and the EKF = WLS
  claim of a run (perhaps stopped: ``timeout``) from the per-draw files ``OUT/entries/*.json``
  (:func:`pardyn.experiments.estimator_benchmark.from_entries`), written to ``OUT/partial.md``. A stopped run
  resumes when given the same ``--out`` again (the finished draws kept, a draw's finished estimators too).
* ``python bench/estimator_benchmark.py simulation ROBOT [SECONDS]``: the cost of one closed-loop simulation of
  the model per control period, with the accelerations (IV, DIDIM) and without (CLOE, ML).
* ``python bench/estimator_benchmark.py noise_free ROBOT [MODEL_RATE_HZ] [pinocchio]``: the benchmark's run without
  measurement noise and at ``low``, identified by WLS: the model error and the drive parameters' errors against the
  plant (what stays without noise is the identification's own floor, or a plant/model mismatch: ``pinocchio``
  records on pardyn's own forward model instead of MuJoCo).
* ``python bench/estimator_benchmark.py cost ROBOT ESTIMATOR [ITERATIONS] [SENSITIVITY]``: one draw of the
  benchmark (draw 0, ``mid`` level, the benchmark's trajectory, truth and duration) identified by one
  closed-loop estimator: wall time, closed-loop simulations and their mean cost, the base-parameter error.

The runs measured on 28 Nov 2026 (one CPU slot each, ``--workers 1``), stopped at 06:44 UTC by ``timeout``:

    pardyn experiment estimator_benchmark --out OUT --draws 50 --estimators ols,wls,ekf,ukf --workers 1
    pardyn experiment estimator_benchmark --out OUT_OE --draws 1 --levels mid --robots dualv,delta \\
        --estimators wls,iv,didim,cloe,ml --workers 1

and with the linearised sensitivity of CLOE and ML (stopped at 12:12 UTC by ``timeout 1500``: 5/5/4 draws per level):

    pardyn experiment estimator_benchmark --out OUT_CLOE --draws 50 --robots dualv --levels low,mid,high \\
        --estimators wls,iv,cloe,ml --workers 1

and the Delta and the UR5e ranked by the model error (doc/howto/identification.md), in chunks of at most
10 minutes, each resuming the last (``timeout 600``):

    pardyn experiment estimator_benchmark --out OUT_DU --draws 3 --robots delta,ur5e --levels low,mid,high \\
        --estimators ols,wls,iv,didim,ekf,ukf,cloe,ml --workers 1
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np


def table(out: Path) -> None:
    from pardyn.experiments.estimator_benchmark import (  # noqa: PLC0415
        LEVELS,
        UNRECORDED_BUDGET,
        BenchmarkOptions,
        from_entries,
    )

    import json  # noqa: PLC0415

    entries = [json.loads(p.read_text()) for p in (out / "entries").glob("*.json")]
    order = BenchmarkOptions().robots
    robots = tuple(sorted(dict.fromkeys(e["robot"] for e in entries), key=lambda r: (r not in order, order.index(r)
                                                                                     if r in order else 0, r)))
    names = tuple(dict.fromkeys(k for e in entries for k, v in e.items()  # the estimators: their figures or failure
                                if isinstance(v, dict) and ("model_error" in v or "failed" in v)))
    levels = tuple(level for level in LEVELS if any(e["level"] == level.name for e in entries))
    budgets = {tuple(sorted(((key, e.get(key, value)) for key, value in UNRECORDED_BUDGET.items()))) for e in entries}
    if len(budgets) != 1:
        sys.exit(f"{out}: draws of {len(budgets)} budgets (model rate, iterations, tolerance) {sorted(budgets)}: "
                 "one folder a budget")
    budget = dict(budgets.pop())
    report = from_entries(out, BenchmarkOptions(robots=robots, levels=levels, estimators=names,
                                                max_iterations=budget["max_iterations"], tolerance=budget["tolerance"],
                                                model_rate_hz=budget["model_rate_hz"]))
    text = report["table"] + "\n\nBeside the survey (Leboutet et al. 2021):\n\n" + "".join(
        f"* {line}\n" for line in report["survey_comparison"]) + f"\nEKF = WLS (1e-6): {report['claim_held']}\n"
    (out / "partial.md").write_text(text)
    print(text)


def cost(robot_name: str, name: str, iterations: int = 3, sensitivity: str = "linearised") -> None:
    from pardyn.experiments import estimator_benchmark as eb  # noqa: PLC0415
    from pardyn.identification import model_simulation as ms  # noqa: PLC0415
    from pardyn.identification.pipeline import identify  # noqa: PLC0415
    from pardyn.identification.settings import IdentificationSettings  # noqa: PLC0415
    from pardyn.robot import load_robot  # noqa: PLC0415
    from pardyn.simulation.identification_runs import as_built_parameters, controller  # noqa: PLC0415

    options = eb.BenchmarkOptions()
    robot = load_robot(robot_name)
    truth = as_built_parameters(robot.nominal_parameters, seed=options.truth_seed)
    duration = options.duration(robot_name)
    reference, start = eb._design(robot_name, duration, options.trajectory_seed)
    bag = Path("out") / "bench" / "estimator_cost" / robot_name
    if not bag.exists():
        eb._record(robot_name, truth, reference, start, duration, eb.LEVELS[1], 1000, bag)
    count = [0, 0.0]
    run = ms.ModelSimulator._closed_loop  # every closed-loop simulation (run, run_linearised)

    def counted(self, *args, **kwargs):
        clock = time.perf_counter()
        result = run(self, *args, **kwargs)
        count[0] += 1
        count[1] += time.perf_counter() - clock
        return result

    ms.ModelSimulator._closed_loop = counted
    settings = IdentificationSettings(workers=1, estimator_iterations=iterations, estimator_sensitivity=sensitivity)
    clock = time.perf_counter()
    result = identify(robot, [bag], settings=settings.replace(estimator=name), show_progress=True,
                      closed_loop=[ms.ClosedLoopSetup(controller(robot), reference)])
    base, values = result.base, truth.as_dict()
    true_base = base.from_standard(np.array([values[n] for n in base.standard_names]))
    error = np.linalg.norm(result.estimate.chi - true_base) / np.linalg.norm(true_base)
    print(f"{robot_name} {name} ({sensitivity}): {time.perf_counter() - clock:.0f} s, {count[0]} simulations "
          f"({count[1] / max(count[0], 1):.1f} s each), n_b {true_base.size}, base-parameter error {error:.4g}")


def noise_free(robot_name: str, model_rate_hz: float | None = None, plant: str = "mujoco") -> None:
    """The benchmark's exciting run without measurement noise (2^40 counts per revolution, no torque noise) and at
    the ``low`` level, identified by WLS (the pipeline's defaults, or the model evaluated at ``model_rate_hz``): the
    model error (the benchmark's ranking figure) and each drive parameter's error against the plant's truth with
    its eq. (47) standard deviation. What stays without noise is the identification's own floor (its filtering of
    the data) or a mismatch between the MuJoCo plant and the model; ``plant="pinocchio"`` records on pardyn's own
    forward model instead (RK4 at 0.1 ms, the Coulomb friction's exact sign, rigid closures: no mismatch)."""
    from pardyn.experiments import estimator_benchmark as eb  # noqa: PLC0415
    from pardyn.identification.pipeline import identify  # noqa: PLC0415
    from pardyn.identification.settings import IdentificationSettings  # noqa: PLC0415
    from pardyn.robot import load_robot  # noqa: PLC0415

    if plant == "pinocchio":  # the benchmark's runs (this process only) on the model itself
        import pardyn.plants.mujoco_plant as mujoco_plant  # noqa: PLC0415
        from pardyn.plants.pinocchio_plant import PinocchioPlant  # noqa: PLC0415

        mujoco_plant.MujocoPlant = lambda robot, truth: PinocchioPlant(robot, truth, timestep=1e-4)
    options = eb.BenchmarkOptions(robots=(robot_name,))
    out = Path("out") / "bench" / "noise_free" / plant / robot_name
    setup = eb._prepare(robot_name, options, out)
    robot = load_robot(robot_name)
    for level in (eb.NoiseLevel("none", 2**40, 0.0), eb.LEVELS[0]):
        bag = out / level.name
        if not bag.exists():
            eb._record(robot_name, setup["truth_parameters"], setup["reference"], setup["start"],
                       options.duration(robot_name), level, 1000, bag)
        settings = IdentificationSettings(workers=1)
        if model_rate_hz is not None:
            settings = settings.replace(model_rate_hz=model_rate_hz)
        result = identify(robot, [bag], settings=settings, show_progress=False)
        true_base = result.base.from_standard(np.array([setup["truth"][n] for n in result.base.standard_names]))
        validation = eb.base_columns(setup["validation_regressor"][0], setup["validation_regressor"][1], result.base)
        error = eb.model_error(validation, result.estimate.chi, true_base)
        print(f"{level.name:5s} WLS model error {100 * error:.3g} %, fit error {100 * result.estimate.relative_error:.3g} %")
        for name, chi, truth, std in zip(result.estimate.names, result.estimate.chi, true_base, result.estimate.std):
            if name.split("_")[0] in ("fv", "fs", "ia") and truth != 0.0:  # a plant without the term: nothing to say
                print(f"{level.name:5s} {name:14s} WLS {chi:.4f}, truth {truth:.4f}: "
                      f"error {100 * (chi - truth) / truth:+.1f} %, std {100 * std / abs(truth):.1f} %")


def simulation(robot_name: str, seconds: float = 3.0) -> None:
    """One closed-loop run of the nominal model on the benchmark's trajectory (the best of two), with the
    accelerations (IV, DIDIM) and without (CLOE, ML): the cost per control period."""
    import inspect  # noqa: PLC0415

    from pardyn.experiments import estimator_benchmark as eb  # noqa: PLC0415
    from pardyn.identification.base_parameters import base_parameters  # noqa: PLC0415
    from pardyn.identification.model_simulation import ClosedLoopSetup, ModelSimulator  # noqa: PLC0415
    from pardyn.robot import load_robot  # noqa: PLC0415
    from pardyn.simulation.identification_runs import controller  # noqa: PLC0415

    robot = load_robot(robot_name)
    reference, start = eb._design(robot_name, seconds, eb.BenchmarkOptions().trajectory_seed)
    layout = robot.nominal_parameters
    base = base_parameters(np.eye(layout.size), names=list(layout.names))  # every standard parameter its own
    simulator = ModelSimulator(robot, layout, base)
    chi, times = base.from_standard(layout.vector()), np.arange(0.0, seconds, 1e-3)
    setup = ClosedLoopSetup(controller(robot), reference)
    kinds = [{}, {"accelerations": False}] if "accelerations" in inspect.signature(simulator.run).parameters else [{}]
    for kind in kinds:
        best = np.inf
        for _ in range(2):
            clock = time.perf_counter()
            simulator.run(chi, setup, start_time=0.0, start=start, times=times, **kind)
            best = min(best, time.perf_counter() - clock)
        print(f"{robot_name} {seconds:g} s {'positions only' if kind else 'with accelerations'}: {best:.2f} s, "
              f"{1e3 * best / times.size:.3f} ms per control period")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(Path(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "simulation":
        simulation(sys.argv[2], *([float(sys.argv[3])] if len(sys.argv) > 3 else []))
    elif len(sys.argv) >= 3 and sys.argv[1] == "noise_free":
        rates = [float(a) for a in sys.argv[3:] if a != "pinocchio"]
        noise_free(sys.argv[2], rates[0] if rates else None, "pinocchio" if "pinocchio" in sys.argv[3:] else "mujoco")
    elif len(sys.argv) >= 4 and sys.argv[1] == "cost":
        cost(sys.argv[2], sys.argv[3], *([int(sys.argv[4])] if len(sys.argv) > 4 else []), *sys.argv[5:6])
    else:
        sys.exit(__doc__)
