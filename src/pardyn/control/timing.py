"""Timing of a control loop, measured where it happens: durations and state -> command latencies.

A 1 kHz loop is judged by the tail of its timings, not by their mean: these
recorders keep the last ``capacity`` values in a preallocated ring (no
allocation per sample, O(1) per record) and give percentiles on demand.

* :class:`DurationLog`: durations (s) of one kind of event (the controller's
  law, a callback);
* :class:`StepLatency`: for a loop whose states are numbered ``k`` and whose
  commands carry the number of the state they answer (the lockstep tag of
  :mod:`pardyn.nodes.sim`), the wall time from sending state ``k`` to
  receiving its command, and the share of periods that ran on the command of
  the state just before them (``fresh``) rather than an older one;
* :class:`RealTimeRate`: whether a free-running loop keeps its rate over
  windows of wall time (a simulation whose period's work exceeds the period
  runs behind real time).

The nodes print them in their summaries; ``bench/loop.py`` reads them there.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DurationLog", "RealTimeRate", "StepLatency"]


class DurationLog:
    """The last ``capacity`` durations (s) of an event; percentiles over them."""

    def __init__(self, capacity: int = 1 << 16) -> None:
        self._values = np.zeros(capacity)
        self.count = 0  # values recorded since the start (the ring keeps the last `capacity`)

    def add(self, seconds: float) -> None:
        self._values[self.count % self._values.size] = seconds
        self.count += 1

    @property
    def values(self) -> np.ndarray:
        """The kept durations (s), oldest first when the ring has wrapped, else in order."""
        n = min(self.count, self._values.size)
        if self.count <= self._values.size:
            return self._values[:n].copy()
        start = self.count % self._values.size
        return np.concatenate((self._values[start:], self._values[:start]))

    def percentiles(self, levels=(50.0, 99.0)) -> np.ndarray:
        """The percentiles ``levels`` (s) of the kept durations; NaN without any."""
        values = self.values
        return np.percentile(values, levels) if values.size else np.full(len(levels), np.nan)

    def describe(self, unit: str = "us") -> str:
        """``p50 12.3 p99 45.6 max 78.9 us (1000 samples)``, in ``us`` or ``ms``."""
        values = self.values
        if values.size == 0:
            return "no samples"
        scale = {"us": 1e6, "ms": 1e3}[unit]
        p50, p99 = np.percentile(values, (50.0, 99.0)) * scale
        return f"p50 {p50:.3g} p99 {p99:.3g} max {values.max() * scale:.3g} {unit} ({self.count} samples)"


class StepLatency:
    """Wall time from sending state ``k`` to receiving the command tagged ``k``; freshness of applied commands.

    ``sent(k, t)`` when state ``k`` goes out, ``answered(k, t)`` when a command
    tagged ``k`` arrives (the first one counts; repeats and unknown tags are
    ignored), ``applied(k, tag)`` when the period after state ``k`` runs on the
    command tagged ``tag``: fresh when ``tag == k`` (the answer came before the
    next tick), stale otherwise. States older than ``window`` steps are forgotten.
    """

    def __init__(self, window: int = 4096, capacity: int = 1 << 16) -> None:
        if window <= 0 or window & (window - 1):
            raise ValueError(f"window must be a power of two (it must divide the tags' modulus 2^32), got {window}")
        self._sent = np.full(window, -1.0)  # wall time of state k at k % window; -1: not pending
        self._step = np.full(window, -1, dtype=np.int64)
        self.latency = DurationLog(capacity)
        self.fresh = 0
        self.stale = 0

    def sent(self, step: int, wall_s: float) -> None:
        slot = step % self._sent.size
        self._sent[slot], self._step[slot] = wall_s, step

    def answered(self, tag: int, wall_s: float, modulus: int = 2**32) -> None:
        """A command tagged ``tag`` (the state's number modulo ``modulus``) arrived at ``wall_s``."""
        slot = tag % self._sent.size
        step = self._step[slot]
        if step < 0 or step % modulus != tag or self._sent[slot] < 0.0:
            return
        self.latency.add(wall_s - self._sent[slot])
        self._sent[slot] = -1.0

    def applied(self, step: int, tag: int | None, modulus: int = 2**32) -> None:
        """The period after state ``step`` runs on the command tagged ``tag`` (None: no command)."""
        if tag is not None and tag == step % modulus:
            self.fresh += 1
        else:
            self.stale += 1

    @property
    def fresh_share(self) -> float:
        """Share of the periods run on the answer to the state just before them (NaN before any)."""
        total = self.fresh + self.stale
        return self.fresh / total if total else float("nan")

    def describe(self) -> str:
        """Latency percentiles (ms) and the share of fresh commands."""
        return (f"state -> command latency {self.latency.describe('ms')}, "
                f"{100.0 * self.fresh_share:.2f} % of periods on the answer to the state just before")


class RealTimeRate:
    """Periods per wall-clock second of a free-running loop, over windows of ``window_s``.

    :meth:`tick` (once per period, with a steady clock's time) returns the rate of a window that just
    ended below ``share`` of ``rate_hz`` (the loop runs behind real time), else None. The first window
    starts at the first tick.
    """

    def __init__(self, rate_hz: float, window_s: float = 1.0, share: float = 0.95) -> None:
        self.rate_hz, self.window_s, self.share = float(rate_hz), float(window_s), float(share)
        self._start: float | None = None
        self._periods = 0
        self.slow_windows = 0
        self.windows = 0

    def tick(self, now_s: float) -> float | None:
        if self._start is None:
            self._start = now_s
            return None
        self._periods += 1
        elapsed = now_s - self._start
        if elapsed < self.window_s:
            return None
        rate = self._periods / elapsed
        self._start, self._periods = now_s, 0
        self.windows += 1
        if rate >= self.share * self.rate_hz:
            return None
        self.slow_windows += 1
        return rate
