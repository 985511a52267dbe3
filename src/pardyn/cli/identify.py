"""``pardyn identify``: dynamic parameters from rosbag2 bags or CSV files (pardyn.identification.pipeline)."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from pardyn.recordings.csv_series import read_csv_series
from pardyn.bags.joint_states import JointStateSeries
from pardyn.bags.resample import DEFAULT_MAX_GAP
from pardyn.cli.data import (
    add_data_arguments,
    apply_drive_gains,
    csv_options,
    drive_gains,
    joint_map,
    known_payload,
    read_runs,
    split_holdout,
)
from pardyn.cli.options import add_option_arguments, number, option_values
from pardyn.description.transmission import load_transmission
from pardyn.dynamics.parameters import write_parameter_file
from pardyn.dynamics.rotor import load_rotor_model
from pardyn.errors import InputError
from pardyn.identification.drive_gains import DriveGains, given_gains
from pardyn.identification.estimators import DEFAULT_ESTIMATOR, ESTIMATORS, options_of_estimators
from pardyn.identification.pipeline import identify, identify_drive_gains
from pardyn.identification.settings import MODELS, REST_SPEED, REVERSAL_WINDOW_S, IdentificationSettings
from pardyn.robot import load_robot

HELP = "identify dynamic parameters from recorded bags or CSV files; writes RESULT.json (and a report)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, help="robot name or YAML path")
    parser.add_argument("--bag", action="append", default=[], type=Path,
                        help="bag without payload (repeat): pardyn's or any rosbag2 bag, MCAP or sqlite3")
    add_data_arguments(parser, runs=True)
    parser.add_argument("--loaded-bag", action="append", default=[], type=Path,
                        help="bag with the payload fixed to the platform (repeat; eq. 49): the robot's 'payload' link, "
                             "else its task frame")
    parser.add_argument("--loaded-run", action="append", default=[], type=Path,
                        help="run with the payload on (repeat): a CSV file, a bag or a folder of runs, as --run")
    parser.add_argument("--validate-bag", action="append", default=[], type=Path, help="held-out bag (repeat)")
    parser.add_argument("--efforts-unit", choices=("Nm", "N", "A"),
                        help="unit of the logged efforts: Nm or N (joint torques and forces, the default) or A "
                             "(motor currents: with --drive-gains, or with --payload to identify the gains; "
                             "default A when --drive-gains is given)")
    parser.add_argument("--payload", type=Path,
                        help="efforts in A: the known payload of the --loaded-run runs, a YAML file payload: {mass: "
                             "KG, com: [X, Y, Z], inertia: [IXX, IYY, IZZ, IXY, IXZ, IYZ], frame: NAME}; the drive "
                             "gains are identified with the dynamic parameters (--drive-gains then the maker's "
                             "nominal gains, compared with)")
    parser.add_argument("--model", choices=("auto", *MODELS), default="auto",
                        help="identification model: standard (eq. 19), case1 (eq. 30), case2 (eq. 36); "
                             "auto = standard, or case1 for redundant robots")
    parser.add_argument("--dynamic-model", choices=("exact", "simplified"), default="exact",
                        help="exact: every body of the tree; simplified: the robot YAML's dynamics.two_end_bars "
                             "split between their ends (Codourey's Delta model)")
    parser.add_argument("--projected", help="case2: comma-separated actuated joints projected on the others")
    parser.add_argument("--topic", default="joint_states",
                        help="sensor_msgs/JointState topic of the bags (default joint_states)")
    parser.add_argument("--min-speed",
                        help="per actuated joint (comma-separated, or one value for all), the speed in rad/s (m/s) "
                             "below which its equations are dropped after decimation")
    parser.add_argument("--rest-speed", type=number(0.0, 1e3, unit="rad/s"), default=None,
                        help="without --min-speed: a joint with Coulomb friction slower than this (rad/s; a "
                             "prismatic one's scaled to m/s) is at rest, and the equations it enters there are "
                             f"left out (e.g. {REST_SPEED:g}, for a robot with dry friction; default: rests kept)")
    parser.add_argument("--reversal-window", type=number(0.0, 10.0, unit="s"), default=0.0,
                        help="with --rest-speed: the equations of a joint with Coulomb friction within this time "
                             "(s) either side of a reversal of its speed are left out too (dry friction sticks "
                             f"there; e.g. {REVERSAL_WINDOW_S:g}; default 0: only the speed decides)")
    parser.add_argument("--holdout", type=number(0.0, 0.9, high_open=True), default=0.0,
                        help="fraction of each run (at its end) held out for validation, e.g. 0.25")
    parser.add_argument("--model-rate", type=number(0.0, 1e6, low_open=True, unit="Hz"), default=100.0,
                        help="rate (Hz) at which the model is evaluated before the last decimation stage")
    parser.add_argument("--trim", type=number(0.0, 1e6, unit="s"), help="time dropped at both ends of each run, s (default 1.5 / cutoff)")
    parser.add_argument("--effort-delay", type=number(-10.0, 10.0, unit="s"),
                        help="age of the efforts, s (default: half a period for bags, 0 for CSV files)")
    parser.add_argument("--max-gap", type=number(1.0, 1e6, low_open=True), default=DEFAULT_MAX_GAP,
                        help="longest interval between stamps that is resampled, in median intervals "
                             f"(default {DEFAULT_MAX_GAP})")
    parser.add_argument("--cutoff", type=number(0.0, 1e6, low_open=True, unit="Hz"), help="derivative low-pass cut-off in Hz (default: 5 x bandwidth)")
    parser.add_argument("--decimation", type=number(1, 1_000_000, integer=True), default=20, help="decimation factor n_d (default 20)")
    parser.add_argument("--r-sigma", type=number(1.0, 1e12), default=10.0, help="essential-parameter ratio (default 10)")
    parser.add_argument("--essential-tolerance", type=number(0.0, 100.0), default=0.05,
                        help="essential parameters: the reduced model's fit error may exceed the base model's by "
                             "this fraction at most (default 0.05 = 5 %%)")
    parser.add_argument("--parameters", choices=("base", "essential"), default="base",
                        help="model written to RESULT.json and validated (default base)")
    parser.add_argument("--physical", action="store_true",
                        help="also estimate physically consistent parameters (pseudo-inertias positive definite, "
                             "SDP); reported beside the unconstrained ones, written to <out>_physical.json")
    parser.add_argument("--rotor-compensation", action="store_true",
                        help="subtract the rotor inertia and friction torques (the robot YAML's 'rotors:' model) "
                             "computed from the motor-side encoders of --motor-topic (UR5e paper, section 3.1)")
    parser.add_argument("--motor-topic", default="motor_states",
                        help="JointState topic of the motor-side encoders (default motor_states)")
    closed_loop = [name for name in ESTIMATORS.names if ESTIMATORS.get(name).closed_loop]
    parser.add_argument("--estimator", choices=ESTIMATORS.names, default=DEFAULT_ESTIMATOR,
                        help="; ".join(f"{name}: {ESTIMATORS.get(name).summary}" for name in ESTIMATORS.names)
                             + f". {'/'.join(closed_loop)} simulate the model in closed loop with the recorded "
                             "controller and reference (--controller, --reference-topic)")
    add_option_arguments(parser, options_of_estimators())  # each estimator's Options: --estimator-start...
    parser.add_argument("--controller", action="append", type=Path, default=[],
                        help=f"{'/'.join(closed_loop)}: the controller node's parameter file(s) the bags were recorded with "
                             "(config/controller.yaml, then overrides; repeat): law and gains")
    parser.add_argument("--reference-topic", default="reference/trajectory",
                        help=f"{'/'.join(closed_loop)}: the reference the controller tracked (trajectory_msgs/JointTrajectory, "
                             "default reference/trajectory)")
    parser.add_argument("--truth", type=Path,
                        help="truth.json of simulated runs (pardyn demo, record_runs): the identified base parameters "
                             "against the true ones, and the truth's own held-out error (the floor)")
    parser.add_argument("--out", required=True, type=Path, help="RESULT.json to write")
    parser.add_argument("--report", type=Path, help="directory for report.md and its plots")


def _reference(robot, bag: Path, topic: str, estimator: str):
    """The reference the controller tracked in ``bag`` (its ``topic``), as a function of bag time (s)."""
    from pardyn.bags.reader import read_messages  # noqa: PLC0415
    from pardyn.bags.errors import BagError  # noqa: PLC0415
    from pardyn.identification.errors import MissingRecordingError  # noqa: PLC0415
    from pardyn.trajectories.joint import reference_from_message  # noqa: PLC0415 - the controller's own reading

    try:
        messages = read_messages(bag, topic)
    except BagError as error:
        raise MissingRecordingError(
            f"{bag}: no reference to simulate the {estimator} estimator's model with ({error}); record the topic "
            f"{topic} (trajectory_msgs/msg/JointTrajectory, the trajectory node's output) with joint_states"
        ) from error
    if not messages:
        raise MissingRecordingError(f"{bag}: topic {topic} holds no message: the {estimator} estimator needs the "
                                    "reference the controller tracked")
    last = messages[-1]
    trajectory = reference_from_message(last.message, tuple(robot.actuated_names))
    stamp = last.message.header.stamp
    start = stamp.sec + stamp.nanosec * 1e-9 or last.timestamp_ns * 1e-9  # header stamp 0: the reception time
    return lambda t: trajectory(t - start)


def _controller_law(robot, files: list[Path]):
    """The law the controller node builds from these parameter files (later files win), and its rate (Hz)."""
    from pardyn.control.laws import law_from_parameters  # noqa: PLC0415 - the node's own construction
    from pardyn.node_parameters import node_values  # noqa: PLC0415 - the node's own reading

    values = node_values("controller", files)
    return law_from_parameters(robot, values), float(values["rate"])


def _closed_loop_setups(robot, bags: list[Path], args: argparse.Namespace) -> list:
    """The controller and reference of every bag, for IV and DIDIM (one clear error when missing)."""
    from pardyn.identification.errors import MissingRecordingError  # noqa: PLC0415
    from pardyn.identification.model_simulation import ClosedLoopSetup  # noqa: PLC0415

    if not args.controller:
        raise MissingRecordingError(
            f"the {args.estimator} estimator simulates the model in closed loop with the controller the bags were "
            "recorded with: pass --controller FILE (the controller node's parameters: law, gains, rate)")
    law, rate = _controller_law(robot, args.controller)
    return [ClosedLoopSetup(law, _reference(robot, bag, args.reference_topic, args.estimator), rate_hz=rate)
            for bag in bags]


def _speeds(text: str | None, count: int) -> tuple[float, ...] | None:
    if not text:
        return None
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise InputError(f"--min-speed: expected numbers (rad/s), got {text!r}") from None
    if len(values) == 1:
        values *= count
    if len(values) != count:
        raise InputError(f"--min-speed: {len(values)} values for {count} actuated joints")
    return tuple(values)


def _drive_gains(robot, args: argparse.Namespace, runs: list, loaded: list,
                 settings: IdentificationSettings) -> tuple[DriveGains | None, dict[str, float]]:
    """The drive gains the efforts are multiplied by, and the same keyed by the data's joint names: none
    (efforts in N m or N), given (``--drive-gains``), or identified from the runs with the known ``--payload``
    (the given ones then the maker's nominal gains). The first is ``None`` for given gains of motors."""
    unit = args.efforts_unit or ("A" if args.drive_gains else "Nm")
    given = drive_gains(args.drive_gains)
    if unit != "A":
        if args.drive_gains:
            raise InputError(f"--drive-gains converts currents: it goes with --efforts-unit A, not {unit}")
        if args.payload is not None:
            raise InputError("--payload identifies the drive gains of efforts logged in A: add --efforts-unit A "
                             "(efforts in N m or N: --loaded-run alone, the payload is then identified)")
        return None, {}
    if args.payload is None:
        if not given:
            raise InputError("--efforts-unit A: efforts in amperes need the drive gains: --drive-gains "
                             "JOINT=GAIN,... (N m/A) or a YAML file, or runs with a known payload that identify "
                             "them: --loaded-run FILE --payload PAYLOAD.yaml")
        named = _gains_by_robot_name(given, joint_map(args.joint_map))
        return (given_gains(robot, named) if set(robot.actuated_names) <= set(named) else None), given
    if not loaded:
        raise InputError("--payload: the runs with the known payload on are missing: --loaded-run FILE (repeat; a "
                         "CSV file, a bag or a folder of runs)")
    payload = known_payload(args.payload, robot.payload_frame)
    nominal = _gains_by_robot_name(given, joint_map(args.joint_map)) or None
    found = identify_drive_gains(robot, runs, loaded, payload, settings=settings, nominal=nominal)
    for line in found.lines():
        print(f"drive gains: {line}")
    return found, _gains_by_data_name(found, joint_map(args.joint_map))


def _gains_by_robot_name(gains: dict[str, float], names: dict[str, str]) -> dict[str, float]:
    """Gains keyed by the data's joint names -> by the robot's (``--joint-map``)."""
    return {names.get(name, name): gain for name, gain in gains.items()}


def _gains_by_data_name(drives: DriveGains, names: dict[str, str]) -> dict[str, float]:
    """The robot's joints' gains keyed by the data's joint names (``--joint-map`` inverted)."""
    data_name = {joint: name for name, joint in names.items()}
    return {data_name.get(joint, joint): float(gain) for joint, gain in zip(drives.joints, drives.gains)}


def _print_summary(robot_name: str, data: dict) -> None:
    """RESULT.json's figures in a few lines: data notes, fit, estimator, motors, payload, validation, truth,
    physical."""
    fit = data["fit"]
    for note in data["data_notes"]:
        print(f"note: {note}")
    print(f"{robot_name}: {len(data['base_parameters'])} base parameters ({len(data['essential_parameters'])} "
          f"essential), fit error {100 * fit['relative_error_norm']:.2f} %, cond(W) {fit['condition_number']:.4g}")
    estimator = data["estimator"]
    if estimator["iterations"]:
        print(f"{estimator['name']}: {estimator['iterations']} iterations, "
              f"{'converged' if estimator['converged'] else 'NOT converged'} (last change {estimator['changes'][-1]:.3g})")
    if data["motor_parameters"]:
        print("coupled motors: " + ", ".join(f"{k} = {v:.5g}" for k, v in data["motor_parameters"].items()))
    if data["drive_gains"] and data["drive_gains"]["source"] == "given":
        print("efforts in A, times the given drive gains: " + ", ".join(
            f"{joint} {row['gain']:.5g} {row['unit']}" for joint, row in data["drive_gains"]["joints"].items()))
    if data["payload"]:
        print("payload: " + ", ".join(f"{k} = {v:.5g}" for k, v in data["payload"].items()))
    if data["validation"]:
        validation = data["validation"]
        print(f"validation: relative error {100 * validation['relative_error_norm']:.2f} % "
              f"(nominal model {100 * validation['nominal']['relative_error_norm']:.2f} %)")
    rows = [row for row in (data["truth"] or {}).get("base_parameters", []) if row["true"] is not None
            and row["error_in_std"] is not None]
    if data["truth"] and not rows:
        print("against the truth: no identified base parameter has both a true value in the --truth file and a "
              "finite standard deviation")
    elif rows:
        worst = max(rows, key=lambda row: abs(row["error_in_std"]))
        floors = data["truth"]["validation_floor"]
        print(f"against the truth: largest error {worst['name']} {worst['error_in_std']:.3g} std"
              + (f"; held-out error of the true parameters {100 * floors[0]:.2f} % (the floor)" if floors else ""))
    physical = data["physical"]
    if physical:
        line = (f"physical (SDP, min pseudo-inertia eigenvalue {physical['min_pseudo_inertia_eigenvalue']:.3g}): "
                f"fit error {100 * physical['fit']['relative_error_norm']:.2f} % "
                f"(unconstrained {100 * fit['relative_error_norm']:.2f} %)")
        if physical.get("validation"):
            line += (f", validation {100 * physical['validation']['relative_error_norm']:.2f} % "
                     f"(unconstrained {100 * data['validation']['relative_error_norm']:.2f} %)")
        print(line)


def run(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot, kernels="auto")  # compiled joint regressors when they build (pardyn.kernels)
    truth = None
    if args.truth is not None:  # checked before the data are read and fitted (and before RESULT.json is written)
        from pardyn.identification.truth import load_truth_values  # noqa: PLC0415

        truth = load_truth_values(args.truth, robot)
    if not args.bag and not args.csv and not args.run:
        raise InputError("give the data: --run FILE_OR_FOLDER (repeat), --bag BAG (repeat) or --csv FILE (repeat)")
    transmission = load_transmission(robot)
    options = csv_options(args, tuple(transmission.motors if transmission is not None else robot.measured_names))
    runs: list = list(args.bag)
    if args.csv:
        runs.append(read_csv_series(args.csv, **options))
    runs += read_runs(args.run, options)
    loaded: list = list(args.loaded_bag) + read_runs(args.loaded_run, options)
    validate: list = list(args.validate_bag) + read_runs(args.validate, options)
    if args.holdout:
        if args.rotor_compensation:
            raise InputError("--holdout and --rotor-compensation together are not supported: give --validate-bag")
        runs, held = split_holdout(runs, args.holdout, topic=args.topic)
        validate += held
    csv_only = all(isinstance(r, JointStateSeries) for r in [*runs, *loaded, *validate])
    settings = IdentificationSettings(
        model=args.model,
        dynamic_model=args.dynamic_model,
        projected=None if not args.projected else tuple(n.strip() for n in args.projected.split(",")),
        topic=args.topic,
        cutoff_hz=args.cutoff,
        decimation=args.decimation,
        r_sigma=args.r_sigma,
        essential_tolerance=args.essential_tolerance,
        parameters=args.parameters,
        physical=args.physical,
        rotor_model=load_rotor_model(robot.mechanism) if args.rotor_compensation else None,
        motor_topic=args.motor_topic,
        joint_map=tuple(joint_map(args.joint_map).items()) or None,
        transmission=transmission,
        min_speed=_speeds(args.min_speed, len(robot.actuated_names)),
        rest_speed=args.rest_speed or None,
        reversal_window_s=args.reversal_window,
        max_gap=args.max_gap,
        model_rate_hz=args.model_rate,
        trim_s=args.trim,
        effort_delay_s=args.effort_delay if args.effort_delay is not None else (0.0 if csv_only else None),
        estimator=args.estimator,
        **option_values(args, options_of_estimators()),
    )
    drives, gains = _drive_gains(robot, args, runs, loaded, settings)
    if gains:
        what = "identified" if drives is not None and drives.source == "identified" else (
            args.drive_gains if args.drive_gains.endswith((".yaml", ".yml")) else "--drive-gains")
        runs, loaded, validate = (apply_drive_gains(r, gains, topic=args.topic, what=what)
                                  for r in (runs, loaded, validate))
    closed_loop = None
    if ESTIMATORS.get(args.estimator).closed_loop:
        if args.csv or args.run or args.holdout:
            raise InputError(f"--estimator {args.estimator} needs bags with the reference (--bag), not --csv/--holdout")
        if args.loaded_run or args.efforts_unit == "A" or args.drive_gains:
            raise InputError(f"--estimator {args.estimator} needs bags of torques (--bag, --loaded-bag), not "
                             "--loaded-run or currents")
        closed_loop = _closed_loop_setups(robot, [*args.bag, *args.loaded_bag], args)
    result = identify(robot, runs, loaded_bags=loaded, validate_bags=validate, settings=settings,
                      closed_loop=closed_loop, truth=truth)
    if drives is not None:
        result = replace(result, drive_gains=drives)
    data = result.as_json()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    _print_summary(robot.name, data)
    print(f"wrote {args.out}")
    if result.physical is not None:
        physical_out = args.out.with_name(f"{args.out.stem}_physical.json")
        write_parameter_file(physical_out, result.physical.parameters)
        print(f"wrote {physical_out} (pardyn dynamics --params reads it)")
    if args.report:
        from pardyn.identification.report import write_report  # noqa: PLC0415 - matplotlib only for reports

        print(f"wrote {write_report(result, args.report)}")
    return 0
