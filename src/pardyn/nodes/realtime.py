"""The 1 kHz path of a node on its own thread, as ros2_control's realtime_tools sets up a controller's loop.

Where the time of a 1 kHz answer went (issue 34, the hardware bringup in one process driven by another
process at 1 kHz): rclpy's executors dispatch every callback of every node of the process in turn, so a
state waited behind the closure solver's answer to the previous one and behind the executor's own
bookkeeping; Python's collector ran in whatever callback crossed its threshold; the process ran at the
default priority, so a batch job at nice 19 still took the cores for whole scheduler slices.
What this module provides, each the measure realtime_tools takes for a C++ controller:

* :class:`StateLoop`: one subscription served by a dedicated thread that waits on an rcl wait set (the
  subscription and a guard condition to stop it) and calls the callback with each message it takes. The
  subscription is created on the node's handle but not registered with the node, so no executor sees
  it: the node's other callbacks (timers, services, other subscriptions) stay on the executor, and a
  state never waits for them;
* :func:`raise_priority`: ``SCHED_FIFO`` for the calling thread (``os.sched_setscheduler``; Linux applies
  it to the thread), so the state thread preempts every normal and niced process the moment a state
  arrives; and ``sys.setswitchinterval`` lowered so that it gets the interpreter lock within
  :data:`SWITCH_INTERVAL_S` from a Python thread of the same process;
* :func:`lock_memory`: ``mlockall(MCL_CURRENT | MCL_FUTURE)`` (libc, via ctypes): no page of the
  process is paged out or faulted in on the loop's path;
* :class:`CollectorControl`: Python's cyclic collector frozen after start-up (``gc.freeze``: the objects of
  the imports and the models leave the collector's generations) and disabled, then run by the process's
  main loop, between callbacks, at a fixed period (:data:`COLLECT_PERIOD_S`), never on the state thread.

Each step that the process is not permitted (no ``CAP_SYS_NICE``/``RLIMIT_RTPRIO`` for the priority, no
``CAP_IPC_LOCK`` or a low ``RLIMIT_MEMLOCK`` for the lock) falls back to the default and says so in one
info line (:func:`realtime_setup`): the thread, the collector control and the preallocated messages
apply in every case.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["ANSWER_GATE", "COLLECT_PERIOD_S", "SWITCH_INTERVAL_S", "AnswerGate", "CollectorControl",
           "PolledSubscription", "StateLoop", "lock_memory",
           "node_realtime_setup", "own_process", "raise_priority", "realtime_setup"]

SWITCH_INTERVAL_S = 2e-5
"""s: the longest a Python thread of the process keeps the interpreter lock once the state thread waits for
it (CPython's default, 5 ms, is five control periods)."""

COLLECT_PERIOD_S = 1.0
"""s: the period of the young generations' collection run by the main loop (:class:`CollectorControl`)."""

FULL_COLLECT_EVERY = 30
"""A full collection every this many young ones (objects created after start-up that survive)."""

MCL_CURRENT, MCL_FUTURE = 1, 2  # <sys/mman.h>


def raise_priority(priority: int) -> tuple[bool, str]:
    """``SCHED_FIFO`` at ``priority`` (1-99) for the calling thread; whether it was set and a phrase saying so.

    ``priority`` 0 asks for nothing (normal scheduling). Not permitted (an unprivileged user without
    ``RLIMIT_RTPRIO``, a container without ``CAP_SYS_NICE``, a cgroup without real-time budget): the
    thread keeps the normal policy.
    """
    if priority <= 0:
        return False, "normal scheduling (realtime_priority 0)"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as error:  # AttributeError: not Linux
        reason = getattr(error, "strerror", None) or str(error)
        return False, f"SCHED_FIFO priority {priority} not permitted ({reason}): normal scheduling"
    return True, f"SCHED_FIFO priority {priority}"


def lock_memory(enabled: bool = True) -> tuple[bool, str]:
    """``mlockall(MCL_CURRENT | MCL_FUTURE)`` for the process; whether it was locked and a phrase saying so."""
    if not enabled:
        return False, "memory not locked (lock_memory false)"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        failed = libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0
    except (OSError, AttributeError) as error:  # no libc symbol: not Linux
        return False, f"memory not locked ({error})"
    if failed:
        return False, f"memory not locked (mlockall: {os.strerror(ctypes.get_errno())})"
    return True, "memory locked (mlockall)"


_process_owned = False


def own_process() -> Callable[[], None]:
    """Say that this process is the node executables' (:func:`pardyn.nodes.common.run_node`, the bringup's
    process): the process-wide measures of :func:`node_realtime_setup` (memory lock, switch interval) may then
    apply. A node built inside another program (a test, a notebook, a user's script) leaves them to it.

    Returns what gives the process back (the flag, the switch interval, the memory lock), called where the node
    executable's run ends: a program that ran one in-process (a test of ``pardyn bringup``) is itself again."""
    global _process_owned  # noqa: PLW0603 - one flag per process
    previous_owned, previous_interval = _process_owned, sys.getswitchinterval()
    _process_owned = True

    def give_back() -> None:
        global _process_owned  # noqa: PLW0603
        _process_owned = previous_owned
        sys.setswitchinterval(previous_interval)
        if not previous_owned:
            _unlock_memory()

    return give_back


def _unlock_memory() -> None:
    """``munlockall()``: a no-op where nothing is locked or there is no libc symbol."""
    try:
        ctypes.CDLL(None, use_errno=True).munlockall()
    except (OSError, AttributeError):
        pass


def node_realtime_setup(priority: int, memory: bool) -> tuple[bool, str]:
    """:func:`realtime_setup` in a process the node executables own (:func:`own_process`); elsewhere only the
    calling thread's priority, since the memory lock and the switch interval would change the whole host
    program (before: a controller built in a test left every later test of that process locked in memory and
    switching threads every 20 us)."""
    if _process_owned:
        return realtime_setup(priority, memory)
    prioritised, scheduling = raise_priority(priority)
    return prioritised or priority <= 0, f"real-time: {scheduling}; memory lock and switch interval left to the " \
        "program the node was built in (they are set only where a node executable owns the process)"


def realtime_setup(priority: int, memory: bool) -> tuple[bool, str]:
    """The calling thread's priority, the process's memory lock and the switch interval; whether every
    measure asked for applied, and the one line a node logs (``real-time: ...``)."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
    prioritised, scheduling = raise_priority(priority)
    locked, locking = lock_memory(memory)
    complete = (prioritised or priority <= 0) and (locked or not memory)
    fallback = "" if complete else "; the state thread, the collector control and the preallocated messages " \
        "still apply (README: the 1 kHz loop)"
    return complete, f"real-time: {scheduling}, {locking}, interpreter switch interval " \
        f"{sys.getswitchinterval() * 1e6:.0f} us{fallback}"


class AnswerGate:
    """Where a node's heavy periodic work goes in a process whose state thread answers at 1 kHz: right after
    an answer, in the gap before the next state.

    Python threads of one process share one interpreter lock, handed over every switch interval: a state
    that arrives while another node's callback computes (the closure solver's 350 us solve) has its answer
    stretched by as much, whatever the state thread's priority. A callback that calls :meth:`wait` first
    runs just after an answer instead (a period of 1 ms, an answer of ~0.3 ms: it has ~0.7 ms before the next
    state). Without a running state thread :meth:`wait` returns at once."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._answers = 0
        self.loops = 0  # state threads running in this process

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """A state thread runs in this process while the ``with`` block does."""
        with self._condition:
            self.loops += 1
        try:
            yield
        finally:
            with self._condition:
                self.loops -= 1

    def answered(self) -> None:
        """A state thread finished an answer (called by :class:`StateLoop`)."""
        with self._condition:
            self._answers += 1
            self._condition.notify_all()

    def wait(self, timeout_s: float = 2e-3) -> bool:
        """Block until the next answer of a state thread of this process, at most ``timeout_s``; whether one came
        (False at once without a running state thread)."""
        if self.loops <= 0:
            return False
        with self._condition:
            seen = self._answers
            return self._condition.wait_for(lambda: self._answers != seen, timeout_s)


