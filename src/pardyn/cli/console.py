"""What the commands that run nodes (``demo``, ``experiment``, ``bringup``) show on the console.

The nodes' INFO and DEBUG lines (gains, latency statistics, ...) go to a log file whose path is printed;
every other line written to stderr (warnings, errors, pardyn's own messages) still reaches the console.
``--verbose`` shows everything, as before. The split happens on the file descriptor, because rclpy's
loggers write to it from C.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["add_verbose_argument", "node_log"]

_DIVERTED = (b"[INFO]", b"[DEBUG]")


def add_verbose_argument(parser) -> None:
    """The ``--verbose`` option of the commands that run nodes."""
    parser.add_argument("--verbose", action="store_true",
                        help="show the nodes' INFO lines on the console (default: in the printed log file)")


@contextlib.contextmanager
def node_log(path: Path, *, verbose: bool = False) -> Iterator[Path | None]:
    """Within the block, stderr lines starting with ``[INFO]``/``[DEBUG]`` go to ``path`` (printed once) and
    every other line to the console; ``verbose``: nothing diverted (yields None)."""
    if verbose:
        yield None
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"node log: {path} (--verbose to show it here)", flush=True)
    sys.stderr.flush()
    saved = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)

    def pump() -> None:
        with open(path, "ab") as log, os.fdopen(read_end, "rb") as source:
            for line in source:
                log.write(line)
                if not line.startswith(_DIVERTED):
                    os.write(saved, line)
            log.flush()

    thread = threading.Thread(target=pump, name="node-log", daemon=True)
    thread.start()
    try:
        yield path
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # closes the pipe's last write end: the pump reads to its end
        thread.join(timeout=5.0)
        os.close(saved)
