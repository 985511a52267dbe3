"""How a pardyn node process stops: SIGINT and SIGTERM are a request, never an exception.

``ros2 launch`` (and ``pardyn bringup --processes``) starts each node as a
process of the terminal's process group: Ctrl-C reaches every node from the
terminal, and launch forwards a SIGINT of its own, so each node gets two
signals, at any moment (while it imports, builds its node, spins, or already
runs its shutdown). Python's default SIGINT handler raises ``KeyboardInterrupt``
wherever the main thread happens to be, and rclpy's chains to it: raised inside
a callback that rclpy's C++ calls (a service, a destructor), it aborts the
process (``pybind11::error_already_set``, exit -6); raised in ``destroy_node``,
the node dies without its summary (exit -2).

:class:`StopSignals` replaces both handlers, for the whole life of the process,
by one that only records the signal; the node's loop
(:func:`pardyn.nodes.common.run_node`) looks at it between callbacks, stops
spinning, destroys the node (which logs its summary) and exits 0. A signal
during the import of the node's module or the construction of the node lets
that finish, then the process exits 0 without spinning. Later signals (the
second of the pair, a SIGTERM from launch's escalation) are recorded and change
nothing: the stop already under way finishes.

The console scripts of ``setup.py`` point here (:func:`run_executable`), so the
handlers are in place before pinocchio, MuJoCo and rclpy load (``import pardyn``
is lazy). This module imports neither.
"""

from __future__ import annotations

import faulthandler
import importlib
import os
import signal
import threading
from collections.abc import Callable

__all__ = ["STOP_SIGNALS", "StopSignals", "run_executable", "stop_signals"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """SIGINT/SIGTERM recorded as a stop request (see the module docstring).

    ``received``: the names of the signals received, in order (``["SIGINT", "SIGTERM"]``).
    Handlers are installed only from the main thread (Python's rule); elsewhere
    :meth:`install` does nothing and the process keeps its handlers.
    """

    def __init__(self) -> None:
        self.received: list[str] = []
        self._previous: dict[int, object] = {}
        self._listeners: list[Callable[[], None]] = []

    @property
    def requested(self) -> bool:
        """Whether a stop signal has arrived."""
        return bool(self.received)

    def install(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread() and not self._previous:
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def restore(self) -> None:
        """Give the signals back to the handlers they had before :meth:`install`."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def ignore_further(self) -> None:
        """Ignore SIGINT/SIGTERM from now on: the process is done and exits.

        Python's finalization gives every signal with a Python handler back to
        the default action (terminate), and it can take a second (DDS, MuJoCo,
        pinocchio teardown): a late second signal would then kill the process
        with -2 after its clean stop. An ignored signal stays ignored.
        """
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)

    def on_stop(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` (no arguments, must not raise) on the first stop signal."""
        self._listeners.append(listener)

    def _handle(self, signum: int, frame: object) -> None:
        first = not self.received
        self.received.append(signal.Signals(signum).name)
        if first:
            for listener in self._listeners:
                try:
                    listener()
                except Exception:  # noqa: BLE001 - a handler must not raise (see the module docstring)
                    pass

    def describe(self) -> str:
        """``"SIGINT"``, ``"SIGINT, then SIGTERM"``: what arrived."""
        return ", then ".join(self.received) if self.received else "no signal"


_PROCESS: StopSignals | None = None


def stop_signals() -> StopSignals:
    """The process's :class:`StopSignals`, installed on first call (idempotent)."""
    global _PROCESS  # noqa: PLW0603 - one per process, as the signal handlers are
    if _PROCESS is None:
        _PROCESS = StopSignals().install()
    return _PROCESS


def run_executable(executable: str, args: list[str] | None = None) -> int:
    """The ``main`` of the console script ``executable``: take the signals, then import and run the node.

    A signal during the import is honoured when the node's ``main`` starts
    (:func:`pardyn.nodes.common.run_node`: exit 0, nothing built).
    """
    stop_signals()
    # MuJoCo's import probes the OpenGL library glfw with a child Python process unless rendering is off:
    # a node never renders, and a child in the node's process group would take the group's Ctrl-C with a
    # KeyboardInterrupt traceback of its own (measured: 1 sim in 160 trials)
    os.environ.setdefault("MUJOCO_GL", "disable")
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>`: every thread's stack on stderr (a hung node)
    module = importlib.import_module(f"pardyn.nodes.{executable}")
    return module.main(args)


def _entry(executable: str) -> Callable[[], int]:
    def main() -> int:
        return run_executable(executable)  # rclpy reads --ros-args from sys.argv

    main.__name__ = executable
    main.__doc__ = f"Console script ``{executable}``: :func:`run_executable` of ``pardyn.nodes.{executable}``."
    return main


sim = _entry("sim")
controller = _entry("controller")
trajectory = _entry("trajectory")
closure_solver = _entry("closure_solver")
dynamics = _entry("dynamics")
recorder = _entry("recorder")
identifier = _entry("identifier")
gazebo_joint_states = _entry("gazebo_joint_states")
visualizer = _entry("visualizer")
