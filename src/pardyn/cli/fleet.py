"""``pardyn fleet identify DIR`` and ``pardyn fleet simulate DIR``: every robot of a cell, night after night.

``identify``: one folder per robot in DIR, runs inside (:mod:`pardyn.fleet.layout`); the
runs not identified before are identified in parallel (:mod:`pardyn.distributed`), each
writing RESULT.json and its report; then the fleet's summary (fleet.md, fleet.html,
fleet.json: base parameters per robot and date with sigma, drift, outliers, unusable runs).

``simulate``: a simulated fleet of one robot model to try it on (:mod:`pardyn.fleet.simulate`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pardyn.cli.engine import add_engine_arguments, engine_from_arguments
from pardyn.cli.options import number
from pardyn.errors import InputError

HELP = "identify every robot of a fleet folder in parallel and summarize drift (or simulate a fleet)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    identify = sub.add_parser("identify", help="identify the new runs of every robot folder; write the fleet summary (exit status 1 when a run "
                                                   "failed or there was nothing to identify)")
    identify.add_argument("dir", type=Path, help="the fleet folder: one folder per robot, runs (bags, CSV) inside")
    identify.add_argument("--robot", help="robot name or YAML for robot folders without a robot.yaml (default: "
                                          "DIR/robot.yaml)")
    identify.add_argument("--out", type=Path, help="results folder (default DIR/_identified)")
    identify.add_argument("--reference", choices=("first", "nominal"), default="first",
                          help="drift against each robot's first identification (default) or the nominal model")
    identify.add_argument("--threshold", type=number(0.0, 1e6, low_open=True), default=5.0, help="drift flagged beyond this many sigma (5)")
    identify.add_argument("--no-report", action="store_true", help="no per-run report (plots)")
    identify.add_argument("--topic", default="joint_states", help="JointState topic of the bags")
    identify.add_argument("--rate", type=number(0.0, 1e7, low_open=True, unit="Hz"), help="sample rate (Hz) of CSV logs without a time column")
    identify.add_argument("--decimation", type=number(1, 10_000, integer=True), default=20, help="decimation factor n_d (default 20)")
    add_engine_arguments(identify, workers_help="worker processes (default: one per core; 1: in this process)")
    identify.add_argument("--quiet", action="store_true", help="no progress display")
    simulate = sub.add_parser("simulate", help="record a simulated fleet (scattered robots, friction growing)")
    simulate.add_argument("dir", type=Path, help="the fleet folder to write")
    simulate.add_argument("--model", default="delta", help="robot model of the fleet (default delta)")
    simulate.add_argument("--robots", type=number(1, 10_000, integer=True), default=4, help="robots (default 4)")
    simulate.add_argument("--nights", type=number(1, 10_000, integer=True), default=3, help="runs per robot, one a night (default 3)")
    simulate.add_argument("--duration", type=number(0.0, 1e5, low_open=True, unit="s"), default=10.0, help="length of each run, s (default 10)")
    simulate.add_argument("--growth", type=number(-0.5, 10.0), default=0.01,
                          help="relative growth of every drive's viscous friction per night (default 0.01)")
    simulate.add_argument("--step", default="1,2,0,0.15",
                          help="friction fault ROBOT,NIGHT,DRIVE,ADDED (0-based; added viscous friction "
                               "N m s/rad) or 'none' (default 1,2,0,0.15)")
    simulate.add_argument("--seed", type=number(0, 2**31, integer=True), default=11, help="robot r is built with seed SEED + r (default 11)")
    add_engine_arguments(simulate, workers_help="worker processes (default: one per core; 1: in this process)")
    simulate.add_argument("--quiet", action="store_true", help="no progress display")


def _step(text: str):
    from pardyn.fleet.simulate import FrictionStep  # noqa: PLC0415

    if text.lower() == "none":
        return None
    parts = text.split(",")
    try:
        robot, night, drive, added = int(parts[0]), int(parts[1]), int(parts[2]), float(parts[3])
    except (ValueError, IndexError):
        raise InputError(f"--step: expected ROBOT,NIGHT,DRIVE,ADDED (e.g. 1,2,0,0.15) or none, got {text!r}") from None
    return FrictionStep(robot, night, drive, added)


def _simulate(args: argparse.Namespace) -> int:
    from pardyn.fleet.simulate import FleetSpec, simulate_fleet  # noqa: PLC0415

    spec = FleetSpec(model=args.model, robots=args.robots, nights=args.nights, duration_s=args.duration,
                     growth=args.growth, step=_step(args.step), seed=args.seed)
    if spec.step is not None and not (0 <= spec.step.robot < spec.robots and 0 <= spec.step.night < spec.nights):
        raise InputError(f"--step: robot {spec.step.robot} night {spec.step.night} is outside the fleet "
                         f"({spec.robots} robots, {spec.nights} nights, counted from 0)")
    with engine_from_arguments(args) as engine:
        bags = simulate_fleet(args.dir, spec, engine=engine, show_progress=not args.quiet)
    print(f"wrote {len(bags)} runs of {spec.robots} {spec.model} robots into {args.dir} "
          f"(truth in {args.dir / '_truth'})")
    print(f"next: pardyn fleet identify {args.dir}")
    return 0


def _identify(args: argparse.Namespace) -> int:
    from pardyn.fleet.identify import identify_fleet  # noqa: PLC0415
    from pardyn.fleet.summary import summarize, write_summary  # noqa: PLC0415
    from pardyn.identification.pipeline import IdentificationSettings  # noqa: PLC0415

    out = args.out or args.dir / "_identified"
    settings = IdentificationSettings(topic=args.topic, decimation=args.decimation)
    with engine_from_arguments(args) as engine:
        done = identify_fleet(args.dir, out, robot=args.robot, settings=settings, engine=engine,
                              report=not args.no_report, rate_hz=args.rate, show_progress=not args.quiet)
    summary = summarize(done.records, done.layout.unusable, reference=args.reference, threshold=args.threshold)
    paths = write_summary(summary, out, title=f"Fleet identification of {args.dir}")
    print(f"{len(done.layout.robots)} robots: {len(done.identified)} runs identified, {len(done.skipped)} unchanged, "
          f"{len(done.failed)} failed, {len(done.layout.unusable)} entries not runs")
    for alert in summary.alerts:
        print(f"drift: {alert.robot} {alert.parameter} {alert.z:+.1f} sigma on {alert.date}")
    for unusable in summary.unusable:
        print(f"not used: {unusable.robot}/{unusable.date}: {unusable.reason}")
    print("wrote " + ", ".join(str(p) for p in paths))
    return _identify_status(done, out)


def _identify_status(done, out) -> int:
    """0 when every run is identified or unchanged; else the failures on stderr and 1 (a nightly job sees it)."""
    if done.failed:
        named = ", ".join(done.failed[:5]) + (", ..." if len(done.failed) > 5 else "")
        print(f"pardyn fleet: {len(done.failed)} of {len(done.layout.runs)} runs failed ({named}): their errors are "
              f"in {out}/<robot>/<date>/RUN.json and the summary", file=sys.stderr)
        return 1
    if not done.layout.runs:
        print(f"pardyn fleet: nothing to identify in {done.layout.root} ({len(done.layout.unusable)} entries not "
              "runs, listed above)", file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    return _simulate(args) if args.action == "simulate" else _identify(args)
