"""Messages lost on the way to a bag, found from the stamps of a periodic topic (issue 34, item 8).

A recorder that falls behind (a loaded machine: the subscription's keep-last
queue overflows, or a reliable publisher's own keep-last history drops what the
reader has not acknowledged) loses messages without any error. A robot's
states are published once per control period with a header stamp, so every
loss leaves a hole in the stamps: between two consecutive recorded stamps
``a < b`` there are ``round((b - a) / period) - 1`` missing messages.

The period is the greatest common divisor of the spacings of the stamps
(integer nanoseconds): exact for stamps that are whole multiples of the period
(a simulation's, a lockstep sim's ``step * period``) whatever the losses, as
long as two consecutive messages arrived once. Stamps with jitter (a driver's
wall-clock stamps) have a gcd far below their spacing; the median spacing is
the period then, and a gap is a spacing above 1.5 periods.

What the stamps cannot show: messages lost before the first recorded one or
after the last (the record gives the span it covers, ``first_ns``/``last_ns``).
A message received twice (the lockstep sim re-sends a state that got no
answer) counts once.

:class:`StampGaps` collects the stamps of one topic (8 bytes each: 29 MB for an
hour at 1 kHz) and gives the :class:`GapRecord` stored in the bag's
``metadata.yaml`` (``custom_data``, key :data:`CUSTOM_DATA_PREFIX` + topic) and
read back by :func:`read_gap_records` (``pardyn bag info``).
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pardyn.bags.metadata import load_metadata

__all__ = ["CUSTOM_DATA_PREFIX", "Gap", "GapRecord", "StampGaps", "read_gap_records"]

CUSTOM_DATA_PREFIX = "pardyn.gaps:"
"""``custom_data`` key of a topic's :class:`GapRecord` in ``metadata.yaml``: ``pardyn.gaps:/ns/joint_states``."""

_JITTER_GAP = 1.5  # periods: a spacing above this is a gap (stamps with jitter)
_SHOWN_GAPS = 5


@dataclass(frozen=True)
class Gap:
    """``missing`` messages lost between the recorded stamps ``after_ns`` and ``before_ns`` (ns)."""

    after_ns: int
    before_ns: int
    missing: int


@dataclass(frozen=True)
class GapRecord:
    """What one periodic topic's stamps say about the messages lost.

    Attributes:
        topic: the topic name.
        received: distinct stamps recorded.
        period_ns: the publisher's period found from the stamps (0: fewer than two stamps).
        first_ns, last_ns: the first and last recorded stamps (the span the record covers; 0 if none).
        gaps: every hole, in stamp order.
    """

    topic: str
    received: int
    period_ns: int
    first_ns: int
    last_ns: int
    gaps: tuple[Gap, ...] = field(default_factory=tuple)

    @property
    def lost(self) -> int:
        """Messages lost between the first and the last recorded stamp."""
        return sum(gap.missing for gap in self.gaps)

    def describe(self) -> str:
        """One line: ``/joint_states: 3150 of 15450 lost in 12 gaps (period 1 ms, stamps 0.000-15.449 s): ...``."""
        span = f"stamps {self.first_ns * 1e-9:.3f}-{self.last_ns * 1e-9:.3f} s"
        period = f"period {self.period_ns * 1e-6:.6g} ms" if self.period_ns else "period unknown"
        if not self.gaps:
            return f"{self.topic}: none lost of {self.received} ({period}, {span})"
        shown = ", ".join(f"{gap.missing} between {gap.after_ns * 1e-9:.6f} and {gap.before_ns * 1e-9:.6f} s"
                          for gap in self.gaps[:_SHOWN_GAPS])
        more = f", {len(self.gaps) - _SHOWN_GAPS} more gaps" if len(self.gaps) > _SHOWN_GAPS else ""
        return (f"{self.topic}: {self.lost} of {self.received + self.lost} lost in {len(self.gaps)} gaps ({period}, "
                f"{span}): {shown}{more}")

    def to_json(self) -> str:
        """The record as the JSON string stored in ``custom_data`` (stamps in integer ns)."""
        return json.dumps({"received": self.received, "lost": self.lost, "period_ns": self.period_ns,
                           "first_ns": self.first_ns, "last_ns": self.last_ns,
                           "gaps": [[gap.after_ns, gap.before_ns, gap.missing] for gap in self.gaps]})

    @classmethod
    def from_json(cls, topic: str, text: str) -> GapRecord:
        data = json.loads(text)
        return cls(topic, int(data["received"]), int(data["period_ns"]), int(data["first_ns"]), int(data["last_ns"]),
                   tuple(Gap(int(a), int(b), int(n)) for a, b, n in data["gaps"]))


class StampGaps:
    """The stamps of one periodic topic as they arrive, and the gaps among them (see the module docstring).

    Args:
        topic: the topic's name (for the record).
        period_ns: the publisher's period if known (ns); None: found from the stamps.
    """

    def __init__(self, topic: str, period_ns: int | None = None) -> None:
        self.topic = topic
        self.period_ns = period_ns
        self._stamps = array("q")

    def add(self, stamp_ns: int) -> None:
        """One received message's stamp (ns)."""
        self._stamps.append(stamp_ns)

    def __len__(self) -> int:
        return len(self._stamps)

    def record(self) -> GapRecord:
        """The gaps of the stamps received so far."""
        stamps = np.unique(np.frombuffer(self._stamps, dtype=np.int64))  # sorted, a re-sent message once
        if len(stamps) < 2:
            first = int(stamps[0]) if len(stamps) else 0
            return GapRecord(self.topic, len(stamps), self.period_ns or 0, first, first)
        spacing = np.diff(stamps)
        period = self.period_ns or _period_of(spacing)
        if np.all(spacing % period == 0):  # whole multiples of the period: exact counts
            missing = spacing // period - 1
        else:  # jitter: a spacing above 1.5 periods is a gap
            missing = np.where(spacing > _JITTER_GAP * period, np.rint(spacing / period).astype(np.int64) - 1, 0)
        gaps = tuple(Gap(int(stamps[i]), int(stamps[i + 1]), int(missing[i])) for i in np.flatnonzero(missing > 0))
        return GapRecord(self.topic, len(stamps), int(period), int(stamps[0]), int(stamps[-1]), gaps)


def _period_of(spacing: np.ndarray) -> int:
    """The period of stamps with these spacings (ns): their gcd, unless the stamps have jitter (a gcd far below
    every spacing: a few ns), then the median spacing."""
    divisor = int(np.gcd.reduce(spacing))
    if divisor * 4 >= int(spacing.min()):  # also right when no two consecutive messages arrived (gaps of <= 4)
        return divisor
    return max(int(np.median(spacing)), 1)


def read_gap_records(bag: Path) -> list[GapRecord]:
    """The gap records in a bag's ``metadata.yaml`` (none if the recorder kept none)."""
    directory = bag if bag.is_dir() else bag.parent
    info = load_metadata(directory)
    custom = info.get("custom_data") or {}
    return [GapRecord.from_json(key[len(CUSTOM_DATA_PREFIX):], value) for key, value in sorted(custom.items())
            if key.startswith(CUSTOM_DATA_PREFIX)]

