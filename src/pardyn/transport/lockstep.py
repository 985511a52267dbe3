"""The lockstep protocol between a simulated robot and its controller, without ROS (transport).

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

**The watchdog's clock under** ``use_sim_time``. The controller answers states on
its own thread while its ROS clock follows ``/clock`` on the executor thread: a
long callback there (a swap request reading its file) leaves the clock behind,
and the states answered meanwhile, dated by it, would look ``lag`` s older than
they are once ``/clock`` catches up (a zero command at step 787 of a lockstep
run, in two two-worker suite runs). So under ``sim_time`` a state is dated by its
stamp (simulated time, the clock's time base) when the stamp is ahead of the
clock by at most ``max_stamp_lead_s`` (a lag), else by the clock (a stamp of
another time base, zero, or behind: the clock is the only date); a state
answered before the first ``/clock`` (the clock reads 0) is dated by the
clock's first reading. Silence is the clock's time since that date: a lagging
clock can only shorten it, and when states stop it grows with simulated time.

Who may command the sim is :mod:`pardyn.transport.sources`; when it starts, :mod:`pardyn.transport.start_gate`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "SEQUENCE_MODULUS",
    "STALE_WINDOW",
    "LockstepAnswer",
    "LockstepSim",
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
        watchdog_s: time without a state before zero torque is commanded (s).
        sim_time: the times given are the node's ROS clock under ``use_sim_time`` (``/clock``), which can lag
            behind the states: a state is dated by its stamp when that is ahead of the clock by at most
            ``max_stamp_lead_s`` (see the module's docstring), else by the clock.
        max_stamp_lead_s: the largest lag of the clock behind a state's stamp taken as a lag; a stamp further
            ahead is of another time base and the clock dates the state.
    """

    period_ns: int
    watchdog_s: float
    sim_time: bool = False
    max_stamp_lead_s: float = 1.0
    answered: int = 0
    missed: int = 0  # states never seen: stamp gaps over 1.5 periods
    tripped: bool = False  # the watchdog fired and no state came since
    last_tag: int = 0
    last_state_s: float | None = None
    _last_answer: tuple[int, object] | None = None  # (stamp ns, tau) of the last command
    _last_stamp_ns: int | None = None
    _undated: bool = False  # the last state was answered before the clock started: dated by its first reading

    def tag(self, stamp_ns: int) -> int:
        return step_of_stamp(stamp_ns, self.period_ns)

    def arrival_s(self, stamp_ns: int, now_s: float) -> float | None:
        """When the state stamped ``stamp_ns``, answered at ``now_s``, came on the watchdog's clock; None before
        the clock started (it reads 0 until the first ``/clock``): dated by the clock's first reading."""
        if now_s <= 0.0:
            return None
        if self.sim_time and now_s < stamp_ns * 1e-9 <= now_s + self.max_stamp_lead_s:
            return stamp_ns * 1e-9  # the clock lags behind the states: the stamp is the later, true time
        return now_s

    def _arrived(self, stamp_ns: int, now_s: float) -> None:
        arrival = self.arrival_s(stamp_ns, now_s)
        self._undated = arrival is None
        self.last_state_s = 0.0 if arrival is None else arrival

    def repeat(self, stamp_ns: int, resend: bool, now_s: float) -> tuple[object, int] | None:
        """``(tau, tag)`` of the last answer when this state is its re-send (``resend``: same stamp and
        positions, :class:`pardyn.control.joint_state.JointStateFilter`), else None: call the law."""
        if resend and self._last_answer is not None and self._last_answer[0] == stamp_ns:
            self._arrived(stamp_ns, now_s)
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
        self.last_tag, self._last_answer = tag, (stamp_ns, tau)
        self._arrived(stamp_ns, now_s)
        self.answered += 1
        back, self.tripped = self.tripped, False
        return tag, back

    def watchdog(self, now_s: float) -> tuple[float, int] | None:
        """``(silence s, tag of the zero command)`` when states have stopped for over ``watchdog_s``, else None.

        Under ``use_sim_time`` a state can be answered before the first ``/clock`` arrives (its time then reads 0);
        its silence is counted from the first reading of the clock, not from zero."""
        if self.last_state_s is None:
            return None
        if self._undated:  # answered before the first /clock (ROS time reads 0 until then)
            if now_s > 0.0:
                self.last_state_s, self._undated = now_s, False  # its silence counts from the clock's start
            return None
        silent = now_s - self.last_state_s
        if silent <= self.watchdog_s:
            return None
        self.tripped = True
        return silent, (self.last_tag - 1) % SEQUENCE_MODULUS
