"""``pardyn robots``: list the robots shipped with pardyn, or describe any robot file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pardyn.description.formats import FORMATS, load_description
from pardyn.resources import list_robots

HELP = ("list the robots (config/robots/*.yaml), describe one robot file (--describe FILE), or write a starting "
        "YAML for a URDF or MJCF (--init FILE)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--describe", metavar="FILE",
        help="load a robot (name, pardyn YAML, Gepetto robot.yaml, MJCF or bare URDF) and print its structure",
    )
    parser.add_argument(
        "--init", metavar="FILE",
        help="write a starting pardyn YAML for a URDF or MJCF file (closures from onshape-to-robot's closing frames "
             "or MJCF equalities, actuated joints from transmissions or actuators, home from a keyframe)",
    )
    parser.add_argument("--output", type=Path, metavar="YAML",
                        help="--init: the YAML to write (default <FILE's stem>.yaml in the current directory)")
    parser.add_argument("--format", choices=sorted(FORMATS), help="description format (detected by default)")


def _print_summary(summary: dict) -> None:
    print(f"{summary['name']} ({summary['format']} format: {summary['file']})")
    print(f"  joints ({len(summary['joints'])}): {', '.join(summary['joints'])}")
    if summary["locked_joints"]:
        locked = ", ".join(f"{k} = {v:.6g}" for k, v in summary["locked_joints"].items())
        print(f"  locked joints: {locked}")
    print(f"  closures: {len(summary['closures'])}, rank {summary['closure_rank']} "
          f"of {summary['closure_rows_declared']} declared rows")
    for closure in summary["closures"]:
        print(f"    {closure['name']}: {closure['frames'][0]} ~ {closure['frames'][1]} ({closure['type']}, "
              f"{closure['independent_rows']} independent: {' '.join(closure['components'])})")
    print(f"  degrees of freedom: {summary['degrees_of_freedom']}"
          + (f" (internal: {', '.join(summary['internal_motions'])})" if summary["internal_motions"] else ""))
    print(f"  actuated: {', '.join(summary['actuated'])} (redundancy {summary['redundancy']})")
    print(f"  sensed: {', '.join(summary['sensed']) or '-'}")
    task = summary["task"]
    if "frame" in task:
        print(f"  task: frame {task['frame']}, coordinates {', '.join(task['coordinates'])}")
    else:
        print("  task: " + ", ".join(f"{k} = joint {v}" for k, v in task["joints"].items()))
    for note in summary["notes"]:
        print(f"  note: {note}")


def _init(tree: str, output: Path | None) -> int:
    """``--init FILE``: the starting YAML (:mod:`pardyn.description.starting`), never over an existing file."""
    from pardyn.description.starting import starting_yaml  # noqa: PLC0415
    from pardyn.errors import InputError  # noqa: PLC0415

    target = output or Path(f"{Path(tree).stem}.yaml")
    if target.exists():
        raise InputError(f"{target} exists: not overwritten (--output names another file)")
    text = starting_yaml(tree, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    print(text, end="")
    print(f"wrote {target}: check it, then `pardyn robots --describe {target}`")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.init:
        return _init(args.init, args.output)
    if args.describe:
        from pardyn.robot import load_robot  # noqa: PLC0415 - loads pinocchio

        summary = load_robot(args.describe, format=args.format).summary()
        if args.json:
            print(json.dumps(summary, indent=2))
        else:
            _print_summary(summary)
        return 0
    names = list_robots()
    if not args.json:
        for name in names:
            print(name)
        return 0
    rows = []
    for name in names:
        description = load_description(name)
        rows.append({
            "name": name,
            "task": list(description.task_names),
            "actuated": list(description.actuated),
            "sensed": list(description.sensed),
            "redundancy": description.redundancy,
            "file": str(description.source),
        })
    print(json.dumps(rows, indent=2))
    return 0
