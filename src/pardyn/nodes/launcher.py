"""``pardyn bringup FILE --processes``: each node of a bringup file as its own OS process, as ``ros2 launch`` does.

``ros2 launch pardyn sim.launch.py`` (:mod:`pardyn.nodes.launch`) starts one
process per entry of the bringup file: ``ros2 run pardyn <executable> --ros-args
...`` with the entry's parameters (files as ``--params-file``, inline values in
a temporary ``/**`` parameters file, as launch_ros writes them) and remappings,
the namespace as ``__ns``. :func:`run_processes` does the same without launch
(which has no wheels), with launch's process handling:

* every child is in the runner's process group (a terminal's Ctrl-C reaches
  them all directly) and each line it prints is prefixed with its node's name,
  ``[sim] ...`` (launch: ``[sim-1] ...``);
* a SIGINT to the runner is forwarded to every child still running only when
  the runner is non-interactive (``noninteractive``: ``pardyn bringup -n``, or
  standard input not a terminal), as ``ros2 launch`` does (``-n``, the same
  default): in a terminal, Ctrl-C already reached every process of the
  foreground group, so each node gets one SIGINT, as under launch. A SIGTERM to
  the runner, or the end of ``duration_s``, sends SIGINT to every child (launch
  would leave them running on SIGTERM). A child still running
  ``sigterm_timeout_s`` (5 s) after the stop gets SIGTERM, one still running
  ``sigkill_timeout_s`` (5 s) after that SIGKILL (launch's defaults: 5 s, 10 s);
* each exit is reported with its code as it happens (``[bringup] sim exited
  with code 0``) and in the returned mapping; a node that exits on its own
  leaves the others running (launch's default).

``start_delays`` (node name -> s after the start) starts the processes in any
order with any delays: the test of "start in any order"
(``test/nodes/test_launcher.py``, ``bench/start_order.py``) uses it. This
module imports no rclpy: the runner is a plain process supervisor.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from pardyn.errors import DescriptionError
from pardyn.nodes.bringup import Bringup, _cli_arguments, namespace_remappings
from pardyn.nodes.stopping import StopSignals

__all__ = ["NodeProcesses", "is_terminal", "node_command", "run_processes"]

POLL_S = 0.05


def is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (``ros2launch``: ``--noninteractive`` defaults to ``not sys.stdin.isatty()``)."""
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def node_command(executable: str) -> list[str]:
    """The console script ``executable`` next to the running interpreter, else ``python -m pardyn.nodes.<executable>``."""
    script = Path(sys.executable).parent / executable
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", f"pardyn.nodes.{executable}"]


def _say(output: TextIO, lock: threading.Lock, severity: str, text: str) -> None:
    with lock:
        output.write(f"[{severity}] [bringup]: {text}\n")
        output.flush()


