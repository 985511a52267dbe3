"""``pardyn robots``: list the robots shipped with pardyn."""

from __future__ import annotations

import argparse
import json

from pardyn.description.formats import load_description
from pardyn.resources import list_robots

HELP = "list the robots (config/robots/*.yaml)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a JSON list with details")


def run(args: argparse.Namespace) -> int:
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
