"""A dependency-free progress display for long loops (stderr, one updating line)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

__all__ = ["progress"]

T = TypeVar("T")


def progress(items: Iterable[T], *, total: int, label: str, stream: TextIO | None = None) -> Iterator[T]:
    """Yield ``items`` while showing ``label [#####     ] 50% 1.2 s`` at most 10 times a second.

    On a non-terminal stream (CI logs) only the final line is printed.
    """
    stream = stream or sys.stderr
    interactive = stream.isatty()
    start = last = time.perf_counter()
    done = 0

    def show(final: bool) -> None:
        fraction = done / total if total else 1.0
        bar = "#" * int(30 * fraction)
        end = "\n" if final else "\r"
        stream.write(f"{label} [{bar:<30s}] {100 * fraction:3.0f}% {time.perf_counter() - start:6.1f} s{end}")
        stream.flush()

    for item in items:
        yield item
        done += 1
        now = time.perf_counter()
        if interactive and now - last > 0.1:
            show(final=False)
            last = now
    show(final=True)