ANSWER_GATE = AnswerGate()
"""The process's gate (:class:`AnswerGate`): every :class:`StateLoop` says its answers to it."""


class StateLoop:
    """One subscription of ``node`` served by its own thread (module docstring); created stopped.

    ``callback(message)`` (``message_info``: ``callback(message, info)``, the info as rclpy gives it to a
    subscription callback that takes it, ``publisher_gid`` among it; ``raw``: the message's serialized bytes,
    :mod:`pardyn.nodes.wire`) runs on that thread for every message taken; it must not raise (it is the
    node's loop: an exception is logged once per kind and the loop goes on). :meth:`start` starts the
    thread with ``setup()`` run on it first (the priority: it applies to the calling thread);
    :meth:`stop` ends it (from any thread) and :meth:`destroy` releases the subscription.

    Attributes ``topic_name`` and ``qos_profile``: as a :class:`rclpy.subscription.Subscription` has them.
    """

    def __init__(self, node, msg_type: type, topic: str, qos_profile, callback: Callable[..., None],
                 name: str = "state loop", *, message_info: bool = False, raw: bool = False) -> None:
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy  # noqa: PLC0415
        from rclpy.type_support import check_is_valid_msg_type  # noqa: PLC0415

        check_is_valid_msg_type(msg_type)  # imports the type support
        self._rclpy, self._node, self._msg_type, self._callback = _rclpy, node, msg_type, callback
        with node.handle:  # on the node, not in node.subscriptions: no executor waits on it
            self._handle = _rclpy.Subscription(node.handle, msg_type, topic, qos_profile.get_c_qos_profile(), None)
        self._guard = _rclpy.GuardCondition(node.context.handle)
        self.topic_name: str = self._handle.get_topic_name()
        self.qos_profile = qos_profile
        self._name = name
        self._message_info = message_info  # callback(message, info): the publisher's gid among the info
        self._raw = raw  # callback(bytes): the serialized message, not converted to Python (pardyn.nodes.wire)
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.setup_result: Any = None
        self.taken = 0
        from pardyn.control.timing import DurationLog  # noqa: PLC0415

        self.waited = DurationLog()  # from the middleware's reception of a message to its callback's start
        self.busy = DurationLog()  # the callback
        # the first of them in two: reception -> the wait's return with the interpreter lock held again, and the
        # take (the message converted to Python)
        self.woken = DurationLog()
        self.take = DurationLog()

    def start(self, setup: Callable[[], Any] | None = None) -> None:
        """Start the thread; ``setup()`` runs on it before the first wait (its result: ``setup_result``)."""
        ready = threading.Event()

        def run() -> None:
            self.setup_result = setup() if setup is not None else None
            ready.set()
            with ANSWER_GATE.running():
                self._serve()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        ready.wait(5.0)

    def _serve(self) -> None:
        rclpy, handle, guard, msg_type, callback = self._rclpy, self._handle, self._guard, self._msg_type, self._callback
        with_info, raw = self._message_info, self._raw
        context, waited, busy, woken, take = self._node.context, self.waited, self.busy, self.woken, self.take
        wait_set = rclpy.WaitSet(1, 1, 0, 0, 0, 0, context.handle)
        gate = ANSWER_GATE
        reported: set[str] = set()
        while not self._stopping and context.ok():
            wait_set.clear_entities()
            wait_set.add_subscription(handle)
            wait_set.add_guard_condition(guard)
            wait_set.wait(100_000_000)  # ns: the context's end is looked at at least every 0.1 s
            woken_ns = time.time_ns()  # the wait returned and this thread holds the interpreter lock again
            if self._stopping:
                break
            taken = handle.take_message(msg_type, raw)
            if taken is None:
                continue
            self.taken += 1
            begin_ns = time.time_ns()  # the middleware stamps the reception on the system clock
            received_ns = taken[1]["received_timestamp"]
            waited.add((begin_ns - received_ns) * 1e-9)
            woken.add((woken_ns - received_ns) * 1e-9)
            take.add((begin_ns - woken_ns) * 1e-9)
            try:
                if with_info:
                    callback(taken[0], taken[1])
                else:
                    callback(taken[0])
            except Exception as error:  # noqa: BLE001 - a bug on one message must not end the loop
                kind = type(error).__name__
                if kind not in reported:
                    reported.add(kind)
                    self._node.get_logger().error(f"{self._name}: {kind}: {error} (said once per kind)")
            busy.add((time.time_ns() - begin_ns) * 1e-9)
            gate.answered()

    def describe(self) -> str:
        """The thread's figures: reception -> callback, and the callback, p50/p99/max."""
        return (f"state thread: reception -> callback {self.waited.describe('us')} (reception -> woken "
                f"{self.woken.describe('us')}, take {self.take.describe('us')}); callback {self.busy.describe('us')}")

    def stop(self, timeout_s: float = 1.0) -> None:
        """End the thread (it finishes the callback it is in), waiting at most ``timeout_s``."""
        self._stopping = True
        self._guard.trigger_guard_condition()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def destroy(self) -> None:
        """Stop the thread and release the subscription."""
        self.stop()
        if self._thread is None or not self._thread.is_alive():
            self._handle.destroy_when_not_in_use()
            self._guard.destroy_when_not_in_use()


