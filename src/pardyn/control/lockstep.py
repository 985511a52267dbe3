"""The lockstep protocol between a simulated robot and its controller, without ROS.

The ``sim`` and ``controller`` nodes (:mod:`pardyn.nodes.sim`,
:mod:`pardyn.nodes.controller`) are adapters around the classes here: each
callback hands the protocol what arrived and the wall-clock time, the protocol
says what to do (apply, drop, re-send, stall, answer again, command zero) and
keeps the counts of the summaries. Times are seconds of a monotonic clock
(``time.monotonic()``), stamps integer nanoseconds; nothing here reads a clock.

**Tags.** State ``k`` is stamped at exactly ``t_k = k * period`` ns of simulated
time; a command answers it with the tag :func:`step_of_stamp` ``= round(t_k /
period) mod 2^32`` in ``Float64MultiArray.layout.data_offset`` (a uint32).

**Sim side** (:class:`LockstepSim`). Lockstep: the command tagged with the
current step advances the plant one period; a tag at most ``stale_window`` steps
behind is the answer to a re-sent state (a *duplicate*, dropped silently); any
other tag is *rejected* (the rates disagree, a foreign controller). While it
waits the sim re-sends the current state once ``watchdog_s`` has passed since
the last send (the first state can be lost to discovery); once running, a step
waited on for ``stall_timeout_s`` is taken with zero torque (a *stall*): the
loop never waits forever. Free-running: each tick applies the latest command
if it is at most ``watchdog_s`` old, else zero torque.

**Controller side** (:class:`LockstepAnswer`). A state with the stamp and
positions of the last one answered is a re-send: it gets the same command
again without the law being called (stateful laws advance once per period).
Stamp gaps over 1.5 periods count the states never seen. Without states for
``watchdog_s`` the controller commands zero torque, tagged one *before* the last
answered state: an answer to no state, which a lockstep sim drops as a
duplicate (tagged like the last answer it could be taken for the answer to a
re-sent state 0).

**Start** (:class:`StartGate`). With nodes to wait for, the sim publishes
state 0 (and simulated time starts) only once each is up, whatever the order
in which their processes come up: a node is up when the graph lists a topic of
its own (not ``/rosout``, ``/parameter_events`` nor the clock, which rclpy
creates before the node's construction; pardyn's nodes create their endpoints
at its end), and a node that subscribes the sim's states is up only once the
state publisher is matched with every subscription the graph lists on it (a
recorder would miss the first states otherwise). After ``timeout_s`` it starts
without the missing ones.

**Command sources** (:class:`CommandSources`). The sim accepts commands only
from the nodes it names, identifying the publisher of each message by its gid
through the ROS graph. The graph can list a publisher before it knows its
node's name (the DDS endpoint is discovered before the node's name arrives):
such a publisher is *unresolved*, its commands are rejected, and it is looked
up again at its next message, so the verdict is never final before the graph
names the node (issue 27: one launch in five never moved).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = [
    "SEQUENCE_MODULUS",
    "STALE_WINDOW",
    "CommandSources",
    "LockstepAnswer",
    "LockstepSim",
    "SourceEvent",
    "StartGate",
    "step_of_stamp",
]

SEQUENCE_MODULUS = 2**32  # layout.data_offset is a uint32
STALE_WINDOW = 1000  # older tags within this many steps are duplicates, dropped silently


def step_of_stamp(stamp_ns: int, period: int) -> int:
    """The lockstep tag of a state stamped ``stamp_ns``: ``round(stamp / period) mod 2^32``.

    The sim stamps state ``k`` at exactly ``k * period`` ns of simulated time,
    so the tag is ``k`` (modulo the uint32 range of ``layout.data_offset``).
    """
    return int(round(stamp_ns / period)) % SEQUENCE_MODULUS


# --------------------------------------------------------------------------- sim
@dataclass
class LockstepSim:
    """The sim's side of the protocol: which command advances the plant, when to re-send, stall, or hold.

    The sim calls :meth:`sent` when it publishes state ``step`` (``resend=True``
    for a re-send), :meth:`command` for each checked command of the lockstep
    loop, :meth:`watch` from its timer, :meth:`latest` / :meth:`tick` in the
    free-running mode, and :meth:`advanced` after each plant step.

    Args:
        watchdog_s: lockstep: wall time without a send before the state is re-sent;
            free-running: age of the latest command beyond which zero torque is applied (s).
        stall_timeout_s: lockstep: wall time waited for the command of one step
            before it is taken with zero torque (s).
        stale_window: tags at most this many steps behind are duplicates.
    """

    watchdog_s: float
    stall_timeout_s: float = float("inf")
    stale_window: int = STALE_WINDOW
    step: int = 0  # index k of the state last published
    armed: bool = False  # lockstep: a command was applied; free-running: one was received
    armed_at_s: float | None = None
    commands_applied: int = 0
    stalls: int = 0
    duplicates: int = 0
    resends: int = 0
    rejected_tags: int = 0
    step_sent_s: float = 0.0  # when state `step` was first sent (re-sends do not reset it)
    last_sent_s: float = 0.0
    _latest: object = None  # free-running: the latest valid command and its tag and reception time
    _latest_tag: int | None = None
    _latest_s: float = -float("inf")
    zero_since_s: float | None = None  # free-running: zero torque applied since (watchdog)

    @property
    def expected_tag(self) -> int:
        return self.step % SEQUENCE_MODULUS

    def sent(self, now_s: float, *, resend: bool = False) -> None:
        """State ``step`` went out at ``now_s`` (first time, or again)."""
        if resend:
            self.resends += 1
        else:
            self.step_sent_s = now_s
        self.last_sent_s = now_s

    def arm(self, now_s: float) -> bool:
        """The loop runs from ``now_s``; whether this is the first time."""
        if self.armed:
            return False
        self.armed, self.armed_at_s = True, now_s
        return True

    def command(self, tag: int) -> str:
        """Lockstep verdict on a checked command tagged ``tag``: ``"apply"``, ``"duplicate"`` or ``"rejected"``.

        ``"apply"``: the answer to the current step (the caller arms, counts it
        with :meth:`applied` and steps the plant); ``"duplicate"``: an answer to a
        re-sent earlier state, dropped; ``"rejected"``: any other tag.
        """
        behind = (self.expected_tag - int(tag)) % SEQUENCE_MODULUS
        if behind == 0:
            return "apply"
        if behind <= self.stale_window:
            self.duplicates += 1
            return "duplicate"
        self.rejected_tags += 1
        return "rejected"

    def applied(self) -> None:
        """A controller's command was applied over the current step."""
        self.commands_applied += 1

    def advanced(self) -> None:
        """The plant stepped: the next state is ``step + 1``."""
        self.step += 1

    def watch(self, now_s: float) -> tuple[str, float]:
        """Lockstep timer: ``("stall", waited_s)``, ``("resend", waited_s)`` or ``("wait", waited_s)``.

        ``stall``: armed and the current step waited ``>= stall_timeout_s`` since it was
        first sent: advance with zero torque (counted here). ``resend``: ``>= watchdog_s``
        since the last send: send the state again (counted by :meth:`sent`).
        """
        stalled = now_s - self.step_sent_s
        if self.armed and stalled >= self.stall_timeout_s:
            self.stalls += 1
            return "stall", stalled
        waited = now_s - self.last_sent_s
        return ("resend" if waited >= self.watchdog_s else "wait"), waited

    def latest(self, tau, tag: int, now_s: float) -> None:
        """Free-running: a checked command (any tag) received at ``now_s``."""
        self._latest, self._latest_tag, self._latest_s = tau, int(tag), now_s

    def tick(self, now_s: float) -> tuple[object, int | None, str]:
        """Free-running tick: ``(tau or None for zero torque, tag, event)``.

        ``event``: ``"command"`` (the latest is fresh), ``"back"`` (fresh again after
        zero torque), ``"waiting"`` (nothing received yet), ``"zero"`` (the latest is
        older than ``watchdog_s``: zero torque).
        """
        if self._latest is not None and now_s - self._latest_s <= self.watchdog_s:
            back = self.zero_since_s is not None
            self.zero_since_s = None
            self.arm(now_s)
            self.commands_applied += 1
            return self._latest, self._latest_tag, "back" if back else "command"
        if not self.armed:
            return None, None, "waiting"
        if self.zero_since_s is None:
            self.zero_since_s = now_s
        return None, None, "zero"

    def silence_s(self, now_s: float) -> float:
        """Free-running: seconds since the latest command."""
        return now_s - self._latest_s


