"""Velocity from encoder positions: backward difference through a first-order low-pass.

The DualV controller (Briot et al. 2015, section 5.1) filters its derivative
term with a first-order low-pass at the control bandwidth f_c. Discretized
exactly for a sampling period T (zero-order hold on the difference):

    v_k = a v_{k-1} + (1 - a) (q_k - q_{k-1}) / T,    a = exp(-2 pi f_c T)        # (n,)
"""

from __future__ import annotations

import math

import numpy as np

from pardyn.errors import InputError

__all__ = ["FilteredDifferentiator"]


class FilteredDifferentiator:
    """Filtered backward difference of ``size`` signals sampled every ``period_s``.

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
        self.smoothing = 0.0 if math.isinf(cutoff_hz) else math.exp(-2 * math.pi * cutoff_hz * period_s)
        self.velocity = np.zeros(size)
        self._previous: np.ndarray | None = None

    def reset(self, position: np.ndarray | None = None) -> None:
        """Restart at rest (at ``position`` when given)."""
        self.velocity[:] = 0.0
        self._previous = None if position is None else np.array(position, dtype=float)

    def update(self, position: np.ndarray) -> np.ndarray:
        """Feed the new positions (size,); the filtered velocity (size,)."""
        position = np.asarray(position, dtype=float)
        if self._previous is not None:
            difference = (position - self._previous) / self.period_s
            self.velocity = self.smoothing * self.velocity + (1.0 - self.smoothing) * difference
        self._previous = position.copy()
        return self.velocity