class PolledSubscription:
    """A keep-last subscription of ``node`` that no executor serves: :meth:`take` returns the newest message
    (or None), called from a timer at the rate the node needs it.

    A node that needs every tenth state (the closure solver at ``max_rate``) but subscribes normally still has
    each of the thousand states a second taken, converted to Python and dispatched on the executor's thread, at
    the moment the controller's state thread answers the same state in the same process: the two threads then
    share the interpreter lock on every state. Polled, the executor wakes only at the node's rate.

    Attributes ``topic_name`` and ``qos_profile``: as a :class:`rclpy.subscription.Subscription` has them."""

    def __init__(self, node, msg_type: type, topic: str, qos_profile) -> None:
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy  # noqa: PLC0415
        from rclpy.type_support import check_is_valid_msg_type  # noqa: PLC0415

        check_is_valid_msg_type(msg_type)
        self._msg_type = msg_type
        with node.handle:  # on the node, not in node.subscriptions: no executor waits on it
            self._handle = _rclpy.Subscription(node.handle, msg_type, topic, qos_profile.get_c_qos_profile(), None)
        self.topic_name: str = self._handle.get_topic_name()
        self.qos_profile = qos_profile
        self.taken = 0

    def take(self):
        """The newest message received since the last call, or None (older ones, beyond the depth, are gone)."""
        newest = None
        while (taken := self._handle.take_message(self._msg_type, False)) is not None:
            newest = taken[0]
        if newest is not None:
            self.taken += 1
        return newest

    def destroy(self) -> None:
        """Release the subscription."""
        self._handle.destroy_when_not_in_use()