# --------------------------------------------------------------------------- controller
@dataclass
class LockstepAnswer:
    """The controller's side: tags, re-sent states, states never seen, the watchdog.

    Args:
        period_ns: the control period (ns), the sim's (``round(1e9 / rate)``).
        watchdog_s: wall time without a state before zero torque is commanded (s).
    """

    period_ns: int
    watchdog_s: float
    answered: int = 0
    missed: int = 0  # states never seen: stamp gaps over 1.5 periods
    tripped: bool = False  # the watchdog fired and no state came since
    last_tag: int = 0
    last_state_s: float | None = None
    _last_answer: tuple[int, object] | None = None  # (stamp ns, tau) of the last command
    _last_stamp_ns: int | None = None

    def tag(self, stamp_ns: int) -> int:
        return step_of_stamp(stamp_ns, self.period_ns)

    def repeat(self, stamp_ns: int, resend: bool, now_s: float) -> tuple[object, int] | None:
        """``(tau, tag)`` of the last answer when this state is its re-send (``resend``: same stamp and
        positions, :class:`pardyn.control.joint_state.JointStateFilter`), else None: call the law."""
        if resend and self._last_answer is not None and self._last_answer[0] == stamp_ns:
            self.last_state_s = now_s
            return self._last_answer[1], self.last_tag
        return None

    def skipped(self, stamp_ns: int) -> int:
        """States skipped since the previous one (a stamp gap over 1.5 periods); counted in ``missed``."""
        last, self._last_stamp_ns = self._last_stamp_ns, stamp_ns
        if last is None or stamp_ns <= last:
            return 0
        skipped = round((stamp_ns - last) / self.period_ns) - 1
        if skipped >= 1 and stamp_ns - last > 1.5 * self.period_ns:
            self.missed += skipped
            return skipped
        return 0

    def answer(self, stamp_ns: int, tau, now_s: float) -> tuple[int, bool]:
        """The command ``tau`` answers the state stamped ``stamp_ns``: ``(its tag, whether states came back)``."""
        tag = self.tag(stamp_ns)
        self.last_tag, self._last_answer, self.last_state_s = tag, (stamp_ns, tau), now_s
        self.answered += 1
        back, self.tripped = self.tripped, False
        return tag, back

    def watchdog(self, now_s: float) -> tuple[float, int] | None:
        """``(silence s, tag of the zero command)`` when states have stopped for over ``watchdog_s``, else None.

        Under ``use_sim_time`` a state can be answered before the first ``/clock`` arrives (its time then reads 0);
        its silence is counted from the first reading of the clock, not from zero."""
        if self.last_state_s is None:
            return None
        if self.last_state_s == 0.0 < now_s:  # answered before the first /clock (ROS time reads 0 until then)
            self.last_state_s = now_s  # its silence counts from the clock's start
            return None
        silent = now_s - self.last_state_s
        if silent <= self.watchdog_s:
            return None
        self.tripped = True
        return silent, (self.last_tag - 1) % SEQUENCE_MODULUS


