#!/usr/bin/env python3
"""The bad-input fuzz suite, long: ``test/reliability/test_fuzz.py`` with 40x the suite's examples.

The suite runs 25 seeded examples per boundary (robot YAML, URDF, numeric
options, trajectory CSV, parameter files, bringup files, data CSV, MCAP bit
flips, truth files, C export names and --out, fleet folders, log schemas; the
URDF boundary 3x as many, in a child process); this runs 1000 per boundary with
hypothesis' derandomized generator (the same examples every run) and prints, per
boundary, one line: the inputs accepted (exit 0), refused in one line (exit 2;
fleet: 1 with the failed runs summarized), tracebacks and hangs (a run past
``PARDYN_FUZZ_TIMEOUT`` s, default 3 h, is a hang). Each must end in exit 0 (with
finite output and a physical robot) or one line with exit 2.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = int(os.environ.get("PARDYN_FUZZ_EXAMPLES", "1000"))
TIMEOUT_S = float(os.environ.get("PARDYN_FUZZ_TIMEOUT", str(3 * 3600)))


def main() -> int:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        tally = Path(folder) / "tally"
        tally.touch()
        hung = False
        try:
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0",
                 str(REPO / "test" / "reliability" / "test_fuzz.py")],
                cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S,
                env={**os.environ, "PARDYN_FUZZ_EXAMPLES": str(EXAMPLES), "OPENBLAS_NUM_THREADS": "1",
                     "PARDYN_FUZZ_TALLY": str(tally)},
            )
        except subprocess.TimeoutExpired as expired:
            hung = True
            done = subprocess.CompletedProcess(expired.cmd, 1, (expired.stdout or b"").decode(errors="replace"), "")
        counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for line in tally.read_text().splitlines():
            boundary, code = line.rsplit(" ", 1)
            counts[boundary][code] += 1
    tracebacks = done.stdout.count("Traceback") + sum(line.startswith("FAILED") for line in done.stdout.splitlines())
    for line in done.stdout.splitlines():
        if " call " in line or "passed" in line or "failed" in line or line.startswith(("FAILED", "E ")):
            print(line)
    for boundary, count in sorted(counts.items()):
        refused = count["2"] + count["1"]
        others = sum(n for code, n in count.items() if code not in ("0", "1", "2"))
        print(f"{boundary.removeprefix('test_').removesuffix('_fuzz')}: {sum(count.values())} inputs, "
              f"{count['0']} accepted, {refused} refused in one line, {others} other exit codes")
    print(f"tracebacks or failed boundaries: {tracebacks}; hangs: {int(hung)}")
    print(f"fuzz: {EXAMPLES} examples per boundary ({3 * EXAMPLES} URDFs), {time.perf_counter() - start:.0f} s, "
          f"{'every input accepted or refused in one line' if done.returncode == 0 and not hung else 'FAILURES above'}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
