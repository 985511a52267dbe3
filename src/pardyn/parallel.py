"""Independent jobs on every core: forked worker processes that inherit the caller's objects.

Robots, pinocchio models and MuJoCo plants are costly to pickle; forked
workers inherit them instead (``shared``), only the items and the results
cross process boundaries. Falls back to a plain loop with one worker or where
``fork`` does not exist.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pardyn.progress import progress

__all__ = ["fork_map"]

Item = TypeVar("Item")
Result = TypeVar("Result")

_JOB: tuple[Callable[[Any, Any], Any], Any] | None = None


def _call(item: Any) -> Any:
    function, shared = _JOB
    return function(shared, item)


def fork_map(
    function: Callable[[Any, Item], Result],
    shared: Any,
    items: Sequence[Item],
    *,
    workers: int | None = None,
    label: str | None = None,
) -> list[Result]:
    """``[function(shared, item) for item in items]`` on ``workers`` processes (default: one per core).

    ``function`` must be a module-level function; results come back in order.
    """
    workers = min(workers or os.cpu_count() or 1, len(items))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [function(shared, item) for item in items]
    global _JOB
    _JOB = (function, shared)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.imap(_call, items)
            if label is not None:
                results = progress(results, total=len(items), label=f"{label} ({workers} processes)")
            return list(results)
    finally:
        _JOB = None
