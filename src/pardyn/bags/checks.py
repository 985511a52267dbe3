"""Checks of a ``sensor_msgs/msg/JointState`` series, reusable by any reader (bags, CSV files).

Each raises :class:`~pardyn.bags.errors.BagError` naming the source, the topic
and the time at fault (``stamps not increasing at t=1.234 s``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pardyn.bags.errors import BagError, at, format_time

__all__ = ["check_finite", "check_joint_names", "check_lengths", "check_message_count", "check_stamps"]


def check_message_count(count: int, *, minimum: int, bag: Path | str, topic: str | None) -> None:
    """At least ``minimum`` messages.

    Raises:
        BagError: kind ``"count"``.
    """
    if count < minimum:
        raise BagError(f"{count} messages, at least {minimum} needed", bag=bag, topic=topic, kind="count")


def check_joint_names(
    names: Sequence[Sequence[str]], stamp_ns: Sequence[int], *, bag: Path | str, topic: str | None
) -> tuple[str, ...]:
    """Every message names the same joints, in the same order, without duplicates; those names.

    Args:
        names: the joint names of each message, N lists.
        stamp_ns: their stamps (ns), shape (N,), for the error messages.

    Raises:
        BagError: kind ``"names"``, at the first message at fault.
    """
    if not len(names):
        return ()
    first = tuple(names[0])
    duplicated = sorted({name for name in first if first.count(name) > 1})
    if duplicated:
        raise BagError(
            f"duplicated joint names {duplicated} at {at(stamp_ns[0])} (message 0)",
            bag=bag, topic=topic, kind="names", t_s=stamp_ns[0] * 1e-9,
        )
    for k, current in enumerate(names):
        if tuple(current) != first:
            raise BagError(
                f"inconsistent joint names at {at(stamp_ns[k])} (message {k}): {list(current)} "
                f"instead of {list(first)}",
                bag=bag, topic=topic, kind="names", t_s=stamp_ns[k] * 1e-9,
            )
    return first


def check_lengths(
    lengths: Sequence[int],
    n_joints: int,
    stamp_ns: Sequence[int],
    *,
    field_name: str,
    optional: bool,
    bag: Path | str,
    topic: str | None,
) -> None:
    """Each message has ``n_joints`` values of ``field_name`` (or none if ``optional``).

    Raises:
        BagError: kind ``"lengths"``.
    """
    allowed = (0, n_joints) if optional else (n_joints,)
    for k, length in enumerate(lengths):
        if length not in allowed:
            expected = f"0 or {n_joints}" if optional else f"{n_joints}"
            raise BagError(
                f"{length} {field_name} values for {n_joints} joints at {at(stamp_ns[k])} (message {k}; "
                f"expected {expected})",
                bag=bag, topic=topic, kind="lengths", t_s=stamp_ns[k] * 1e-9,
            )


def check_finite(
    values: np.ndarray,
    stamp_ns: np.ndarray,
    names: Sequence[str],
    *,
    field_name: str,
    present: np.ndarray | None = None,
    bag: Path | str,
    topic: str | None,
) -> None:
    """No NaN or infinity in ``values`` (N, n), except in rows not ``present`` (N,) bool.

    Raises:
        BagError: kind ``"non_finite"``, naming the first sample and joint at fault.
    """
    bad = ~np.isfinite(values)  # (N, n)
    if present is not None:
        bad &= np.asarray(present, dtype=bool)[:, None]
    if not bad.any():
        return
    k, j = np.argwhere(bad)[0]
    value = values[k, j]
    raise BagError(
        f"{'NaN' if np.isnan(value) else value} {field_name} of joint {names[j]!r} at {at(int(stamp_ns[k]))} "
        f"(message {k})",
        bag=bag, topic=topic, kind="non_finite", t_s=int(stamp_ns[k]) * 1e-9,
    )


def check_stamps(
    stamp_ns: np.ndarray,
    *,
    period_tolerance: float | None = 0.5,
    bag: Path | str,
    topic: str | None,
) -> None:
    """Stamps strictly increasing and, if ``period_tolerance`` is set, regular.

    Regular: every interval ``dt_k = t_k - t_{k-1}`` is within
    ``period_tolerance * T`` of the median interval ``T`` (a dropped sample,
    ``dt = 2 T``, fails a tolerance below 1).

    Args:
        stamp_ns: header stamps (ns), shape (N,), in bag order.

    Raises:
        BagError: kind ``"stamps"``: ``duplicated stamp at t=...``, ``stamps not
            increasing at t=...`` or ``irregular stamps at t=...``, at the first offence.
    """
    stamps = np.asarray(stamp_ns, dtype=np.int64)
    if stamps.size < 2:
        return
    dt = np.diff(stamps)  # (N-1,) ns
    bad = np.flatnonzero(dt <= 0)
    if bad.size:
        k = int(bad[0]) + 1
        what = "duplicated stamp" if dt[k - 1] == 0 else "stamps not increasing"
        raise BagError(
            f"{what} at {at(int(stamps[k]))} (message {k}; previous {at(int(stamps[k - 1]))})",
            bag=bag, topic=topic, kind="stamps", t_s=int(stamps[k]) * 1e-9,
        )
    if period_tolerance is None:
        return
    period = float(np.median(dt))
    off = np.flatnonzero(np.abs(dt - period) > period_tolerance * period)
    if off.size:
        k = int(off[0]) + 1
        raise BagError(
            f"irregular stamps at {at(int(stamps[k]))} (message {k}): interval {format_time(int(dt[k - 1]))} s, "
            f"median {period * 1e-9:.9g} s (tolerance {100 * period_tolerance:g} %)",
            bag=bag, topic=topic, kind="stamps", t_s=int(stamps[k]) * 1e-9,
        )
