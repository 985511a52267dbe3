"""Stopping a launch: what ``ros2 launch`` does (the double, :class:`launch_double.LaunchedProcesses`, read in
ros2/launch 3.7) and what ``pardyn bringup --processes`` does (:mod:`pardyn.nodes.launcher`), with small
processes that report every signal they get.

* In a terminal a Ctrl-C reaches every process of the foreground group; launch adds no SIGINT of its own:
  each node gets ONE SIGINT. Non-interactively (``-n``, standard input not a terminal) launch sends each its
  SIGINT. A process still running 5 s after the stop gets SIGTERM, 10 s after it SIGKILL.
* ``pardyn bringup --processes`` does the same: a terminal (a pseudo-terminal as standard input here) gives
  each node one SIGINT, a non-interactive run two (the group's and the forwarded one).
"""

from __future__ import annotations

import importlib.util
import os
import pty
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("launch_double", Path(__file__).with_name("launch_double.py"))
launch_double = sys.modules.get("launch_double") or importlib.util.module_from_spec(_spec)
if "launch_double" not in sys.modules:
    sys.modules["launch_double"] = launch_double
    _spec.loader.exec_module(launch_double)
LaunchedProcesses = launch_double.LaunchedProcesses

# A node stand-in: reports each signal; "stop" exits 0 0.5 s after the first (time for a second one to arrive),
# "stuck" ignores SIGINT and SIGTERM (a node that never finishes its shutdown).
NODE = """\
import signal, sys, time
name, mode = sys.argv[1], sys.argv[2]
got = []
def handle(signum, frame):
    got.append(signal.Signals(signum).name)
    print(f"{name} got {got[-1]}", flush=True)
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, handle if mode == "stop" else signal.SIG_IGN)
print(f"{name} ready", flush=True)
first = None
while True:
    time.sleep(0.01)
    if got and first is None:
        first = time.monotonic()
    if first is not None and time.monotonic() - first > 0.5:
        print(f"{name} exits after {got}", flush=True)
        sys.exit(0)
"""


@pytest.fixture
def node_script(tmp_path) -> Path:
    path = tmp_path / "node.py"
    path.write_text(NODE)
    return path


def launched(node_script: Path, modes: dict[str, str], **options) -> LaunchedProcesses:
    launch = LaunchedProcesses({name: [sys.executable, str(node_script), name, mode] for name, mode in modes.items()},
                               **options)
    for process in launch.processes.values():
        assert process.stdout.readline().endswith("ready\n")
    return launch


def signals_got(text: str, name: str) -> list[str]:
    return re.findall(rf"^{name} got (\w+)$", text, re.M)


def test_double_terminal_ctrl_c_gives_each_process_one_sigint(node_script):
    launch = launched(node_script, {"sim": "stop", "controller": "stop"}, noninteractive=False)
    launch.terminal_ctrl_c()
    assert launch.codes() == {"sim-1": 0, "controller-2": 0}
    for name in ("sim", "controller"):
        assert signals_got(launch.output(f"{name}-{1 if name == 'sim' else 2}"), name) == ["SIGINT"]
    assert not any("sending signal" in line or "escalating" in line for line in launch.log), launch.log


def test_double_noninteractive_launch_forwards_sigint(node_script):
    """``ros2 launch -n`` stopped by ``kill -INT <launch>`` (its group is not signalled): launch sends the SIGINT."""
    launch = launched(node_script, {"sim": "stop"}, noninteractive=True)
    assert launch.shut_down(due_to_sigint=True) == {"sim-1": 0}
    assert signals_got(launch.output("sim-1"), "sim") == ["SIGINT"]
    assert "[INFO] [sim-1]: sending signal 'SIGINT' to process[sim-1]" in launch.log


