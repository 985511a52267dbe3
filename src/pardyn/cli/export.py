"""``pardyn export FORMAT --robot NAME --out DIR``: write a robot for another simulator (pardyn.export)."""

from __future__ import annotations

import argparse
import json

from pardyn.cli.options import add_option_arguments, option_values
from pardyn.export import FORMATS, export, format_options
from pardyn.robot import load_robot

HELP = ("write a robot for another simulator or controller: sdf (Gazebo: SDF model with loops, worlds, "
        "ros2_control files), c (the closed-loop kernels as a C library with a CMake target)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=FORMATS.names, help="export format")
    parser.add_argument("--robot", required=True, help="robot name (config/robots) or YAML path")
    parser.add_argument("--out", required=True, help="output directory (created)")
    parser.add_argument("--force", action="store_true", help="replace files of an earlier export in --out")
    add_option_arguments(parser, format_options())  # each format's Options: --placeholder-mass...


def run(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot)
    paths = export(robot, args.format, args.out, overwrite=args.force, **option_values(args, format_options()))
    for role, path in paths.items():
        print(f"{role}: {path}")
    if "summary" in paths:
        summary = json.loads(paths["summary"].read_text())
        for note in summary.get("unrepresented", []):
            print(f"warning: not represented: {note}")
        if summary.get("guide_joints"):
            print(f"note: guide joints {summary['guide_joints']} (pardyn's virtual chain) kept: the closures do not "
                  "fix the platform's other motions")
    return 0
