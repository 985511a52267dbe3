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
spinning, destroys the node (which logs its summary) and exits 0. Without the
guard below (a node run in-process, ``python -m``), a signal during the import
of the node's module or the construction of the node lets that finish, then
the process exits 0 without spinning. Later signals (the
second of the pair, a SIGTERM from launch's escalation) are recorded and change
nothing: the stop already under way finishes.

A node executable (:func:`run_executable`) must also end *promptly*: within 1 s
of the first signal, whatever it is doing (issue 34: a node still importing or
building for 2.5-5.7 s under load made ``ros2 launch`` escalate to SIGTERM at
5 s). Its :meth:`StopSignals.exit_promptly` guard is a thread woken by the
signal itself (``signal.set_wakeup_fd``: the C-level handler writes the signal
number to a pipe even while the main thread is inside a long C call):

* while the node's modules import or its node is built, nothing has run and
  nothing is to be saved: the guard writes the stop line and ends the process
  at once (``os._exit(0)``);
* while it spins, the main thread leaves the loop between two callbacks and
  destroys the node (its summary, the recorder's bag closed); if a callback
  keeps it past :data:`CALLBACK_GRACE_S`, the guard ends the process, saying so.

**Which signal a stop line names.** The signals taken, in the order taken,
except that signals taken together are named in signal-number order (SIGINT
before SIGTERM): Ctrl-C's SIGINT and launch's SIGTERM often come together, and
two signals pending at once have no order a process can see (Linux runs the
later one's handler first, the first one's frame under it; a busy main thread
takes both at once). The stop guard's line named "SIGTERM" for a pair sent
SIGINT first (3-4 in 30 under load); it now waits :data:`SIGNAL_SETTLE_S` for
the rest of a pair and names what came by then in signal-number order, as
Python's own handlers run signals tripped together (the line of a node that
spins comes from those).

One limit: the guard, a Python thread, needs the GIL, which a C extension may
hold for a while (the largest measured: ``import pinocchio``'s library load,
~0.1 s quiet). Before the console script runs its first line (the
interpreter's own start, ~20-40 ms) a SIGINT is Python's KeyboardInterrupt.

The console scripts of ``setup.py`` point here (:func:`run_executable`), so the
handlers are in place before pinocchio, MuJoCo and rclpy load (``import pardyn``
is lazy); ``setup.py`` writes them for ``colcon build`` as pip does, without
setuptools' entry-point lookup (``importlib.metadata``) before this module
loads. This module imports neither.
"""

from __future__ import annotations

import ctypes
import faulthandler
import importlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

__all__ = ["CALLBACK_GRACE_S", "SIGNAL_SETTLE_S", "STOP_SIGNALS", "LockFreeExit", "StopSignals", "run_executable",
           "stop_signals"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_SIGNAL_NUMBERS = frozenset(int(s) for s in signal.Signals)
CALLBACK_GRACE_S = 0.6  # s: the longest a callback may keep a node from its stop (then the guard ends it)
SIGNAL_SETTLE_S = 0.05  # s: signals the guard takes within this of the first are named together, in number order

IMPORTING = "importing its modules"
BUILDING = "building its node"
SPINNING = "spinning"
STOPPING = "destroying its node"


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
        self.phase = IMPORTING  # what the process does (see enter()); the guard reads it
        self._started = time.monotonic()
        self.entered: dict[str, float] = {IMPORTING: self._started}  # time.monotonic() at each phase's start
        self._phase_changed = threading.Condition()
        self._wakeup: tuple[int, int] | None = None  # the guard's pipe (read end, write end)

    @property
    def owns_process(self) -> bool:
        """Whether this process is one node executable, which the stop may end (:meth:`exit_promptly` was called)."""
        return self._wakeup is not None

    @property
    def requested(self) -> bool:
        """Whether a stop signal has arrived."""
        return bool(self.received)

    def install(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread() and not self._previous:
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # a parent may have left them blocked
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

    def enter(self, phase: str) -> None:
        """Record what the process does now: :data:`IMPORTING`, :data:`BUILDING`, :data:`SPINNING`, :data:`STOPPING`."""
        with self._phase_changed:
            self.phase = phase
            self.entered[phase] = time.monotonic()
            self._phase_changed.notify_all()

    def start_up(self) -> str:
        """``ready 1.42 s after its start (modules 0.98 s, node built in 0.44 s)``: once :data:`SPINNING` is entered.

        The start is this object's creation: the console script's first line (after the interpreter's own start).
        """
        times = self.entered
        ready, built = times.get(SPINNING, math.nan), times.get(BUILDING, math.nan)
        return (f"ready {ready - self._started:.2f} s after its start (modules {built - self._started:.2f} s, "
                f"node built in {ready - built:.2f} s)")

    def exit_promptly(self, name: str) -> None:
        """Start the guard that ends this process within 1 s of a stop signal (see the module docstring).

        Only for a process that is one node executable (:func:`run_executable`):
        the guard ends the whole process. ``name``: the node's name in the stop line.
        """
        if self._wakeup is not None or threading.current_thread() is not threading.main_thread():
            return
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        self._wakeup = (read_end, write_end)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        threading.Thread(target=self._guard, args=(name,), name="pardyn-stop-guard", daemon=True).start()
        if self.received:  # a signal came before the pipe was in: its handler could not wake the guard
            try:
                os.write(write_end, b"\0")
            except OSError:
                pass

    def _guard(self, name: str) -> None:
        """The guard thread: wait for a signal's byte, then end the process unless the node stops in time."""
        read_end = self._wakeup[0]
        number = os.read(read_end, 1)[0]  # a signal's number (set_wakeup_fd) or the Python handler's poke (0)
        signalled = time.monotonic()
        with self._phase_changed:
            if self.phase == SPINNING:
                self._phase_changed.wait_for(lambda: self.phase != SPINNING, timeout=CALLBACK_GRACE_S)
            phase = self.phase
        if phase == STOPPING:
            return  # the main thread stops the node (bounded by run_node's cleanup timeout)
        if not self.received:  # the main thread is in a C call: the Python handler has not run yet
            time.sleep(max(0.0, signalled + SIGNAL_SETTLE_S - time.monotonic()))  # the rest of a pair
            numbers = {number} | set(self._drain(read_end))
            if not self.received:  # signals taken together: in signal-number order (see the module docstring)
                self.received.extend(signal.Signals(n).name for n in sorted(numbers - {0}) if n in _SIGNAL_NUMBERS)
            if not self.received:
                self.received.append("a stop signal")
        what = (f"before its node was built ({phase}): nothing ran" if phase in (IMPORTING, BUILDING)
                else f"a callback ran on for {time.monotonic() - signalled:.1f} s: node not destroyed")
        self.write_stop_line(name, what, last=True)
        os._exit(0)

    @staticmethod
    def _drain(read_end: int) -> bytes:
        """The signal numbers already in the guard's pipe (nothing waits)."""
        os.set_blocking(read_end, False)
        try:
            return os.read(read_end, 64)
        except BlockingIOError:
            return b""
        finally:
            os.set_blocking(read_end, True)

    def stop_line(self, name: str, what: str, later_s: float = 0.0) -> str:
        """``[INFO] [name]: stopped by SIGINT 3.21 s after its start: <what>, exit code 0`` (with its newline).

        ``later_s``: the line is written that much later than now (:class:`LockFreeExit` writes it from C).
        """
        elapsed = time.monotonic() + later_s - self._started
        return f"[INFO] [{name}]: stopped by {self.describe()} {elapsed:.2f} s after its start: {what}, exit code 0\n"

    def write_stop_line(self, name: str, what: str, last: bool = False) -> None:
        """The last line of a node stopped by signals, on stderr (written at once: also from the guard).

        ``last``: the process ends right after (the guard's ``os._exit``) while its main thread may still run: stdout
        and stderr go to ``/dev/null`` before the line is written, so nothing the main thread prints meanwhile
        follows it (a C compiler of the kernels killed by the same Ctrl-C made the controller print its
        "compiled kernels unavailable" note after its stop line, once in a two-worker suite run).
        """
        line = self.stop_line(name, what)
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        if not last:
            os.write(2, line.encode())
            return
        stderr = os.dup(2)
        silent = os.open(os.devnull, os.O_WRONLY)
        os.dup2(silent, 1)
        os.dup2(silent, 2)
        os.write(stderr, line.encode())

    def on_stop(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` (no arguments, must not raise) on the first stop signal."""
        self._listeners.append(listener)

    def _handle(self, signum: int, frame: object) -> None:
        first = not self.received
        self.received.append(signal.Signals(signum).name)
        if first and self._wakeup is not None:
            try:  # the guard also wakes if another library took the wakeup fd over
                os.write(self._wakeup[1], b"\0")
            except OSError:
                pass
        if first:
            for listener in self._listeners:
                try:
                    listener()
                except Exception:  # noqa: BLE001 - a handler must not raise (see the module docstring)
                    pass

    def describe(self) -> str:
        """``"SIGINT"``, ``"SIGINT, then SIGTERM"``: what arrived."""
        return ", then ".join(self.received) if self.received else "no signal"


class LockFreeExit:
    """An exit with code 0 and one line that needs no interpreter lock: for a teardown hung inside a C call.

    rclpy's ``Node.destroy_node`` has hung in its C++ (``destroy_when_not_in_use`` of the node's handle, rcl's
    node teardown: once in a 1374-test run, after the recorder had closed its bag) while *holding* the
    interpreter lock: no Python thread runs then (neither the wait of
    :func:`pardyn.nodes.common.release_rclpy` nor the stop guard), and the faulthandler's bounded stop
    ended the node 8 s later with exit 1. :meth:`arm` starts two POSIX timers whose expiry runs a C function
    on a thread of the C library's own (``timer_create`` with ``SIGEV_THREAD``, the one argument given
    as the timer's value): ``puts(line)`` (the C library's ``stdout`` pointed at an unbuffered copy of
    stderr, where the other stop lines go: ``puts`` takes no stream) and, :data:`LINE_LEAD_S` later,
    ``_exit(0)``. :meth:`cancel` deletes them. Linux with
    glibc only; elsewhere :meth:`arm` returns False and the process keeps the faulthandler's bound.
    """

    LINE_LEAD_S = 0.02  # s: the line's timer fires this long before the exit's

    _SIGEV_THREAD = 2
    _CLOCK_MONOTONIC = 1
    _IONBF = 2

    class _SigEvent(ctypes.Structure):  # struct sigevent of Linux (64 bytes), its SIGEV_THREAD member
        _fields_ = (("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                    ("function", ctypes.c_void_p), ("attributes", ctypes.c_void_p), ("padding", ctypes.c_char * 32))

    class _TimerSpec(ctypes.Structure):  # struct itimerspec: interval, then first expiry (s, ns each)
        _fields_ = (("interval_s", ctypes.c_long), ("interval_ns", ctypes.c_long),
                    ("value_s", ctypes.c_long), ("value_ns", ctypes.c_long))

    def __init__(self) -> None:
        self._timers: list[ctypes.c_void_p] = []
        self._line: ctypes.Array | None = None  # kept alive while a timer may read it
        self._libc: ctypes.CDLL | None = None
        self._stdout: ctypes.c_void_p | None = None  # the C library's stdout variable
        self._saved_stdout: int | None = None  # its value before arm()

    def arm(self, delay_s: float, line: str | None) -> bool:
        """End the process ``delay_s`` from now with exit code 0, ``line`` (if any; no newline needed) written first."""
        if sys.platform != "linux" or ctypes.sizeof(self._SigEvent) != 64:
            return False
        try:
            libc = self._libc = ctypes.CDLL(None, use_errno=True)
            create, settime = libc.timer_create, libc.timer_settime
            libc.fdopen.restype = ctypes.c_void_p
            functions = (ctypes.cast(libc.puts, ctypes.c_void_p).value, ctypes.cast(libc._exit, ctypes.c_void_p).value)
            self._stdout = ctypes.c_void_p.in_dll(libc, "stdout")
        except (OSError, AttributeError, ValueError):
            return False
        calls = [(functions[1], None, delay_s)]  # _exit(0)
        if line is not None:
            stream = libc.fdopen(os.dup(2), b"w")  # puts writes to stdout: there, an unbuffered copy of stderr
            if not stream:
                return False
            libc.setvbuf(ctypes.c_void_p(stream), None, self._IONBF, ctypes.c_size_t(0))
            self._saved_stdout = self._stdout.value
            self._stdout.value = stream  # glibc's stdout is a plain variable (its manual: assignable)
            self._line = ctypes.create_string_buffer(line.rstrip("\n").encode())
            calls.append((functions[0], ctypes.cast(self._line, ctypes.c_void_p).value,
                          max(0.0, delay_s - self.LINE_LEAD_S)))  # puts(line)
        for function, value, delay in calls:
            event = self._SigEvent(value=value, notify=self._SIGEV_THREAD, function=function)
            timer = ctypes.c_void_p()
            if create(self._CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(timer)) != 0:
                self.cancel()
                return False
            self._timers.append(timer)
            seconds = int(delay)
            spec = self._TimerSpec(0, 0, seconds, max(1, int(round((delay - seconds) * 1e9))))
            if settime(timer, 0, ctypes.byref(spec), None) != 0:
                self.cancel()
                return False
        return True

    def cancel(self) -> None:
        """Delete the timers (the process goes on): the exit's first."""
        if self._libc is None:
            return
        for timer in self._timers:
            self._libc.timer_delete(timer)
        self._timers.clear()
        if self._saved_stdout is not None and self._stdout is not None:
            self._stdout.value, self._saved_stdout = self._saved_stdout, None


_PROCESS: StopSignals | None = None


def stop_signals() -> StopSignals:
    """The process's :class:`StopSignals`, installed on first call (idempotent)."""
    global _PROCESS  # noqa: PLW0603 - one per process, as the signal handlers are
    if _PROCESS is None:
        _PROCESS = StopSignals().install()
    return _PROCESS


def run_executable(executable: str, args: list[str] | None = None) -> int:
    """The ``main`` of the console script ``executable``: take the signals, then import and run the node.

    Ends the process (``os._exit`` with the node's exit code) when the node's
    ``main`` returns; a stop signal before the node spins ends it at once (the guard).
    """
    stop = stop_signals()
    stop.exit_promptly(executable)
    # MuJoCo's import probes the OpenGL library glfw with a child Python process unless rendering is off:
    # a node never renders, and a child in the node's process group would take the group's Ctrl-C with a
    # KeyboardInterrupt traceback of its own (measured: 1 sim in 160 trials)
    os.environ.setdefault("MUJOCO_GL", "disable")
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>`: every thread's stack on stderr (a hung node)
    module = importlib.import_module(f"pardyn.nodes.{executable}")
    code = module.main(args)
    # the node is destroyed, its files closed, rclpy shut down: what is left is the interpreter's teardown of
    # DDS, pinocchio and MuJoCo objects, ~0.3 s quiet and over 1 s under load (measured), which a stop
    # signal must not wait for
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


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
