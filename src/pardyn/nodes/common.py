"""Helpers shared by pardyn's ROS 2 nodes.

* :func:`declare_parameters`: a node's parameters declared from its table
  (:mod:`pardyn.node_parameters`) with ParameterDescriptors;
* :class:`ReportThrottle` and :class:`Reporter`: at most one log report per
  period for each kind of problem, with the count of the ones held back;
* :func:`make_executor`: the executor every pardyn process spins its nodes with;
* :func:`run_node`: the ``main()`` of a node executable: init, spin, clean
  exit on Ctrl-C/SIGTERM (exit code 0), a one-line fatal message and exit
  code 1 when the node cannot start (a pardyn error, a bad parameter);
* stamp conversions and the QoS profiles of the control loop.

The lockstep protocol between the ``sim`` and the ``controller`` nodes (tags,
re-sends, watchdogs, stalls) is :mod:`pardyn.transport.lockstep`, its command
sources and start gate the rest of :mod:`pardyn.transport`, all without ROS;
its tag function :func:`step_of_stamp` is re-exported here.
"""

from __future__ import annotations

import faulthandler
import math
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from builtin_interfaces.msg import Time
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from pardyn.transport.lockstep import SEQUENCE_MODULUS, step_of_stamp  # the protocol's tags, for the nodes
from pardyn.errors import InputError
from pardyn.node_parameters import BUILTIN, NODE_PARAMETERS, ParameterSpec

__all__ = [
    "COMMAND_TOPIC",
    "CONTROL_QOS",
    "LATCHED_QOS",
    "LATEST_STATE_QOS",
    "NANOSECONDS",
    "SEQUENCE_MODULUS",
    "STATE_TOPIC",
    "Reporter",
    "ReportThrottle",
    "declare_parameters",
    "log_summary",
    "make_executor",
    "one_blas_thread",
    "needs_message_info",
    "ns_to_stamp",
    "period_ns",
    "run_node",
    "stamp_to_ns",
    "step_of_stamp",
]

STATE_TOPIC = "joint_states"
COMMAND_TOPIC = "effort_controller/commands"
NANOSECONDS = 1_000_000_000

CONTROL_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
"""joint_states and effort commands: reliable (a lockstep step must not be lost), depth 10."""

LATEST_STATE_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)
"""The controller's joint_states: keep last 1, so that it always acts on the newest state (a deeper queue
that fills when the controller is late makes every command answer an old state); best effort matches both
reliable and best-effort publishers (drivers, bridges); the lockstep sim re-sends a state that got no answer,
so a lost message costs a re-send."""