def test_double_interactive_launch_does_not_forward_and_escalates_to_sigterm(node_script):
    """The same ``kill -INT <launch>`` in a terminal: no SIGINT reaches the node; SIGTERM after sigterm_timeout."""
    launch = launched(node_script, {"sim": "stop"}, noninteractive=False,
                      launch_configurations={"sigterm_timeout": "0.5"})
    start = time.monotonic()
    assert launch.shut_down(due_to_sigint=True) == {"sim-1": 0}
    assert 0.5 <= time.monotonic() - start < 3.0
    assert signals_got(launch.output("sim-1"), "sim") == ["SIGTERM"]
    assert ("[ERROR] [sim-1]: process[sim-1] failed to terminate '0.5' seconds after receiving 'SIGINT', "
            "escalating to 'SIGTERM'") in launch.log


def test_double_escalates_to_sigkill_at_sigterm_plus_sigkill_timeout(node_script):
    launch = launched(node_script, {"stuck": "stuck"}, noninteractive=True,
                      launch_configurations={"sigterm_timeout": "0.5", "sigkill_timeout": "0.5"})
    start = time.monotonic()
    assert launch.shut_down(due_to_sigint=False) == {"stuck-1": -signal.SIGKILL}
    assert 1.0 <= time.monotonic() - start < 4.0
    assert [line.split("]: ")[1] for line in launch.log if "escalating" in line] == [
        "process[stuck-1] failed to terminate '0.5' seconds after receiving 'SIGINT', escalating to 'SIGTERM'",
        "process[stuck-1] failed to terminate '1.0' seconds after receiving 'SIGTERM', escalating to 'SIGKILL'"]


def test_double_defaults_are_launchs(node_script):
    """ExecuteLocal: sigterm_timeout LaunchConfiguration default 5; SIGKILL timer 'float(5) + float(5)'."""
    launch = LaunchedProcesses({}, noninteractive=False)
    assert (launch.sigterm_timeout, launch.sigkill_timeout) == ("5", "10.0")


LAUNCHER = """\
import sys
import pardyn.nodes.launcher as launcher
from pardyn.nodes.bringup import load_bringup
launcher.node_command = lambda executable: [sys.executable, {script!r}, executable, "stop"]
codes = launcher.run_processes(load_bringup({bringup!r}))
sys.exit(0 if all(code == 0 for code in codes.values()) else 1)
"""


def run_launcher(tmp_path, node_script, *, terminal: bool) -> str:
    """``pardyn bringup FILE --processes`` (the runner, its node commands the stand-in) as a terminal's job:
    its own process group, stdin a pseudo-terminal (``terminal``) or nothing; Ctrl-C = SIGINT to the group."""
    bringup = tmp_path / "two.yaml"
    bringup.write_text("nodes:\n  - {executable: sim}\n  - {executable: controller}\n")
    code = LAUNCHER.format(script=str(node_script), bringup=str(bringup))
    leader, follower = pty.openpty() if terminal else (None, None)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    runner = subprocess.Popen([sys.executable, "-c", code], stdin=follower if terminal else subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                              start_new_session=True)
    lines, ready = [], set()
    try:
        deadline = time.monotonic() + 60.0
        while len(ready) < 2 and time.monotonic() < deadline:
            line = runner.stdout.readline()
            if not line:
                break
            lines.append(line)
            ready |= set(re.findall(r"^\[\w+\] (\w+) ready$", line))
        os.killpg(runner.pid, signal.SIGINT)
        rest, _ = runner.communicate(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
        if terminal:
            os.close(leader)
            os.close(follower)
    output = "".join(lines) + rest
    assert runner.returncode == 0, output
    return output


def test_bringup_processes_in_a_terminal_does_not_forward_the_ctrl_c(tmp_path, node_script):
    output = run_launcher(tmp_path, node_script, terminal=True)
    for name in ("sim", "controller"):
        assert re.findall(rf"^\[{name}\] {name} got (\w+)$", output, re.M) == ["SIGINT"], output
    assert "not forwarded, as ros2 launch in a terminal" in output and "still running" not in output, output


def test_bringup_processes_noninteractive_forwards_sigint(tmp_path, node_script):
    output = run_launcher(tmp_path, node_script, terminal=False)
    for name in ("sim", "controller"):
        assert re.findall(rf"^\[{name}\] {name} got (\w+)$", output, re.M) == ["SIGINT", "SIGINT"], output
    assert "SIGINT received: forwarding SIGINT to" in output, output
