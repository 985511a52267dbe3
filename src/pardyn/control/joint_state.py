"""Joint-state readings as real drivers send them: missing velocities, stamps that do not advance.

A ros2_control robot publishes ``joint_states`` through its
joint_state_broadcaster; drivers differ from the sim in two ways that
:class:`JointStateFilter` absorbs, per joint name:

* **no velocity reading**: an empty ``velocity`` field, or NaN for a joint
  without a velocity interface (what the broadcaster fills in). The velocity of
  such a joint is estimated from its positions by a first-order low-pass filter
  of backward differences (cut-off ``f_c``, Hz; :class:`pardyn.control.differentiator.FilteredDifferentiator`,
  the one velocity filter, with the period of each reading)::

      d_k = (q_k - q_{k-1}) / dt_k
      v_k = a v_{k-1} + (1 - a) d_k,      a = exp(-2 pi f_c dt_k)              # per joint

  (``v = 0`` at the first reading; the exact discretisation of ``v' = 2 pi f_c (d - v)``
  with ``d`` held over the step: exact on a ramp after ``~1 / (2 pi f_c)`` s, transfer function
  ``(1 - a)(1 - z^-1) / (T (1 - a z^-1))`` at a constant period ``T``). The filter runs
  on every reading, so it is warm when a driver drops its velocities.
* **header stamps that do not advance** (zero, or a steady clock that did not
  tick): a reading whose stamp is not after the previous one is

  - ``"resend"`` when its stamp *and* positions equal the previous reading's (the
    lockstep sim re-sending a state it has no command for: answer it with the
    same command);
  - ``"repeated"`` (same stamp) or ``"backwards"`` (earlier stamp) otherwise: new
    positions under a bad stamp. They must be acted on; their time is then the
    previous reading's plus the reception interval (:attr:`FilteredState.time_ns`).

Stamps and reception times are integer nanoseconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.control.differentiator import FilteredDifferentiator

__all__ = ["STAMP_KINDS", "FilteredState", "JointStateFilter"]

STAMP_KINDS = ("new", "resend", "repeated", "backwards")


@dataclass(frozen=True)
class FilteredState:
    """One reading after :meth:`JointStateFilter.update`.

    Attributes:
        velocities: one per name (rad/s, m/s): the reading's, or the estimate where it had none.
        estimated_missing: names whose velocity was estimated because the message had no
            ``velocity`` field.
        estimated_nan: names whose velocity was estimated because the message gave NaN/inf.
        stamp: one of :data:`STAMP_KINDS`.
        time_ns: the reading's time: its stamp, or (stamp not advancing) the previous
            reading's time plus the reception interval.
    """

    velocities: list[float]
    estimated_missing: tuple[str, ...]
    estimated_nan: tuple[str, ...]
    stamp: str
    time_ns: int


class JointStateFilter:
    """Velocity estimation and stamp checks of a stream of joint-state readings (see module docstring).

    Args:
        cutoff_hz: ``f_c`` of the velocity estimate (Hz), > 0.
    """

    def __init__(self, cutoff_hz: float = 50.0) -> None:
        if not (math.isfinite(cutoff_hz) and cutoff_hz > 0.0):
            raise ValueError(f"velocity filter cut-off must be positive (Hz), got {cutoff_hz}")
        self.cutoff_hz = float(cutoff_hz)
        self._index: dict[str, int] = {}  # joint name -> its signal in the filter
        self._filter = FilteredDifferentiator(0, period_s=1e-3, cutoff_hz=self.cutoff_hz)  # period: per reading
        self._order: tuple[str, ...] = ()  # the joints of the filter's signals, in order
        self._last: tuple[int, int, int, tuple[float, ...]] | None = None  # stamp, receive, time, positions

    def _estimate(self, names: Sequence[str], positions: Sequence[float], dt_s: float) -> None:
        """One reading into the filter: the named joints' positions, every other joint left as it was."""
        if len(names) == len(self._index) and tuple(names) == self._order:  # the usual reading: the same joints
            self._filter.update(positions, period_s=dt_s)
            return
        for name in names:
            if name not in self._index:
                self._index[name] = len(self._index)
        self._order = tuple(self._index)
        self._filter.resize(len(self._index))
        readings = np.full(len(self._index), np.nan)  # a joint absent from this reading keeps its estimate
        for name, q in zip(names, positions):
            readings[self._index[name]] = q
        self._filter.update(readings, period_s=dt_s)

    def update(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float],
        stamp_ns: int,
        receive_ns: int,
    ) -> FilteredState:
        """Classify the reading's stamp, update the estimates, fill the velocities it lacks.

        Args:
            names, positions, velocities: the message's arrays (``velocities`` empty or
                one per name; lengths are the caller's check).
            stamp_ns: ``header.stamp`` (ns).
            receive_ns: reception time on any steady clock (ns).
        """
        key = tuple(map(float, positions))
        last = self._last
        if last is None or stamp_ns > last[0]:
            kind, time_ns = "new", int(stamp_ns)
        elif stamp_ns == last[0] and key == last[3]:
            kind, time_ns = "resend", last[2]
        else:
            kind = "repeated" if stamp_ns == last[0] else "backwards"
            time_ns = last[2] + max(1, int(receive_ns) - last[1])
        if kind != "resend":
            dt_s = 0.0 if last is None else (time_ns - last[2]) * 1e-9
            self._estimate(names, key, dt_s)  # the positions as floats
            self._last = (int(stamp_ns), int(receive_ns), time_ns, key)
        missing: tuple[str, ...] = ()
        nan: list[str] = []
        if len(velocities) == 0:
            filled = self._estimates(names)
            missing = tuple(names)
        else:
            filled = list(map(float, velocities))
            if not all(map(math.isfinite, filled)):
                nan = [name for name, v in zip(names, filled) if not math.isfinite(v)]
            if nan:
                estimates = dict(zip(nan, self._estimates(nan)))
                filled = [estimates.get(name, v) for name, v in zip(names, filled)]
        return FilteredState(filled, missing, tuple(nan), kind, time_ns)

    def velocity(self, name: str) -> float:
        """The current estimate of ``name`` (rad/s, m/s), NaN before its first reading."""
        return self._estimates((name,))[0]

    def _estimates(self, names: Sequence[str]) -> list[float]:
        """The current estimates of ``names``, NaN for a joint without a finite reading yet."""
        velocity = self._filter.velocity.tolist()
        if self._filter.all_known and len(names) == len(velocity) and tuple(names) == self._order:
            return velocity  # the usual reading: every joint known, in the filter's order
        known = self._filter.known().tolist()
        estimates = []
        for name in names:
            index = self._index.get(name)
            estimates.append(velocity[index] if index is not None and known[index] else math.nan)
        return estimates