# --------------------------------------------------------------------------- command sources
@dataclass(frozen=True)
class SourceEvent:
    """Something :class:`CommandSources` says once: ``kind`` is ``"foreign"`` (a named node not in the
    sources: its commands are rejected), ``"unresolved"`` (the graph does not name the publisher's node yet:
    rejected until it does) or ``"resolved"`` (a publisher first unresolved is now named; ``held`` of its
    commands were rejected meanwhile; ``accepted`` says whether it is a source)."""

    kind: str
    node: str | None
    held: int = 0
    accepted: bool = False


@dataclass
class _Publisher:
    node: str | None = None  # fully qualified, None while the graph does not name it
    rejected: int = 0  # commands rejected
    held: int = 0  # of which while unresolved
    said: str = ""  # the last SourceEvent kind reported for it
    checked_s: float = -float("inf")


@dataclass
class CommandSources:
    """Whether the publisher of a command is one of the named source nodes (see the module docstring).

    Args:
        sources: fully qualified node names accepted (``/ns/controller``).
        lookup: the graph's publishers of the command topic now, as ``(gid bytes, node)`` pairs, ``node``
            the fully qualified name or None when the graph does not name it yet.
        recheck_s: an unresolved publisher is looked up again at its next message once this long has
            passed since its last look-up (s): the graph changes on discovery, not per message.
    """

    sources: frozenset[str]
    lookup: Callable[[], Iterable[tuple[bytes, str | None]]]
    recheck_s: float = 0.02
    lookups: int = 0
    _publishers: dict[bytes, _Publisher] = field(default_factory=dict)

    def accepts(self, gid: bytes, now_s: float) -> tuple[str, SourceEvent | None]:
        """The verdict on a command of the publisher ``gid`` and what to say about it (once per publisher).

        The verdict is ``"accepted"``, ``"unresolved"`` (rejected: the graph does not name the
        publisher's node yet) or ``"foreign"`` (rejected: a node that is not a source).
        """
        publisher = self._publishers.get(gid)
        if publisher is None or (publisher.node is None and now_s - publisher.checked_s >= self.recheck_s):
            self._refresh(now_s)
            publisher = self._publishers.setdefault(gid, _Publisher(checked_s=now_s))
        if publisher.node is None:
            publisher.rejected += 1
            publisher.held += 1
            if publisher.said:
                return "unresolved", None
            publisher.said = "unresolved"
            return "unresolved", SourceEvent("unresolved", None)
        accepted = publisher.node in self.sources
        verdict = "accepted" if accepted else "foreign"
        if not accepted:
            publisher.rejected += 1
        if publisher.said == "unresolved":
            publisher.said = "resolved"
            return verdict, SourceEvent("resolved", publisher.node, publisher.held, accepted)
        if not accepted and not publisher.said:
            publisher.said = "foreign"
            return verdict, SourceEvent("foreign", publisher.node)
        return verdict, None

    def _refresh(self, now_s: float) -> None:
        self.lookups += 1
        for gid, node in self.lookup():
            publisher = self._publishers.setdefault(bytes(gid), _Publisher())
            publisher.checked_s = now_s
            if publisher.node is None and node is not None:
                publisher.node = node  # a gid's node never changes once named

    def rejected(self) -> dict[str, int]:
        """Commands rejected per publisher: ``{node or "unnamed publisher": count}`` (held ones included)."""
        counts: Counter[str] = Counter()
        for publisher in self._publishers.values():
            if publisher.rejected:
                counts[publisher.node or "unnamed publisher"] += publisher.rejected
        return dict(counts)

    def describe(self) -> str:
        """What was rejected and why, for a summary: ``"12 from /ns/controller before the graph named it"``."""
        parts = []
        for publisher in self._publishers.values():
            if publisher.held:
                parts.append(f"{publisher.held} from {publisher.node or 'a publisher'} before the graph named it")
            foreign = publisher.rejected - publisher.held
            if foreign:
                parts.append(f"{foreign} from {publisher.node} (not a command source)")
        return ", ".join(parts) or "none"


# --------------------------------------------------------------------------- start
@dataclass
class StartGate:
    """When the sim may publish state 0 (see the module docstring).

    Args:
        nodes: fully qualified names of the nodes to wait for.
        timeout_s: wall time after ``since_s`` when the sim starts without the missing ones (s).
        since_s: when the wait began (s, monotonic).
    """

    nodes: frozenset[str]
    timeout_s: float
    since_s: float

    def missing(self, up: Callable[[str], tuple[bool, bool]], matched: int, listed: int) -> list[str]:
        """The nodes not up yet, sorted.

        ``up(node)``: (whether the graph lists a topic of its own, whether it subscribes the sim's states);
        ``matched``: subscriptions matched with the state publisher; ``listed``: subscriptions of the state
        topic in the graph.
        """
        missing = []
        for node in sorted(self.nodes):
            present, subscribes = up(node)
            if not present or (subscribes and matched < listed):
                missing.append(node)
        return missing

    def verdict(self, missing: list[str], now_s: float) -> str:
        """``"open"`` (none missing), ``"timeout"`` (some missing after ``timeout_s``) or ``"wait"``."""
        if not missing:
            return "open"
        return "timeout" if now_s - self.since_s >= self.timeout_s else "wait"
