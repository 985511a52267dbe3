"""``pardyn experiment NAME``: the control experiments of the papers, on the MuJoCo plant.

* ``dualv_tracking`` (:mod:`pardyn.experiments.tracking`): Briot et al. 2015, section 5.4,
  Table 4: max tracking errors of PD vs computed torque (nominal and identified parameters);
* ``rrr3_robustness`` (:mod:`pardyn.experiments.robustness`): Zubizarreta et al. 2010,
  section 4.8: ISE, IAE, ITAE of the classical and extended CTC vs parameter errors (1-5 %);
* ``wu_redundancy`` (:mod:`pardyn.experiments.wu_redundancy`): Wu et al. 2009, section 5,
  Figs. 2-3: driving forces of the redundant and non-redundant machines along the paper's motion.
* ``h4_pfc_vs_ctc`` (:mod:`pardyn.experiments.h4`): Vivas & Poignet 2003, section 5:
  predictive functional control vs computed torque on the H4 (tracking, 4 kg load, 50 % mismatch).
* ``ur5e_calibration`` (:mod:`pardyn.experiments.ur5e_calibration`): UR5e paper, sections 3-5:
  base parameter counts, identification with and without rotor dynamics compensation on the
  flexible-joint plant, NMSE of CAD vs calibrated models on three held-out trajectories.
* ``estimators`` (:mod:`pardyn.experiments.estimator_comparison`): the registered estimators (IDIM-WLS, -OLS, -IV, DIDIM) on the DualV and
  the UR5e as the torque noise grows and the derivative filter is mistuned (UR5e paper, section 1).
* ``estimator_benchmark`` (:mod:`pardyn.experiments.estimator_benchmark`): Monte Carlo draws of the
  measurement noise at three levels on the DualV, the Delta and the UR5e; every estimator's
  parameter error against the plant's truth, held-out torque error, failures and time, ranked.
* ``online_identification`` (:mod:`pardyn.experiments.online_identification`): the windowed online
  estimate follows a payload attached mid-run on the DualV; the CTC takes the estimate (blended swap).
* ``delta_pick_and_place`` (:mod:`pardyn.experiments.delta_pick_and_place`): the standard
  25/305/25 mm cycle on the Delta, PD vs CTC (simplified model), with and without payload,
  peak torques vs limits, exact vs simplified model torques.
* ``hexapod_identification`` (:mod:`pardyn.experiments.hexapod_identification`): record,
  identify (known payload), validate on a held-out bag, CTC with the nominal vs identified model.

Each writes ``<out>/<name>.json`` (figures, options, whether the paper's claim held in
this run) and PNG plots, and prints a summary.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from pardyn.cli.console import add_verbose_argument, node_log
from pardyn.cli.engine import add_engine_arguments, engine_from_arguments
from pardyn.cli.options import number
from pardyn.registry import Registry

EXPERIMENTS: Registry[Callable[[argparse.Namespace], dict]] = Registry("experiment")
"""Name -> function running it from the parsed arguments and printing its figures; returns the report."""

HELP = "run an experiment of the papers (see the list of names); writes <out>/<name>.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=tuple(EXPERIMENTS), help="the experiment")
    parser.add_argument("--out", type=Path, default=Path("experiments"), help="output directory (default experiments)")
    add_engine_arguments(parser, workers_help="parallel runs (default: one per core)")
    parser.add_argument("--templates", type=number(1, 100_000, integer=True), help="rrr3_robustness: sign templates per level (default 10)")
    parser.add_argument("--identification-s", type=number(0.0, 1e6, low_open=True, unit="s"),
                        help="dualv_tracking: length of the identification run in s (default 30); "
                             "ur5e_calibration: the exciting run (default 31); hexapod_identification: "
                             "each exciting run (default 20); estimators: every robot's run (default dualv 12, ur5e 15)")
    parser.add_argument("--validation-s", type=number(0.0, 1e6, low_open=True, unit="s"),
                        help="ur5e_calibration: length of each held-out run in s (default 15); "
                             "hexapod_identification: the held-out run (default 10); estimators: the held-out run "
                             "(default 6)")
    parser.add_argument("--in-process", action="store_true",
                        help="hexapod_identification: record in process (no rclpy) instead of through the ROS 2 nodes")
    parser.add_argument("--robots", help="estimators: comma-separated robots (default dualv,ur5e); "
                                         "estimator_benchmark: (default dualv,delta,ur5e)")
    parser.add_argument("--draws", type=number(1, 100_000, integer=True),
                        help="estimator_benchmark: noise draws per level and robot (default 50)")
    parser.add_argument("--estimators", help="estimator_benchmark: comma-separated estimators (default every "
                                             "registered one)")
    parser.add_argument("--levels", help="estimator_benchmark: comma-separated noise levels among low,mid,high "
                                         "(default all three)")
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    add_verbose_argument(parser)


@EXPERIMENTS.register("dualv_tracking")
def _tracking(args: argparse.Namespace) -> dict:
    from pardyn.experiments.tracking import TrackingOptions, dualv_tracking  # noqa: PLC0415

    options = TrackingOptions(workers=args.workers, show_progress=not args.quiet,
                              **({} if args.identification_s is None else {"identification_s": args.identification_s}))
    report = dualv_tracking(args.out, options)
    for name, entry in report["results"].items():
        print(f"{name}: max tracking errors (1e-3 rad), joints {', '.join(report['joints'])}")
        for case, errors in entry["max_error_rad"].items():
            print(f"  {case:15s} " + " ".join(f"{1e3 * v:7.3f}" for v in errors.values()))
        for key, values in entry.get("reduction_pct", {}).items():
            print(f"  {key + ' (%)':15s} " + " ".join(f"{v:7.1f}" for v in values.values()))
    return report


@EXPERIMENTS.register("rrr3_robustness")
def _robustness(args: argparse.Namespace) -> dict:
    from pardyn.experiments.robustness import RobustnessOptions, rrr3_robustness  # noqa: PLC0415

    options = RobustnessOptions(workers=args.workers, show_progress=not args.quiet,
                                **({} if args.templates is None else {"templates": args.templates}))
    report = rrr3_robustness(args.out, options)
    if not report["centre_reachable"]:
        print(f"centre {report['centre_requested']} not reachable with margin: using {report['centre_used']}")
    for kind, entry in report["results"].items():
        print(f"{kind}: level (%) ISE IAE ITAE (template means)")
        for level, row in entry["per_level"].items():
            print(f"  {level:>3s}  {row['ISE']:.4e} {row['IAE']:.4e} {row['ITAE']:.4e}")
        print("  slope per %: " + " ".join(f"{k} {v:.3e}" for k, v in entry["slope_per_pct"].items()))
    return report


@EXPERIMENTS.register("wu_redundancy")
def _wu(args: argparse.Namespace) -> dict:
    from pardyn.experiments.wu_redundancy import wu_redundancy  # noqa: PLC0415

    report = wu_redundancy(args.out)
    for name, entry in report["results"].items():
        forces = " ".join(f"{label} {value:.0f}" for label, value in entry["max_abs_force_n"].items())
        print(f"{name}: max |F| (N) {forces}; max|F1-F2|/max|F| {entry['slider_difference']:.3f}; "
              f"max|F1|/max|F2| {entry['slider_ratio']:.3f}")
    print("max|F| of wu3n / wu3r: " + " ".join(f"{k} {v:.3f}" for k, v in report["wu3n_over_wu3r"].items()))
    return report


@EXPERIMENTS.register("h4_pfc_vs_ctc")
def _h4(args: argparse.Namespace) -> dict:
    from pardyn.experiments.h4 import H4Options, h4_pfc_vs_ctc  # noqa: PLC0415

    report = h4_pfc_vs_ctc(args.out, H4Options(workers=args.workers, show_progress=not args.quiet))
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
    return report


@EXPERIMENTS.register("ur5e_calibration")
def _ur5e(args: argparse.Namespace) -> dict:
    from pardyn.experiments.ur5e_calibration import CalibrationOptions, ur5e_calibration  # noqa: PLC0415

    given = {"identification_s": args.identification_s, "validation_s": args.validation_s}
    options = CalibrationOptions(workers=args.workers, show_progress=not args.quiet,
                                 **{k: v for k, v in given.items() if v is not None})
    report = ur5e_calibration(args.out, options)
    counts = report["base_parameter_count"]
    print(f"base parameters (link inertials): {counts['vertical']['inertial']} vertical base axis, "
          f"{counts['tilted']['inertial']} tilted; with drive terms {counts['vertical']['with_drives']}")
    for label, entry in report["identification"].items():
        if isinstance(entry, dict):
            print(f"identification {label}: cond {entry['condition_number']:.4g}, "
                  f"{entry['samples_after_decimation']} samples after decimation")
    print("held-out NMSE of K_tau i (N m): CAD / calibrated without / with rotor compensation")
    for entry in report["validation"]:
        values = entry["nmse_current_torque"]
        print(f"  trajectory {entry['trajectory']}: {values['cad']:.4g} / {values['calibrated_without_compensation']:.4g}"
              f" / {values['calibrated_with_compensation']:.4g}  (improvement "
              f"{entry['improvement_pct']['without_compensation']:.1f} % / {entry['improvement_pct']['with_compensation']:.1f} %)")
    return report


@EXPERIMENTS.register("estimators")
def _estimators(args: argparse.Namespace) -> dict:
    from pardyn.experiments.estimator_comparison import EstimatorsOptions, estimators_study  # noqa: PLC0415
    from pardyn.identification.estimators import ESTIMATORS  # noqa: PLC0415

    given: dict = {"workers": args.workers, "show_progress": not args.quiet}
    if args.robots:
        given["robots"] = tuple(name.strip() for name in args.robots.split(","))
    if args.identification_s is not None:
        given["identification_s"] = {robot: args.identification_s for robot in given.get("robots", ("dualv", "ur5e"))}
    if args.validation_s is not None:
        given["validation_s"] = args.validation_s
    report = estimators_study(args.out, EstimatorsOptions(**given))
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
    return report


@EXPERIMENTS.register("estimator_benchmark")
def _estimator_benchmark(args: argparse.Namespace) -> dict:
    from pardyn.errors import InputError  # noqa: PLC0415
    from pardyn.experiments.estimator_benchmark import LEVELS, BenchmarkOptions, estimator_benchmark  # noqa: PLC0415
    from pardyn.identification.estimators import ESTIMATORS  # noqa: PLC0415

    given: dict = {"workers": args.workers, "show_progress": not args.quiet}
    if args.robots:
        given["robots"] = tuple(name.strip() for name in args.robots.split(","))
    if args.draws is not None:
        given["draws"] = args.draws
    if args.estimators:
        given["estimators"] = tuple(name.strip() for name in args.estimators.split(","))
        for name in given["estimators"]:
            ESTIMATORS.get(name)  # InputError naming the known ones
    if args.levels:
        known = {level.name: level for level in LEVELS}
        wanted = [name.strip() for name in args.levels.split(",")]
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise InputError(f"unknown noise levels {unknown}, expected some of {list(known)}")
        given["levels"] = tuple(known[name] for name in wanted)
    if args.identification_s is not None:
        given["identification_s"] = args.identification_s
    if args.validation_s is not None:
        given["validation_s"] = args.validation_s
    report = estimator_benchmark(args.out, BenchmarkOptions(**given))
    print(report["table"])
    for line in report["survey_comparison"]:
        print(f"beside the survey: {line}")
    print(f"table: {args.out / 'estimator_benchmark.md'} ({report['time_s']:.0f} s)")
    return report


@EXPERIMENTS.register("online_identification")
def _online(args: argparse.Namespace) -> dict:
    from pardyn.experiments.online_identification import online_identification  # noqa: PLC0415

    report = online_identification(args.out)
    report.pop("series")
    truth = report["truth"]
    print(f"{report['mass_parameter']}: plant {truth['platform_mass_kg']:.4g} kg, + payload {truth['payload_kg']} kg; "
          f"estimate {report['estimate_before_payload_kg']:.4g} kg before, {report['estimate_end_kg']:.4g} kg at the end "
          f"(payload error {report['payload_error_pct']:.2f} %), within 5 % after "
          f"{'-' if report['settle_within_5pct_s'] is None else format(report['settle_within_5pct_s'], '.3g')} s; "
          f"changes detected at {[round(t, 3) for t in report['changes_detected_at_s']]} s")
    errors = report["max_tracking_error_rad"]
    print("max tracking error (1e-3 rad): " + ", ".join(
        f"{key} {'-' if value is None else f'{1e3 * value:.3f}'}" for key, value in errors.items()))
    print(f"swap at {report['swapped_at_s']} s; max command step (N m) {report['max_command_step_nm']}")
    return report


@EXPERIMENTS.register("delta_pick_and_place")
def _delta(args: argparse.Namespace) -> dict:
    from pardyn.experiments.delta_pick_and_place import DeltaOptions, delta_pick_and_place  # noqa: PLC0415

    report = delta_pick_and_place(args.out, DeltaOptions(workers=args.workers, show_progress=not args.quiet))
    cycle = report["cycle"]
    print(f"cycle {1e3 * cycle['up_m']:.0f}/{1e3 * cycle['across_m']:.0f}/{1e3 * cycle['up_m']:.0f} mm in "
          f"{cycle['cycle_s']} s: peak {cycle['peak_speed_m_s']:.2f} m/s, {cycle['peak_acceleration_m_s2']:.1f} m/s^2; "
          f"torque limits {[float(v) for v in report['torque_limits_nm'].values()]} N m")
    for case, entry in report["results"].items():
        model = report["model_difference_pct"][case]
        print(f"{case}: exact vs simplified (Codourey) torques: max {model['max_pct']:.1f} %, RMS {model['rms_pct']:.1f} %")
        for law, figures in entry.items():
            torques = " ".join(f"{v:6.1f}" for v in figures["max_torque_nm"])
            print(f"  {law:3s} max/RMS position error {figures['max_position_error_mm']:.2f}/"
                  f"{figures['rms_position_error_mm']:.2f} mm | peak torques {torques} N m | at a limit "
                  f"{100 * figures['saturation']:.1f} % of samples")
    return report


@EXPERIMENTS.register("hexapod_identification")
def _hexapod(args: argparse.Namespace) -> dict:
    from pardyn.experiments.hexapod_identification import HexapodOptions, hexapod_identification  # noqa: PLC0415

    given = {"identification_s": args.identification_s, "validation_s": args.validation_s}
    options = HexapodOptions(workers=args.workers, show_progress=not args.quiet, through_nodes=not args.in_process,
                             **{k: v for k, v in given.items() if v is not None})
    report = hexapod_identification(args.out, options)
    identification, validation, payload = report["identification"], report["validation"], report["payload"]
    print(f"identification ({identification['model']}): {identification['base_parameters']} base parameters, "
          f"cond {identification['condition_number']:.4g}, fit error {100 * identification['fit_relative_error_norm']:.2f} %")
    print(f"held-out torques: identified {100 * validation['identified_relative_error']:.2f} %, nominal "
          f"{100 * validation['nominal_relative_error']:.2f} %")
    if payload["identified_kg"] is not None:
        print(f"payload: {payload['identified_kg']:.4f} kg (true {payload['true_kg']} kg, {payload['error_pct']:+.2f} %)")
    for case, entry in report["control"].items():
        print(f"{case}: max leg errors (1e-6 m) " + " ".join(f"{1e6 * v:7.2f}" for v in entry["max_error_m"])
              + " | RMS " + " ".join(f"{1e6 * v:6.2f}" for v in entry["rms_error_m"]))
    return report


def run(args: argparse.Namespace) -> int:
    with node_log(args.out / f"{args.name}.log", verbose=args.verbose):
        if args.scheduler is None:
            report = EXPERIMENTS.get(args.name)(args)
        else:  # every map of the experiment on that scheduler
            with engine_from_arguments(args):
                report = EXPERIMENTS.get(args.name)(args)
    print(f"paper claim: {report['paper_claim']}")
    definition = report["claim_definition"]
    if isinstance(definition, dict):  # one definition per finding
        definition = "; ".join(f"{finding}: {text}" for finding, text in definition.items())
    print(f"claim held in this run: {report['claim_held']} ({definition})")
    print(f"wrote {args.out / (args.name + '.json')} and {', '.join(report['plots'])}")
    return 0
