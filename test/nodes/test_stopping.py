"""Ctrl-C at any moment (issue 27, defect 1): every node exits 0 with its summary, no abort, no traceback.

Under ``ros2 launch`` a terminal's Ctrl-C reaches every process of the group and
launch forwards a SIGINT of its own: each node gets two signals, at any moment.
Before the fix ``closure_solver`` and ``trajectory`` aborted (exit -6,
``pybind11::error_already_set: KeyboardInterrupt`` from the cleanup of
``run_node``) and ``sim`` exited -2 (KeyboardInterrupt in ``destroy_node``).

Each trial starts one node executable (its console script, as ``ros2 run``
does) as the leader of its own process group, waits until the process has
taken SIGTERM over (``SigCgt`` of ``/proc/<pid>/status``: the first thing
the console script does, ~30 ms after exec; before it only the interpreter's
startup runs), then sends two signals (SIGINT or SIGTERM each, drawn) to the
group: the first at a random moment 0-6 s later (while the node's modules
import, while it is built, while it spins), the second 0-1 s after it (often
while the node runs its own shutdown). Trials run in parallel.

The suite runs 6 trials of each node that ``ros2 launch pardyn sim.launch.py``
starts; ``bench/stop_signals.py`` runs 20 of every node executable.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from pardyn.nodes.launcher import node_command

REPO = Path(__file__).resolve().parents[2]
SUMMARIES = {"sim": "sim summary:", "controller": "controller summary:"}
SUITE_NODES = ("sim", "controller", "trajectory", "closure_solver")
SUITE_TRIALS = 6
FAILURES = ("Traceback", "Fatal Python error", "terminate called", "KeyboardInterrupt", "error_already_set")


def node_arguments(executable: str, scratch: Path, namespace: str) -> list[str]:
    """``--ros-args`` of a node with its shipped parameters file (the recorder writes into ``scratch``)."""
    arguments = ["--ros-args", "-r", f"__ns:={namespace}", "--params-file", str(REPO / "config" / f"{executable}.yaml")]
    if executable == "recorder":
        arguments += ["-p", f"bag_path:={scratch / namespace.strip('/')}"]
    return arguments


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (bit 15 of SigCgt): pardyn's stop handler is in."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M).group(1), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


@dataclass
class Trial:
    executable: str
    signals: tuple[str, str]
    first_s: float  # after the handler was in
    gap_s: float
    code: int | None
    output: str

    def problems(self) -> list[str]:
        """What is wrong with how the node stopped (empty: exit 0, the stop line, the summary if built)."""
        found = [f"exit code {self.code}"] if self.code != 0 else []
        found += [f"{word!r} in the output" for word in FAILURES if word in self.output]
        stop = re.search(rf"\[{self.executable}\]: stopped by (SIG\w+)(, then (SIG\w+))*: (.*), exit code 0",
                         self.output)
        if stop is None:
            found.append("no 'stopped by' line")
        elif "node destroyed" in stop.group(0) and self.executable in SUMMARIES:
            if SUMMARIES[self.executable] not in self.output:
                found.append("built and destroyed, but no summary")
        return found

    @property
    def phase(self) -> str:
        """``"before built"`` (the stop came while importing or building) or ``"spinning"``."""
        return "before built" if "before its node was built" in self.output else "built"

    def describe(self) -> str:
        return (f"{self.executable}: {self.signals[0]} at {self.first_s:.2f} s, {self.signals[1]} {self.gap_s:.3f} s "
                f"later -> {self.problems() or 'clean'}\n{self.output[-3000:]}")


def signal_trial(executable: str, seed: int, scratch: Path) -> Trial:
    """One node process, two signals to its process group at moments drawn from ``seed``."""
    draw = random.Random(seed)
    first, second = (draw.choice((signal.SIGINT, signal.SIGTERM)) for _ in range(2))
    first_s = draw.uniform(0.0, 6.0)
    gap_s = draw.choice((0.0, draw.uniform(0.0, 0.05), draw.uniform(0.0, 1.0)))
    namespace = f"/stop_{uuid.uuid4().hex[:10]}"
    log = scratch / f"{executable}_{seed}.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(node_command(executable) + node_arguments(executable, scratch, namespace),
                                   stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)  # its own process group, as under a terminal
        try:
            deadline = time.monotonic() + 30.0
            while not _catches_sigterm(process.pid) and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(first_s)
            for sig, pause in ((first, gap_s), (second, 0.0)):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    break
                time.sleep(pause)
            try:
                code = process.wait(timeout=60.0)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGUSR1)  # faulthandler: the stacks of the hung process
                time.sleep(1.0)
                process.kill()
                code = None
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    return Trial(executable, (first.name, second.name), first_s, gap_s, code, log.read_text(errors="replace"))


def run_trials(executables, trials: int, scratch: Path, workers: int = 8) -> list[Trial]:
    """``trials`` trials of each executable (seeds 0..trials-1), ``workers`` processes at a time."""
    jobs = [(executable, seed) for seed in range(trials) for executable in executables]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: signal_trial(job[0], job[1], scratch), jobs))


def test_nodes_stop_cleanly_on_two_signals_at_any_moment(ros_domain, tmp_path):
    results = run_trials(SUITE_NODES, SUITE_TRIALS, tmp_path)
    failed = [trial.describe() for trial in results if trial.problems()]
    assert not failed, "\n\n".join(failed)
    # the moments covered: stops while the node was being built and while it ran, both signals seen
    phases = {trial.phase for trial in results}
    assert phases == {"before built", "built"}, phases
    assert any(", then " in trial.output for trial in results)


@pytest.mark.parametrize("executable", ["trajectory"])
def test_a_signal_during_the_import_exits_0_without_building_the_node(executable, ros_domain, tmp_path):
    """The earliest moment: the handler is in, the node's modules (rclpy, pinocchio) are still loading."""
    process = subprocess.Popen(node_command(executable) + node_arguments(executable, tmp_path, "/stop_import"),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30.0
    while not _catches_sigterm(process.pid) and time.monotonic() < deadline:
        time.sleep(0.001)
    os.killpg(process.pid, signal.SIGINT)
    os.killpg(process.pid, signal.SIGTERM)
    output = process.communicate(timeout=60.0)[0].decode(errors="replace")
    assert process.returncode == 0, output
    assert f"[{executable}]: stopped by SIGINT" in output and "before its node was built" in output, output
    assert not [word for word in FAILURES if word in output], output