class NodeProcesses:
    """The processes of one bringup run: start, prefix their output, forward signals, collect exit codes.

    Attributes:
        codes: node name -> exit code (None while running; negative: killed by that signal).
        commands: node name -> the command line it was started with.
    """

    def __init__(self, bringup: Bringup, scratch: Path, *, namespace: str = "", output: TextIO = sys.stdout) -> None:
        self.bringup = bringup
        self.namespace = namespace
        self._scratch = scratch
        self._output = output
        self._lock = threading.Lock()
        self._processes: dict[str, subprocess.Popen] = {}
        self._readers: list[threading.Thread] = []
        self.codes: dict[str, int | None] = {}
        self.commands: dict[str, list[str]] = {}
        self._started: dict[str, float] = {}
        self._reported: set[str] = set()

    def start(self, name: str) -> None:
        """Start the node ``name`` of the bringup file (its name, or its executable when it has none)."""
        (spec,) = [s for s in self.bringup.nodes if (s.name or s.executable) == name]
        arguments = _cli_arguments(spec, self._scratch, namespace_remappings(self.namespace))
        if self.namespace:
            arguments += ["-r", f"__ns:=/{self.namespace.strip('/')}"]
        command = node_command(spec.executable) + arguments
        # line-buffered children: rclpy's log lines and prints reach the prefixer as they are written
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "RCUTILS_LOGGING_BUFFERED_STREAM": "1"}
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, env=env)
        self._processes[name], self.codes[name], self.commands[name] = process, None, command
        self._started[name] = time.monotonic()
        reader = threading.Thread(target=self._prefix, args=(name, process), daemon=True)
        reader.start()
        self._readers.append(reader)
        _say(self._output, self._lock, "INFO", f"{name} started, pid {process.pid}: {' '.join(command)}")

    def _prefix(self, name: str, process: subprocess.Popen) -> None:
        for raw in iter(process.stdout.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            with self._lock:
                self._output.write(f"[{name}] {line}\n")
                self._output.flush()
        process.stdout.close()

    def poll(self) -> None:
        """Collect the exit codes of processes that ended; report each once."""
        for name, process in self._processes.items():
            code = process.poll()
            if code is None or name in self._reported:
                continue
            self.codes[name] = code
            self._reported.add(name)
            after = time.monotonic() - self._started[name]
            severity = "INFO" if code == 0 else "ERROR"
            meaning = f" (killed by {signal.Signals(-code).name})" if code < 0 else ""
            _say(self._output, self._lock, severity, f"{name} exited with code {code}{meaning} after {after:.1f} s")

    def running(self) -> list[str]:
        self.poll()
        return [name for name, code in self.codes.items() if code is None]

    def signal_all(self, sig: int) -> None:
        """Send ``sig`` to every process still running."""
        for name in self.running():
            try:
                self._processes[name].send_signal(sig)
            except ProcessLookupError:
                pass

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for every process to end; whether they all did."""
        deadline = time.monotonic() + timeout_s
        while self.running():
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)
        return True

    def shut_down(self, sigterm_timeout_s: float = 5.0, sigkill_timeout_s: float = 5.0, *,
                  send_sigint: bool = True) -> None:
        """SIGINT to each running process (unless ``send_sigint`` is False: a terminal's Ctrl-C reached them),
        then SIGTERM, then SIGKILL, as launch escalates."""
        timeout_before = 0.0
        for sig, timeout in ((signal.SIGINT, sigterm_timeout_s), (signal.SIGTERM, sigkill_timeout_s),
                             (signal.SIGKILL, 10.0)):
            if not self.running():
                break
            if sig != signal.SIGINT:
                _say(self._output, self._lock, "ERROR",
                     f"{self.running()} still running {timeout_before:g} s after the stop: sending "
                     f"{signal.Signals(sig).name}")
            if sig != signal.SIGINT or send_sigint:
                self.signal_all(sig)
            timeout_before = timeout
            self.wait(timeout)
        for reader in self._readers:
            reader.join(timeout=2.0)


def run_processes(
    bringup: Bringup,
    *,
    namespace: str = "",
    duration_s: float | None = None,
    stop: StopSignals | None = None,
    start_delays: Mapping[str, float] | None = None,
    output: TextIO = sys.stdout,
    sigterm_timeout_s: float = 5.0,
    sigkill_timeout_s: float = 5.0,
    noninteractive: bool | None = None,
) -> dict[str, int | None]:
    """Run every node of ``bringup`` as its own process until a stop; node name -> exit code.

    ``start_delays``: node name -> seconds after the start (default 0: in the
    file's order); the processes start in order of their delays. Stops on
    SIGINT/SIGTERM (``stop``, else handlers installed for the run), after
    ``duration_s`` s, or when every process has ended; a node not started yet
    at the stop is never started (its code stays None). ``noninteractive``
    (default: standard input is not a terminal, ``ros2 launch``'s default for
    ``-n``): whether a SIGINT to the runner is forwarded (module docstring).

    Raises:
        DescriptionError: ``start_delays`` names a node the file does not have, or a negative delay.
    """
    names = [spec.name or spec.executable for spec in bringup.nodes]
    delays = dict(start_delays or {})
    unknown = sorted(set(delays) - set(names))
    if unknown or any(not 0.0 <= d < float("inf") for d in delays.values()):
        raise DescriptionError(f"{bringup.source}: start delays {delays}: expected seconds >= 0 for nodes of {names}")
    schedule = sorted(names, key=lambda n: (delays.get(n, 0.0), names.index(n)))
    if noninteractive is None:
        noninteractive = not is_terminal(sys.stdin)
    own = stop is None
    stop = StopSignals().install() if own else stop
    begin = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pardyn_processes_") as scratch:
        processes = NodeProcesses(bringup, Path(scratch), namespace=namespace, output=output)
        terminal_ctrl_c = False
        try:
            deadline = None if duration_s is None else begin + duration_s
            pending = list(schedule)
            while not stop.requested and (deadline is None or time.monotonic() < deadline):
                now = time.monotonic() - begin
                while pending and delays.get(pending[0], 0.0) <= now and not stop.requested:
                    processes.start(pending.pop(0))
                if not pending and not processes.running():
                    break
                time.sleep(POLL_S)
            # a terminal's Ctrl-C reached every node (one process group): forwarded only when non-interactive
            terminal_ctrl_c = stop.requested and stop.received[0] == "SIGINT" and not noninteractive
            if terminal_ctrl_c:
                _say(output, processes._lock, "INFO",
                     f"SIGINT received: the terminal's Ctrl-C reached {processes.running()} (not forwarded, as ros2 "
                     "launch in a terminal; -n forwards it)")
            elif stop.requested:
                _say(output, processes._lock, "INFO",
                     f"{stop.describe()} received: forwarding SIGINT to {processes.running()}")
        finally:
            processes.shut_down(sigterm_timeout_s, sigkill_timeout_s,
                                send_sigint=not terminal_ctrl_c)
            if own:
                stop.restore()
    codes = {name: processes.codes.get(name) for name in names}
    failed = {name: code for name, code in codes.items() if code not in (0, None)}
    _say(output, processes._lock, "ERROR" if failed else "INFO",
         f"exit codes {codes}" + (f": {sorted(failed)} failed" if failed else ""))
    return codes
