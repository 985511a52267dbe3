#!/usr/bin/env python3
"""The bad-input fuzz suite, long: ``test/reliability/test_fuzz.py`` with 40x the suite's examples.

The suite runs 25 seeded examples per boundary (robot YAML, URDF, numeric
options, trajectory CSV, parameter files, bringup files, data CSV, MCAP bit
flips; the URDF boundary 3x as many, in a child process); this runs 1000 per
boundary with hypothesis' derandomized generator (the same examples every run)
and prints, per boundary, the examples and the time. Each must end in exit 0
(with finite output and a physical robot) or one line with exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = int(os.environ.get("PARDYN_FUZZ_EXAMPLES", "1000"))


def main() -> int:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0",
         str(REPO / "test" / "reliability" / "test_fuzz.py")],
        cwd=REPO, env={**os.environ, "PARDYN_FUZZ_EXAMPLES": str(EXAMPLES), "OPENBLAS_NUM_THREADS": "1"},
        capture_output=True, text=True,
    )
    for line in done.stdout.splitlines():
        if " call " in line or "passed" in line or "failed" in line or line.startswith(("FAILED", "E ")):
            print(line)
    print(f"fuzz: {EXAMPLES} examples per boundary ({3 * EXAMPLES} URDFs), {time.perf_counter() - start:.0f} s, "
          f"{'every input accepted or refused in one line' if done.returncode == 0 else 'FAILURES above'}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
