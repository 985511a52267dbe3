"""Joint-state readings as real drivers send them: missing velocities, stamps that do not advance.

A ros2_control robot publishes ``joint_states`` through its
joint_state_broadcaster; drivers differ from the sim in two ways that
:class:`JointStateFilter` absorbs, per joint name:

* **no velocity reading**: an empty ``velocity`` field, or NaN for a joint
  without a velocity interface (what the broadcaster fills in). The velocity of
  such a joint is estimated from its positions by a first-order low-pass filter
  of backward differences (cut-off ``f_c``, Hz)::

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
        self._position: dict[str, float] = {}
        self._velocity: dict[str, float] = {}
        self._last: tuple[int, int, int, tuple[float, ...]] | None = None  # stamp, receive, time, positions

    def _estimate(self, names: Sequence[str], positions: Sequence[float], dt_s: float) -> None:
        alpha = math.exp(-2.0 * math.pi * self.cutoff_hz * dt_s) if dt_s > 0.0 else 1.0
        for name, q in zip(names, positions):
            if not math.isfinite(q):
                continue
            previous = self._position.get(name)
            if previous is None:
                self._velocity[name] = 0.0
            elif dt_s > 0.0:
                slope = (q - previous) / dt_s
                self._velocity[name] = alpha * self._velocity[name] + (1.0 - alpha) * slope
            self._position[name] = float(q)

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
        key = tuple(float(v) for v in positions)
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
            self._estimate(names, positions, dt_s)
            self._last = (int(stamp_ns), int(receive_ns), time_ns, key)
        missing: tuple[str, ...] = ()
        nan: list[str] = []
        if len(velocities) == 0:
            filled = [self._velocity.get(name, math.nan) for name in names]
            missing = tuple(names)
        else:
            filled = [float(v) for v in velocities]
            for i, (name, v) in enumerate(zip(names, velocities)):
                if not math.isfinite(v):
                    filled[i] = self._velocity.get(name, math.nan)
                    nan.append(name)
        return FilteredState(filled, missing, tuple(nan), kind, time_ns)

    def velocity(self, name: str) -> float:
        """The current estimate of ``name`` (rad/s, m/s), NaN before its first reading."""
        return self._velocity.get(name, math.nan)

