#!/usr/bin/env python3
"""Ctrl-C at any moment, the full study of issue 27: 20 trials of every node executable.

Each trial is ``test/nodes/test_stopping.py``'s (one node process, the leader
of its own process group, two signals SIGINT/SIGTERM drawn, the first 0-6 s
after the stop handler is in, the second 0-1 s later); the suite runs 6 trials
of the four nodes of ``sim.launch.py``, this runs 20 of all eight. Prints per
node: trials, clean stops, stops before the node was built, trials where both
signals arrived before the stop ended, and every failure with its output.

Run: ``.venv/bin/python bench/stop_signals.py [--trials 20]``. Exit code 1 if a trial failed.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "nodes"))
from test_stopping import run_trials  # noqa: E402 - the suite's trial, run at full length

from pardyn.nodes.registry import NODES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per node executable")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["PYTHONUNBUFFERED"] = "1"
    with tempfile.TemporaryDirectory(prefix="pardyn_stop_") as scratch:
        results = run_trials(sorted(NODES), args.trials, Path(scratch))
    failures = [trial for trial in results if trial.problems()]
    print(f"stop signals: {args.trials} trials per node, two signals each (SIGINT/SIGTERM drawn)")
    for executable in sorted(NODES):
        mine = [trial for trial in results if trial.executable == executable]
        phases = Counter(trial.phase for trial in mine)
        both = sum(", then " in trial.output for trial in mine)
        clean = sum(not trial.problems() for trial in mine)
        print(f"  {executable:20s} {clean}/{len(mine)} clean (exit 0, stop line, summary), "
              f"{phases['before built']} stopped before the node was built, {both} with both signals seen")
    for trial in failures:
        print("FAILED", trial.describe())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
