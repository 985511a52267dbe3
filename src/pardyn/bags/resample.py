"""Non-uniform time stamps to a uniform grid, or a clear refusal when the gaps are too large.

Identification filters and differentiates along time (zero-phase Butterworth,
:mod:`pardyn.identification.filtering`), which needs a uniform sampling. Logs
of real controllers (the TIAGo's ``joint_states`` at about 100 Hz) have
jittered stamps: each signal is interpolated onto ``t_0 + k T`` with ``T`` the
median interval (cubic spline for positions and velocities, linear for
efforts), and a note says so with the measured jitter. A gap longer than
``max_gap`` median intervals (a lost stretch of data) cannot be filled by
interpolation: it is refused, naming the source and the time of the gap.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.interpolate import CubicSpline

from pardyn.bags.errors import BagError
from pardyn.bags.joint_states import JointStateSeries

__all__ = ["DEFAULT_MAX_GAP", "UNIFORM_RTOL", "resample_uniform"]

UNIFORM_RTOL = 1e-3
"""Intervals within this fraction of the median are uniform (float rounding of logged stamps)."""

DEFAULT_MAX_GAP = 2.5
"""Longest interval that is resampled, in median intervals (one lost sample is 2)."""


def resample_uniform(series: JointStateSeries, *, max_gap: float = DEFAULT_MAX_GAP) -> JointStateSeries:
    """``series`` itself if its stamps are uniform, else resampled onto a uniform grid (module docstring).

    Raises:
        BagError: kind ``"stamps"``, an interval longer than ``max_gap`` median intervals.
    """
    intervals_ns = np.diff(series.stamp_ns)  # (N-1,) exact
    median_ns = float(np.median(intervals_ns))
    if np.abs(intervals_ns - median_ns).max() <= UNIFORM_RTOL * median_ns:
        return series
    t = (series.stamp_ns - series.stamp_ns[0]).astype(np.float64) * 1e-9  # (N,) s from the first stamp
    dt = np.diff(t)
    period = median_ns * 1e-9
    long = np.flatnonzero(dt > max_gap * period)
    if long.size:
        k = int(long[0])
        raise BagError(
            f"gap of {dt[k]:.6g} s after t={series.t[k]:.6f} s ({dt[k] / period:.1f} median intervals of {period:.6g} s; "
            f"{long.size} such gap(s)): too large to resample (limit {max_gap:g} intervals); cut the data there",
            bag=series.bag_path, topic=series.topic, kind="stamps", t_s=float(series.t[k]),
        )
    count = int(np.floor((t[-1] - t[0]) / period + 1e-9)) + 1
    grid = t[0] + period * np.arange(count)  # (M,) s
    position = CubicSpline(t, series.position, axis=0)(grid)
    velocity = _interpolate(t, series.velocity, grid, cubic=True)
    effort = _interpolate(t, series.effort, grid, cubic=False)
    note = (
        f"{series.bag_path.name}: time stamps not uniform (median interval {1e3 * period:.3f} ms, jitter "
        f"{1e3 * float(np.std(dt)):.3f} ms rms, intervals {1e3 * dt.min():.3f} to {1e3 * dt.max():.3f} ms): "
        f"resampled onto a uniform {1.0 / period:.6g} Hz grid ({len(t)} -> {count} samples; cubic spline for "
        "positions and velocities, linear for efforts)"
    )
    stamps = series.stamp_ns[0] + np.rint(grid * 1e9).astype(np.int64)
    return replace(series, stamp_ns=stamps, t=stamps * 1e-9, bag_time_ns=stamps, position=position, velocity=velocity,
                   effort=effort, notes=(*series.notes, note))


def _interpolate(t: np.ndarray, values: np.ndarray, grid: np.ndarray, *, cubic: bool) -> np.ndarray:
    """Columns with NaN (absent field) stay NaN; the others are interpolated, (M, n)."""
    out = np.full((len(grid), values.shape[1]), np.nan)
    present = np.all(np.isfinite(values), axis=0)
    if present.any():
        if cubic:
            out[:, present] = CubicSpline(t, values[:, present], axis=0)(grid)
        else:
            out[:, present] = np.column_stack([np.interp(grid, t, column) for column in values[:, present].T])
    return out
