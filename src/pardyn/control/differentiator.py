"""Velocity from encoder positions: backward difference through a first-order low-pass.

The DualV controller (Briot et al. 2015, section 5.1) filters its derivative
term with a first-order low-pass at the control bandwidth f_c. Discretized
exactly for a sampling period T (zero-order hold on the difference):

    v_k = a v_{k-1} + (1 - a) (q_k - q_{k-1}) / T,    a = exp(-2 pi f_c T)        # (n,)

the exact discretisation of ``v' = 2 pi f_c (d - v)`` with the difference ``d`` held over the step;
transfer function ``(1 - a)(1 - z^-1) / (T (1 - a z^-1))`` at a constant period ``T``. The one
implementation of the velocity filter: the laws and the in-process loop (fixed period), and the
joint-state readings of ROS drivers (:class:`pardyn.control.joint_state.JointStateFilter`: a period per
reading from the stamps, joints that come and go).
"""

from __future__ import annotations

import math

import numpy as np

from pardyn.errors import InputError

__all__ = ["FilteredDifferentiator"]

SMALL = 32
"""Signals up to which the steady state (every signal known, every position finite) runs on Python floats: a
6-joint reading costs a third of numpy's per-call overhead; the same operations in the same order, so the
same bits (test/control/test_differentiator.py checks both paths against the closed form and each other)."""


class FilteredDifferentiator:
    """Filtered backward difference of ``size`` signals sampled every ``period_s``.

    A signal is *known* from its first finite position on: until then its velocity is 0 and
    :meth:`known` is False. A non-finite position leaves that signal's position and velocity as they
    were (a joint absent from a reading).

    Args:
        size: number of signals.
        period_s: sampling period T (s).
        cutoff_hz: low-pass cut-off f_c (Hz); ``math.inf`` for the raw difference.
    """

    def __init__(self, size: int, *, period_s: float, cutoff_hz: float) -> None:
        if not (period_s > 0.0 and math.isfinite(period_s)):
            raise InputError(f"period_s must be positive (s), got {period_s}")
        if not cutoff_hz > 0.0:
            raise InputError(f"cutoff_hz must be positive (Hz), got {cutoff_hz}")
        self.period_s = float(period_s)
        self.cutoff_hz = float(cutoff_hz)
        self.smoothing = self._smoothing(self.period_s)
        self.velocity = np.zeros(size)
        self._previous = np.full(size, np.nan)
        self._known = np.zeros(size, dtype=bool)
        self.all_known = False

    def _smoothing(self, period_s: float) -> float:
        """``a = exp(-2 pi f_c T)`` (0 for the raw difference)."""
        return 0.0 if math.isinf(self.cutoff_hz) else math.exp(-2 * math.pi * self.cutoff_hz * period_s)

    def reset(self, position: np.ndarray | None = None) -> None:
        """Restart at rest (at ``position`` when given)."""
        self.velocity = np.zeros(self.velocity.size)
        self._previous = np.full(self.velocity.size, np.nan) if position is None else np.array(position, dtype=float)
        self._known = np.isfinite(self._previous)
        self.all_known = bool(self._known.all())

    def resize(self, size: int) -> None:
        """Add signals up to ``size`` (unknown, at rest); the others keep their state."""
        grow = size - self.velocity.size
        if grow > 0:
            self.velocity = np.concatenate([self.velocity, np.zeros(grow)])
            self._previous = np.concatenate([self._previous, np.full(grow, np.nan)])
            self._known = np.concatenate([self._known, np.zeros(grow, dtype=bool)])
            self.all_known = False

    def known(self) -> np.ndarray:
        """Which signals have had a finite position (size,) bool (``all_known``: all of them)."""
        return self._known.copy()

    def update(self, position: np.ndarray, *, period_s: float | None = None) -> np.ndarray:
        """Feed the new positions (size,); the filtered velocity (size,).

        ``period_s``: the time since the previous positions (s), ``period_s`` of the constructor by
        default; a period <= 0 updates the positions only.
        """
        period = self.period_s if period_s is None else float(period_s)
        smoothing = self.smoothing if period == self.period_s else self._smoothing(period)
        if self.all_known and self.velocity.size <= SMALL:
            values = position.tolist() if isinstance(position, np.ndarray) else list(position)
            if len(values) == self.velocity.size and all(map(math.isfinite, values)):
                if period > 0.0:
                    keep = 1.0 - smoothing
                    self.velocity = np.array([smoothing * v + keep * ((q - p) / period) for v, q, p in
                                              zip(self.velocity.tolist(), values, self._previous.tolist())])
                self._previous = np.array(values, dtype=float)
                return self.velocity
        position = np.asarray(position, dtype=float)
        if self.all_known and np.isfinite(position).all():  # the steady state: every signal, every sample
            if period > 0.0:
                difference = (position - self._previous) / period
                self.velocity = smoothing * self.velocity + (1.0 - smoothing) * difference
            self._previous = position.copy()
            return self.velocity
        finite = np.isfinite(position)
        update = finite & self._known
        velocity = self.velocity.copy()
        if period > 0.0:
            difference = (position[update] - self._previous[update]) / period
            velocity[update] = smoothing * velocity[update] + (1.0 - smoothing) * difference
        velocity[finite & ~update] = 0.0  # first reading of a signal: at rest
        self.velocity = velocity
        self._previous = self._previous.copy()
        self._previous[finite] = position[finite]
        self._known = self._known | finite
        self.all_known = bool(self._known.all())
        return self.velocity
