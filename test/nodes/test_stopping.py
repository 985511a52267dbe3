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
import sys
import threading
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
STOP_LINE = r"\[{executable}\]: stopped by (SIG\w+)(, then (SIG\w+))* [\d.]+ s after its start: (.*), exit code 0"
SPUN_AND_STOPPED = ("node destroyed", "rclpy's node destruction did not return within")
"""How a built node's stop line ends: destroyed, or rclpy's teardown left to the process's exit (slow under load)."""
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
        stop = re.search(STOP_LINE.format(executable=self.executable), self.output)
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
    # which moments the drawn delays hit depends on the load (beside other sessions' work one of the two phases was
    # missed once, all 24 trials clean); each moment is covered for certain below (importing, building, spinning,
    # a callback).
    # The second signal mostly finds the process gone: the stop takes tens of milliseconds (issue 34)


@pytest.mark.parametrize("executable", ["trajectory"])
def test_a_signal_during_the_import_exits_0_without_building_the_node(executable, ros_domain, tmp_path):
    """The earliest moment: the handler is in, the node's modules (rclpy, pinocchio) are still loading.

    The two signals go out together: the product's rule (pardyn.nodes.stopping) names signals taken together in
    signal-number order, so the line starts "stopped by SIGINT" (before, the guard named the first byte of its
    pipe, which Linux's handling of two pending signals made SIGTERM's: 3-4 of 30 under load)."""
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



# --------------------------------------------------------------------------- promptly (issue 34, item 3)
STOP_LIMIT_S = 1.0  # s: the requirement; measured 10-50 ms quiet (bench/stop_signals.py --prompt)
COLCON_COMMAND = ["egg_info", "--egg-base", "{build}", "build", "--build-base", "{build}/build", "install",
                  "--prefix", "{prefix}", "--record", "{build}/install.log", "--single-version-externally-managed"]


@pytest.fixture(scope="module")
def colcon_prefix(tmp_path_factory) -> Path:
    """The package installed into a prefix by the command ``colcon build`` runs (colcon-core's
    PythonBuildTask without --symlink-install): console scripts in ``lib/pardyn``, modules in site-packages."""
    build = tmp_path_factory.mktemp("colcon_build")
    prefix = tmp_path_factory.mktemp("colcon_install")
    command = [sys.executable, "setup.py", "-q"] + [a.format(build=build, prefix=prefix) for a in COLCON_COMMAND]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, timeout=300)
    return prefix


def colcon_environment(prefix: Path) -> dict[str, str]:
    """The environment a sourced colcon install gives: its site-packages first on the path, its share in the index."""
    site = next(prefix.glob("lib/python3*/site-packages"))
    return {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            "AMENT_PREFIX_PATH": f"{prefix}{os.pathsep}{os.environ.get('AMENT_PREFIX_PATH', '')}".rstrip(os.pathsep)}


def test_the_colcon_scripts_import_the_stop_handler_first(colcon_prefix):
    """setuptools' own wrapper (what colcon installed before) imports importlib.metadata and scans sys.path for the
    entry point before pardyn's handler loads: a Ctrl-C in that window was a traceback and exit -2."""
    for executable in SUITE_NODES + ("recorder", "dynamics", "identifier", "gazebo_joint_states"):
        script = (colcon_prefix / "lib" / "pardyn" / executable).read_text()
        imports = [line for line in script.splitlines() if line.startswith(("import ", "from "))]
        assert imports == ["import sys", f"from pardyn.nodes.stopping import {executable}"], script


class NodeRun:
    """One node process (its own process group, as under a terminal) whose stderr lines are collected as they come."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        env=env, start_new_session=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=lambda: self.lines.extend(self.process.stderr), daemon=True)
        self._reader.start()

    def wait_for(self, condition, what: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert self.process.poll() is None, f"the node ended before {what}:\n{''.join(self.lines)}"
            assert time.monotonic() < deadline, f"no {what} in {timeout_s} s:\n{''.join(self.lines)}"
            time.sleep(0.002)

    def compiling(self) -> bool:
        """Whether the node has a child process (the C compiler of its kernels)."""
        try:
            return bool(Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split())
        except OSError:
            return False

    def stop(self, sig: signal.Signals) -> tuple[int, float, str]:
        """Send ``sig`` to the group; (exit code, seconds to exit, stderr written from the signal on)."""
        before = len(self.lines)
        sent = time.monotonic()
        os.killpg(self.process.pid, sig)
        try:
            code = self.process.wait(timeout=30.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        elapsed = time.monotonic() - sent
        self._reader.join(timeout=5.0)
        return code, elapsed, "".join(self.lines[before:])


def check_prompt_stop(run: NodeRun, executable: str, sig: signal.Signals, phase: str | tuple[str, ...]) -> None:
    code, elapsed, after = run.stop(sig)
    everything = "".join(run.lines)
    assert code == 0, everything
    assert elapsed < STOP_LIMIT_S, f"{elapsed:.2f} s from {sig.name} to the exit:\n{everything}"
    stops = [line for line in after.splitlines() if re.search(STOP_LINE.format(executable=executable), line)]
    assert len(stops) == 1 and after.rstrip().endswith(stops[0]), everything
    phases = (phase,) if isinstance(phase, str) else phase
    assert any(p in stops[0] for p in phases) and sig.name in stops[0], stops[0]
    assert not [word for word in FAILURES if word in everything], everything


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_node_builds_ends_it_within_1_s(sig, ros_domain, tmp_path):
    """The controller compiling its kernels (an empty cache: seconds, 2.5-5.7 s under load in issue 34) is stopped
    mid-compilation, not after it. Before: the build finished first, and ros2 launch escalated to SIGTERM at 5 s."""
    command = node_command("controller") + node_arguments("controller", tmp_path, "/stop_build")
    run = NodeRun(command, env={**os.environ, "PARDYN_KERNEL_CACHE": str(tmp_path / "kernels")})
    run.wait_for(run.compiling, "compiler started")
    check_prompt_stop(run, "controller", sig, "building its node")


CHATTY_BUILD = """
import os, sys
from pardyn.nodes.stopping import BUILDING, stop_signals
stop = stop_signals()
stop.exit_promptly("chatty_build")
stop.enter(BUILDING)
print("building", file=sys.stderr, flush=True)
while True:  # a build that goes on printing (the controller's kernel note when the Ctrl-C killed its compiler)
    print("compiled kernels unavailable: cc stopped by SIGINT", file=sys.stderr, flush=True)
