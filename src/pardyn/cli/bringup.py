"""``pardyn bringup``: run the nodes of a bringup file in ONE process (composition), or one process each.

The file format and the one-process runner are :mod:`pardyn.nodes.bringup`,
the process-per-node runner (``--processes``, what ``ros2 launch`` does) is
:mod:`pardyn.nodes.launcher`; this module is the command line around them
(``--namespace``, ``--duration``, ``--processes``, ``--start-delay``, ``--dry-run``; ``--law`` and every
registered law's options, generated from their ``Options``, for the ``controller`` nodes).
Both take SIGINT/SIGTERM as a request to stop (:mod:`pardyn.nodes.stopping`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pardyn.cli.console import add_verbose_argument, node_log
from pardyn.cli.options import add_option_arguments, number, option_values
from pardyn.control.laws import law_option_specs
from pardyn.control.laws.registry import REGISTRY as LAWS
from pardyn.errors import DescriptionError
from pardyn.nodes.bringup import Bringup, bringup_path, check_bringup_file, load_bringup, run_nodes, with_robot
from pardyn.nodes.launcher import is_terminal, run_processes
from pardyn.nodes.stopping import StopSignals
from pardyn.ros_names import check_namespace

__all__ = ["add_arguments", "run"]

HELP = "run the nodes of a bringup file (config/bringup/*.yaml) in one process, or one process each (--processes)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config", help="bringup file (e.g. config/bringup/sim.yaml; a bare name: config/bringup/NAME.yaml)"
    )
    parser.add_argument("--namespace", default="",
                        help="namespace of every node, /clock included (one per robot in a shared ROS graph)")
    parser.add_argument("--duration", type=number(0.0, 1e9, low_open=True, unit="s"), default=None,
                        help="stop after this many seconds of wall-clock time (default: until Ctrl-C/SIGTERM)")
    parser.add_argument("--robot", help="robot name or description file (YAML, MJCF) given to every node that "
                                        "takes one (default: the bringup file's)")
    parser.add_argument("--log", type=Path, default=None,
                        help="file of the nodes' INFO lines (default out/bringup/<namespace or nodes>.log)")
    add_verbose_argument(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the node set as ros2 run commands and exit")
    parser.add_argument("--processes", action="store_true",
                        help="each node as its own OS process, as ros2 launch starts them (output prefixed with the "
                             "node's name, exit codes reported)")
    parser.add_argument("-n", "--noninteractive", action="store_true", default=not is_terminal(sys.stdin),
                        help="--processes: forward a SIGINT to every node, as ros2 launch -n does (default when "
                             "standard input is not a terminal; in a terminal Ctrl-C reaches every node directly)")
    parser.add_argument("--start-delay", action="append", default=[], metavar="NODE=SECONDS",
                        help="--processes: start NODE this long after the others' start (repeatable; any order)")
    parser.add_argument("--law", choices=LAWS.names, help="the controller nodes' law (default: the bringup file's)")
    add_option_arguments(parser, law_option_specs())  # each law's Options: --kp, --pfc-kp... for the controllers


def _with_law(bringup: Bringup, args: argparse.Namespace) -> Bringup:
    """``bringup`` with ``--law`` and the law options given applied last to its ``controller`` nodes."""
    values = {name: list(value) if isinstance(value, tuple) else value
              for name, value in option_values(args, law_option_specs()).items()}
    if args.law is not None:
        values["law"] = args.law
    if not values:
        return bringup
    controllers = [spec.name or spec.executable for spec in bringup.nodes if spec.executable == "controller"]
    if not controllers:
        raise DescriptionError(f"--{next(iter(values)).replace('_', '-')}: {bringup.source} runs no controller node")
    return bringup.with_parameters(dict.fromkeys(controllers, values))


def _start_delays(items: list[str], duration_s: float | None) -> dict[str, float]:
    """``{node: seconds}``, each shorter than ``--duration`` (a node delayed past the end would never start, and
    the run would still end with exit 0); nodes and signs are checked by :func:`run_processes`."""
    delays = {}
    for item in items:
        name, _, seconds = item.partition("=")
        try:
            delays[name] = float(seconds)
        except ValueError:
            raise DescriptionError(f"--start-delay {item!r}: expected NODE=SECONDS") from None
        if duration_s is not None and delays[name] >= duration_s:
            raise DescriptionError(f"--start-delay {item!r}: {delays[name]:g} s is not before the end of --duration "
                                   f"{duration_s:g} s: {name} would never start; give a shorter delay or a longer run")
    return delays


def run(args: argparse.Namespace) -> int:
    path = bringup_path(args.config)
    check_bringup_file(path)  # every node's parameters against its table: unknown keys and wrong types named
    check_namespace(args.namespace, "--namespace")
    bringup = load_bringup(path)
    if args.robot is not None:
        from pardyn.robot import load_robot  # noqa: PLC0415 - only for --robot: 0.3-0.5 s before any node starts

        # loaded once here: a bad file fails before any node starts
        bringup = with_robot(bringup, load_robot(args.robot).reference)
    bringup = _with_law(bringup, args)
    if args.dry_run:
        print(bringup.describe())
        return 0
    if args.duration is not None and not args.duration > 0.0:
        raise DescriptionError(f"--duration must be positive seconds, got {args.duration}")
    if args.start_delay and not args.processes:
        raise DescriptionError("--start-delay needs --processes")
    delays = _start_delays(args.start_delay, args.duration)
    stop = StopSignals().install()  # Ctrl-C/SIGTERM from now on: a request to stop, never a traceback
    try:
        if args.processes:  # as ros2 launch shows them: every node's lines on the console, prefixed with its name
            codes = run_processes(bringup, namespace=args.namespace, duration_s=args.duration, stop=stop,
                                  start_delays=delays, noninteractive=args.noninteractive)
            return 0 if all(code in (0, None) for code in codes.values()) else 1
        log = args.log or Path("out/bringup") / f"{args.namespace.strip('/').replace('/', '_') or 'nodes'}.log"
        with node_log(log, verbose=args.verbose):
            run_nodes(bringup, namespace=args.namespace, duration_s=args.duration, stop=stop)
        return 0
    finally:
        stop.restore()  # the console script ignores them while the interpreter finalizes (pardyn.cli.console_main)
