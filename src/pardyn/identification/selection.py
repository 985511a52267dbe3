"""Per-joint sample selection: a joint's equations where it hardly moves are dropped (the TX40's published recipe).

Near zero speed a joint's Coulomb term ``fs sign(qdot)`` flips with noise and
its friction is not the model's (stiction, presliding): Gautier's recipe drops,
row by row, the equations of joint ``j`` where ``|qdot_j| < qdot_min,j``, after
the parallel filtering and decimation (so the velocities compared are the
decimated ones, filtered like ``W`` and ``Y``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pardyn.errors import InputError
from pardyn.identification.least_squares import LinearSystem

__all__ = ["drop_slow_samples", "near_reversals"]


def drop_slow_samples(
    system: LinearSystem, speeds: np.ndarray, thresholds: Sequence[float], *, row_names: Sequence[str]
) -> tuple[LinearSystem, np.ndarray]:
    """The equations of each row whose speed reaches its threshold; and the count kept per row.

    Args:
        system: one block per equation row, ``k`` equations each (eq. 48 order, as
            :func:`pardyn.identification.filtering.decimate` returns it).
        speeds: the row's joint velocity at each equation (rows * k,), rad/s (m/s).
        thresholds: ``qdot_min`` per row (rows,), rad/s (m/s); 0 keeps everything.
        row_names: the rows' joints, for the error message.

    Raises:
        InputError: a row left without any equation (its joint never moves that fast).
    """
    thresholds = np.asarray(thresholds, dtype=float)
    rows = len(row_names)
    if thresholds.shape != (rows,) or np.any(thresholds < 0):
        raise InputError(f"minimum speeds: expected {rows} values >= 0 (one per joint {list(row_names)}), "
                         f"got {thresholds.tolist()}")
    if len(system.block_sizes) != rows:
        raise InputError(f"speed selection needs one block per row ({rows}), got {len(system.block_sizes)}")
    keep = np.zeros(system.rows, dtype=bool)
    counts = np.zeros(rows, dtype=int)
    for r, block in enumerate(system.block_slices()):
        moving = np.abs(speeds[block]) >= thresholds[r]
        keep[block] = moving
        counts[r] = int(moving.sum())
    empty = [row_names[r] for r in range(rows) if counts[r] == 0]
    if empty:
        raise InputError(f"joints {empty} never move faster than their minimum speed "
                         f"{[float(thresholds[list(row_names).index(n)]) for n in empty]} rad/s: nothing left to identify")
    return LinearSystem(system.W[keep], system.Y[keep], tuple(int(c) for c in counts), system.names), counts


def near_reversals(speeds: np.ndarray, period_s: float, window_s: float) -> np.ndarray:
    """Where each joint is within ``window_s`` of a reversal (a sign change of its speed): (N, J) bool.

    Dry friction is not ``fs sign(qdot)`` there: the joint sticks until the torque crosses the friction band, and
    the low-pass filters spread that stick torque over their own length. ``speeds`` (N, J) are sampled every
    ``period_s``; the two samples around each sign change and those within ``window_s`` of them are marked.
    """
    speeds = np.asarray(speeds, dtype=float)
    flips = np.zeros(speeds.shape, dtype=bool)
    if window_s <= 0:
        return flips
    change = np.sign(speeds[1:]) != np.sign(speeds[:-1])
    flips[:-1] |= change
    flips[1:] |= change
    reach = int(round(window_s / period_s))
    if reach == 0 or not flips.any():
        return flips
    kernel = np.ones(2 * reach + 1)
    return np.stack([np.convolve(column, kernel, mode="same") > 0 for column in flips.T.astype(float)], axis=1)