"""


def test_nothing_follows_the_stop_line_of_a_node_stopped_while_it_builds():
    """The guard's stop line is the process's last output, whatever its main thread prints meanwhile. Before: the
    controller's "compiled kernels unavailable" note (its compiler killed by the same SIGINT) came after it, once
    in a two-worker suite run; this test saw a line after it in 4 of 5 runs (1 s each)."""
    run = NodeRun([sys.executable, "-c", CHATTY_BUILD])
    run.wait_for(lambda: any("building" in line for line in run.lines), "build")
    check_prompt_stop(run, "chatty_build", signal.SIGINT, "before its node was built (building its node)")


@pytest.mark.parametrize("wrapper", ["console script", "colcon build script"])
@pytest.mark.parametrize("moment", ["importing", "spinning"])
def test_a_stop_at_any_moment_ends_the_node_within_1_s(wrapper, moment, ros_domain, tmp_path, request):
    """Through pip's console script and through the script ``colcon build`` installs in ``lib/pardyn``: a signal as
    soon as the handler is in (the node's modules importing) or once it runs ends it within 1 s, exit 0, one line."""
    if wrapper == "colcon build script":
        prefix = request.getfixturevalue("colcon_prefix")
        command, env = [str(prefix / "lib" / "pardyn" / "sim")], colcon_environment(prefix)
    else:
        command, env = node_command("sim"), None
    run = NodeRun(command + node_arguments("sim", tmp_path, f"/stop_{moment}"), env=env)
    run.wait_for(lambda: _catches_sigterm(run.process.pid), "stop handler")
    if moment == "spinning":
        run.wait_for(lambda: any(" plant, " in line for line in run.lines), "sim built")
        time.sleep(0.5)
    check_prompt_stop(run, "sim", signal.SIGINT,
                      SPUN_AND_STOPPED if moment == "spinning" else "before its node was built (importing")


GUARDED_CALLBACK = """
import sys, time
from pardyn.nodes.stopping import SPINNING, stop_signals
stop = stop_signals()
stop.exit_promptly("long_callback")
stop.enter(SPINNING)
print("in the callback", file=sys.stderr, flush=True)
while True:  # a callback that never returns to the executor (pure Python: holds the GIL between bytecodes)
    sum(range(1000))
"""


def test_a_callback_that_runs_on_does_not_keep_the_node_past_1_s():
    run = NodeRun([sys.executable, "-c", GUARDED_CALLBACK])
    run.wait_for(lambda: any("in the callback" in line for line in run.lines), "callback")
    check_prompt_stop(run, "long_callback", signal.SIGTERM, "a callback ran on for")


HUNG_TEARDOWN = """
import ctypes, os, sys, time
from pardyn.nodes.stopping import stop_signals
stop = stop_signals()
if {executable}:
    stop.exit_promptly("hung_teardown")  # what a node executable's console script does first
from rclpy.node import Node
from pardyn.nodes.common import run_node

class HangingNode(Node):
    def __init__(self):
        super().__init__("hung_teardown")
        self.create_timer(0.05, lambda: print("spinning", file=sys.stderr, flush=True))

    def destroy_node(self):  # rclpy's C++ teardown that never returns
        {hang}

code = run_node(HangingNode, "hung_teardown")
sys.stderr.flush()
os._exit(code)
"""

HANGS = {
    # seen: 8 s in TypeDescriptionService.destroy, the interpreter lock free for other threads
    "sleeps": (False, "time.sleep(3600.0)", "did not return within 0.6 s"),
    # seen: the node handle's destroy_when_not_in_use holding the lock (a C call through PyDLL keeps it)
    "holds the interpreter lock": (True, "ctypes.PyDLL(None).sleep(3600)", "did not return within 0.85 s"),
}


@pytest.mark.parametrize("hang", HANGS, ids=list(HANGS))
def test_a_teardown_that_hangs_in_rclpy_does_not_keep_the_node_past_1_s(hang, ros_domain):
    """rclpy's ``destroy_node`` hung 8 s twice under two xdist workers (the trajectory node after a clean SIGINT:
    faulthandler's exit 1, bringup's SIGTERM at 5 s). The teardown is waited for 0.6 s, then left to the process's
    exit: exit 0 within 1 s, and the stop line says what was left. Before: 8 s, exit 1 and a stack dump. A teardown
    that holds the interpreter lock (the recorder in a serial suite run: no Python thread ran again) is ended from
    C (:class:`pardyn.nodes.stopping.LockFreeExit`); before: the same 8 s and exit 1."""
    executable, code, said = HANGS[hang]
    run = NodeRun([sys.executable, "-c", HUNG_TEARDOWN.format(executable=executable, hang=code)])
    run.wait_for(lambda: any("spinning" in line for line in run.lines), "the node spinning")
    check_prompt_stop(run, "hung_teardown", signal.SIGINT, said)