class CollectorControl:
    """Python's cyclic collector out of the callbacks' way (module docstring): :meth:`start` once the nodes
    are built, :meth:`tick` from the main loop between callbacks, :meth:`restore` at the end."""

    def __init__(self, period_s: float = COLLECT_PERIOD_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.period_s, self._clock = period_s, clock
        self._was_enabled = gc.isenabled()
        self._next = 0.0
        self.collections = 0
        self.longest_s = 0.0

    def start(self) -> CollectorControl:
        """Collect what start-up left, freeze the rest (out of every later collection), disable the automatic collector."""
        gc.collect()
        gc.freeze()
        gc.disable()
        self._next = self._clock() + self.period_s
        return self

    def tick(self) -> None:
        """Collect the young generations if a period has passed since the last time (a full one now and then)."""
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self.period_s
        begin = time.perf_counter()
        gc.collect(2 if self.collections % FULL_COLLECT_EVERY == FULL_COLLECT_EVERY - 1 else 1)
        self.longest_s = max(self.longest_s, time.perf_counter() - begin)
        self.collections += 1

    def restore(self) -> None:
        """The collector as it was before :meth:`start` (the frozen objects back in its generations)."""
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def describe(self) -> str:
        return (f"{self.collections} collections between callbacks (every {self.period_s:g} s), longest "
                f"{self.longest_s * 1e3:.2f} ms")