LATCHED_QOS = QoSProfile(
    depth=1,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
"""A message that late subscribers still receive (the reference trajectory)."""


# --------------------------------------------------------------------------- parameters
_ROS_TYPES: dict[str, tuple[int, Parameter.Type]] = {
    "bool": (ParameterType.PARAMETER_BOOL, Parameter.Type.BOOL),
    "integer": (ParameterType.PARAMETER_INTEGER, Parameter.Type.INTEGER),
    "double": (ParameterType.PARAMETER_DOUBLE, Parameter.Type.DOUBLE),
    "string": (ParameterType.PARAMETER_STRING, Parameter.Type.STRING),
    "integer_array": (ParameterType.PARAMETER_INTEGER_ARRAY, Parameter.Type.INTEGER_ARRAY),
    "double_array": (ParameterType.PARAMETER_DOUBLE_ARRAY, Parameter.Type.DOUBLE_ARRAY),
    "string_array": (ParameterType.PARAMETER_STRING_ARRAY, Parameter.Type.STRING_ARRAY),
}


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The ParameterDescriptor of a table entry: description, type, read-only flag, range of a number."""
    kind, _ = _ROS_TYPES[spec.type]
    extra: dict[str, Any] = {}
    if spec.low is not None or spec.high is not None:
        if spec.type == "double":
            extra["floating_point_range"] = [FloatingPointRange(
                from_value=-math.inf if spec.low is None else float(spec.low),
                to_value=math.inf if spec.high is None else float(spec.high),
            )]
        elif spec.type == "integer":
            extra["integer_range"] = [IntegerRange(
                from_value=-(2**63) if spec.low is None else int(spec.low),
                to_value=2**63 - 1 if spec.high is None else int(spec.high), step=1,
            )]
    return ParameterDescriptor(description=spec.description, type=kind, read_only=spec.read_only,
                               additional_constraints=spec.validation(), **extra)


def declare_parameters(node: Node, name: str) -> dict[str, Any]:
    """Declare the parameters of the node ``name`` from its table (:mod:`pardyn.node_parameters`); their values.

    Each is declared with its descriptor (ROS enforces the types and number
    ranges), then checked against the table (choices of a string): an array
    without a default is ``[]`` when no file or override sets it.

    Raises:
        InputError: ``parameter <name>: <problem>`` for a value the table rejects.
    """
    values: dict[str, Any] = {}
    for spec in NODE_PARAMETERS[name]:
        _, uninitialized = _ROS_TYPES[spec.type]
        array = spec.type.endswith("_array")
        default = (list(spec.default) if spec.default else uninitialized) if array else spec.default
        value = node.declare_parameter(spec.name, default, _descriptor(spec)).value
        if array:
            value = [] if value is None else list(value)
        problems = spec.problems(value)
        if problems:
            raise InputError(f"parameter {spec.name}: {'; '.join(problems)}")
        values[spec.name] = value
    _warn_unknown_overrides(node, name)
    return values


def _warn_unknown_overrides(node: Node, name: str) -> None:
    """Say which parameters given to the node (``-p``, ``--params-file``) no pardyn node declares: a misspelt
    key (``stall_timout``) is otherwise dropped without a word. A warning, not an error: a launch-wide ``/**``
    file may carry other packages' parameters."""
    import difflib  # noqa: PLC0415

    declared = {spec.name for specs in NODE_PARAMETERS.values() for spec in specs} | {s.name for s in BUILTIN}
    overrides = getattr(node, "_parameter_overrides", {}) or {}  # rclpy's overrides of this node
    for key in sorted(set(overrides) - declared):
        near = difflib.get_close_matches(key, [spec.name for spec in NODE_PARAMETERS[name]], n=1)
        node.get_logger().warning(
            f"parameter {key!r} is not a parameter of node {name} (ignored){f'; did you mean {near[0]!r}?' if near else ''}"
        )


# --------------------------------------------------------------------------- reports
class ReportThrottle:
    """At most one report per ``period_s`` for each kind of problem."""

    def __init__(self, period_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.period_s = period_s
        self._clock = clock
        self._last: dict[str, float] = {}
        self._suppressed: Counter[str] = Counter()

    def __call__(self, kind: str) -> int | None:
        """None to stay silent, else the number of reports of this kind suppressed since the last one."""
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.period_s:
            self._suppressed[kind] += 1
            return None
        self._last[kind] = now
        return self._suppressed.pop(kind, 0)


class Reporter:
    """Throttled logging of a node's problems, one :class:`ReportThrottle` for all kinds.

    ``reporter.error("watchdog", "no command for 20 periods")`` logs at most once
    per ``period_s`` per kind, appending how many were held back.
    """

    def __init__(self, node: Node, period_s: float, *, what: str = "more") -> None:
        self._logger = node.get_logger()
        self.throttle = ReportThrottle(period_s)
        self._what = what

    def _text(self, kind: str, text: str) -> str | None:
        suppressed = self.throttle(kind)
        if suppressed is None:
            return None
        if suppressed:
            text += f" ({suppressed} {self._what} for the same reason in the last {self.throttle.period_s:g} s)"
        return text

    # one call site per severity: rclpy fixes the severity of each logging call site
    def info(self, kind: str, text: str) -> None:
        if (message := self._text(kind, text)) is not None:
            self._logger.info(message)

    def warning(self, kind: str, text: str) -> None:
        if (message := self._text(kind, text)) is not None:
            self._logger.warning(message)

    def error(self, kind: str, text: str) -> None:
        if (message := self._text(kind, text)) is not None:
            self._logger.error(message)


def log_summary(node: Node, text: str) -> None:
    """Log a node's closing summary: on rosout while the context lives, on stderr after Ctrl-C shut it down."""
    if node.context.ok():
        node.get_logger().info(text)
    else:
        print(f"[INFO] [{node.get_logger().name}]: {text}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- time
def stamp_to_ns(stamp: Time) -> int:
    """builtin_interfaces/Time as integer nanoseconds."""
    return int(stamp.sec) * NANOSECONDS + int(stamp.nanosec)


def ns_to_stamp(nanoseconds: int) -> Time:
    """Integer nanoseconds (>= 0) as builtin_interfaces/Time."""
    sec, nanosec = divmod(int(nanoseconds), NANOSECONDS)
    return Time(sec=sec, nanosec=nanosec)


def period_ns(rate_hz: float) -> int:
    """The control period of ``rate_hz`` in whole nanoseconds (1 kHz: 1_000_000)."""
    return int(round(NANOSECONDS / rate_hz))


# --------------------------------------------------------------------------- main
EXECUTOR_VARIABLE = "PARDYN_EXECUTOR"
CLEANUP_TIMEOUT_S = 8.0  # s: the longest a node's process may take from its stop to its exit
RELEASE_WAIT_S = 0.6  # s: the wait for rclpy's teardown (a stop ends a node within 1 s: issue 34)
HELD_EXIT_S = 0.25  # s: after that wait, a teardown holding the interpreter lock ends the process from C


def one_blas_thread() -> None:
    """Limit BLAS/LAPACK to one thread in this process (a node's matrices are small).

    OpenBLAS's default thread pool makes the small products and solves of a
    control step 10-25x slower on a loaded 2-core machine (measured by issue 19's
    dynamics work): the threads wake, spin and contend with the other nodes.
    """
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    threadpool_limits(limits=1, user_api="blas")



def make_executor(context=None, *, message_info: bool = False):
    """The executor of pardyn's processes: rclpy's ``EventsExecutor``, else its ``SingleThreadedExecutor``.

    The events executor (``rclpy.experimental``, C++) queues the middleware's
    events and calls the callbacks without rebuilding a wait set of every entity
    each time, as the single-threaded executor does in Python: per message it
    costs a fraction of the latter's overhead (``bench/loop.py`` measures both
    on the sim + controller loop). Two limits of the events executor of the
    installed rclpy (9.1), measured: it cannot call a subscription callback that
    takes the message info (``SystemError: null argument to internal routine``),
    hence ``message_info=True`` (a node whose subscription callback takes the message info)
    selects the single-threaded one (pardyn's sim takes its commands, with their publisher's gid, on a
    thread of its own instead: :class:`pardyn.nodes.realtime.StateLoop`); and its
    ``spin()`` runs nothing, so pardyn spins with ``spin_once`` in a loop.

    The environment variable ``PARDYN_EXECUTOR`` = ``single`` selects the
    single-threaded executor (comparisons, or an rclpy whose events executor
    misbehaves); ``events`` (the default) falls back to it when the installed
    rclpy has no events executor.
    """
    from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415

    choice = os.environ.get(EXECUTOR_VARIABLE, "events").strip().lower()
    if choice not in ("events", "single"):
        raise InputError(f"environment variable {EXECUTOR_VARIABLE}: expected events or single, got {choice!r}")
    if choice == "events" and not message_info:
        try:
            from rclpy.experimental import EventsExecutor  # noqa: PLC0415
        except ImportError:
            pass
        else:
            return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


def needs_message_info(node: Node) -> bool:
    """Whether ``node`` has a subscription whose callback takes the message info (see :func:`make_executor`)."""
    return bool(getattr(node, "needs_message_info", False))


def node_failure(node: Node | None) -> str | None:
    """What keeps a running node from its work, or None: a node sets its ``failure`` attribute when something it
    builds after its start fails (the identifier's estimator, built on a thread once the node is up). The node
    has logged it; :func:`run_node` then ends the process with exit code 1 (launch reports the process died) and
    :func:`pardyn.nodes.bringup.run_nodes` raises, as for a node that cannot start."""
    return getattr(node, "failure", None)


def run_node(factory: Callable[[], Node], name: str, args: Sequence[str] | None = None) -> int:
    """Run ``factory()``'s node until SIGINT/SIGTERM; exit code 0, or 1 if it cannot start or go on (:func:`node_failure`).

    The signals only ask for the stop (:mod:`pardyn.nodes.stopping`): the loop
    ends between two callbacks, the node is destroyed (its summary is logged),
    rclpy shuts down, and the last line says which signals came; a signal that
    arrives while the node is built ends a node executable at once (the guard of
    :meth:`~pardyn.nodes.stopping.StopSignals.exit_promptly`), else lets the construction finish first. No
    signal, however many and whenever, raises in the node's code.

    A pardyn error or a bad parameter while constructing the node is logged as
    ``cannot start: <type>: <message>`` on the ``name`` logger, without a traceback.
    """
    import rclpy  # noqa: PLC0415 - keep module import cheap for tools that only read constants
    from rclpy.exceptions import ParameterException  # noqa: PLC0415
    from rclpy.executors import ExternalShutdownException  # noqa: PLC0415
    from rclpy.signals import SignalHandlerOptions  # noqa: PLC0415

    from pardyn.errors import PardynError  # noqa: PLC0415
    from pardyn.nodes.stopping import BUILDING, SPINNING, STOPPING, stop_signals  # noqa: PLC0415

    stop = stop_signals()  # before anything slow: a signal from now on is a request
    from pardyn.nodes.realtime import CollectorControl, own_process  # noqa: PLC0415

    give_back = own_process()  # a node executable's process: process-wide real-time measures may apply
    one_blas_thread()
    # rclpy's own handlers would raise KeyboardInterrupt from inside its callbacks: not installed
    rclpy.init(args=None if args is None else list(args), signal_handler_options=SignalHandlerOptions.NO)
    node = None
    executor = None
    collector = CollectorControl()
    try:
        if stop.requested:
            return _stopped(name, stop, "before its node was built: nothing ran")
        stop.enter(BUILDING)
        try:
            node = factory()
        except (PardynError, ParameterException, OSError) as error:
            rclpy.logging.get_logger(name).fatal(f"cannot start: {type(error).__name__}: {error}")
            return 1
        executor = make_executor(message_info=needs_message_info(node))
        executor.add_node(node)
        stop.enter(SPINNING)
        node.get_logger().info(stop.start_up())  # bench/start_order.py reads it
        collector.start()  # the collector out of the callbacks (pardyn.nodes.realtime): run between them
        # spin_once in a loop, not spin(): the events executor of rclpy 9.1's wheels never returns from
        # spin() nor runs a callback in it (measured), while spin_once works; the stop is looked at
        # between callbacks, at least every 0.1 s
        while not stop.requested and rclpy.ok() and node_failure(node) is None:
            executor.spin_once(timeout_sec=0.1)
            collector.tick()
    except ExternalShutdownException:
        pass
    finally:
        stop.enter(STOPPING)
        collector.restore()
        # a bounded stop: a process still here CLEANUP_TIMEOUT_S later prints every thread's stack and exits 1,
        # before launch's SIGKILL would end it silently
        faulthandler.dump_traceback_later(CLEANUP_TIMEOUT_S, exit=True)
        hung = f"rclpy's node destruction did not return within {RELEASE_WAIT_S + HELD_EXIT_S:.2f} s: process ended"
        line = stop.stop_line(name, hung, RELEASE_WAIT_S + HELD_EXIT_S) if stop.requested else None
        # a lock-holding hang ends the process with exit 0: not for a node that failed (exit 1, the faulthandler's)
        destroyed = release_rclpy(executor, node, rclpy.try_shutdown,
                                  exit_if_held=stop.owns_process and node_failure(node) is None, held_line=line)
        faulthandler.cancel_dump_traceback_later()
        give_back()
        stop.ignore_further()  # the process ends: see StopSignals.ignore_further
    if node_failure(node) is not None:
        return 1  # the node logged what failed
    if not destroyed:
        what = f"rclpy's node destruction did not return within {RELEASE_WAIT_S} s: left to the process's exit"
        return _stopped(name, stop, what) if stop.requested else 0
    return _stopped(name, stop, "node destroyed") if stop.requested else 0


def release_rclpy(executor, node, shutdown: Callable[[], Any], wait_s: float | None = None,
                  *, exit_if_held: bool = False, held_line: str | None = None) -> bool:
    """Shut ``executor`` down, destroy ``node`` and call ``shutdown`` (rclpy's), waiting at most ``wait_s`` for them.

    rclpy's ``destroy_node`` has hung in its C++ teardown (twice in a few
    hundred stops under two pytest-xdist workers: 8 s in
    ``TypeDescriptionService.destroy``; once in a serial run of the suite, in the
    node handle's ``destroy_when_not_in_use``), which broke the 1 s stop promise and
    ended the node with exit 1. The teardown runs on a daemon thread; past
    ``wait_s`` (default :data:`RELEASE_WAIT_S`) the node goes on to its exit
    (the console script ends with ``os._exit``, which the operating system
    cleans up after) and this returns False.

    That wait needs the interpreter lock, which the hung C++ call may hold. A node executable
    (``exit_if_held``) therefore also arms a :class:`~pardyn.nodes.stopping.LockFreeExit`
    :data:`HELD_EXIT_S` after the wait: the process ends with exit 0 and ``held_line`` (its stop line, if
    any) even if no Python thread runs again.
    """
    wait = RELEASE_WAIT_S if wait_s is None else wait_s
    held_exit = None
    if exit_if_held:
        from pardyn.nodes.stopping import LockFreeExit  # noqa: PLC0415

        held_exit = LockFreeExit()
        held_exit.arm(wait + HELD_EXIT_S, held_line)

    def release() -> None:
        if executor is not None:
            executor.shutdown(timeout_sec=wait)
        if node is not None:
            node.destroy_node()
        shutdown()

    worker = threading.Thread(target=release, name="rclpy release", daemon=True)
    worker.start()
    worker.join(wait)
    if held_exit is not None:
        held_exit.cancel()  # this thread runs again: the caller says what happened and exits
    return not worker.is_alive()


def _stopped(name: str, stop, what: str) -> int:
    """Exit code 0 and the last line of a node stopped by signals, on stderr (rclpy's logging is shut down by then)."""
    stop.write_stop_line(name, what)
    return 0
