"""An object a node builds after it is up, and the messages that arrive meanwhile (issue 34: ready within 2 s).

A node whose working object is slow to build (the identifier's estimator: its regressor, its structural base
parameters, SciPy's import) subscribes and publishes first and builds it on a thread of its own. Every message
offered before the object exists is queued, in its order of arrival; when the build ends the builder thread
hands the queue to ``consume`` in that order, batch after batch, until it finds it empty under the lock, and
only then publishes the object: a message offered later is consumed at once, after all the queued ones. None is
lost or reordered, whatever the moment it comes. No rclpy here (tests drive it with plain threads).

``offer`` is called from one thread (the node's executor); ``consume`` must not raise for a bad message (the
node reports and drops it, as it would without the deferral).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Deferred"]

T = TypeVar("T")


class Deferred(Generic[T]):
    """``build()`` on a daemon thread; messages ``offer``-ed meanwhile queued, then ``consume(built, message)``-d.

    Args:
        build: makes the object (any exception is kept in :attr:`error`; the queue is then dropped).
        consume: takes one message into the built object.
        done: called on the builder thread once the object is published (or the build failed), with ``self``.
        name: the thread's name.
    """

    def __init__(self, build: Callable[[], T], consume: Callable[[T, Any], None], *,
                 done: Callable[[Deferred[T]], None] | None = None, name: str = "deferred build") -> None:
        self._build = build
        self._consume = consume
        self._done = done
        self._lock = threading.Lock()
        self._pending: list[Any] = []
        self.value: T | None = None
        self.error: BaseException | None = None
        self.seconds = float("nan")  # from start() to the object's publication
        self.replayed = 0  # messages queued during the build and consumed after it
        self.finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Deferred[T]:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def offer(self, message: Any) -> None:
        """Consume ``message`` now if the object exists, else queue it (dropped if the build failed)."""
        with self._lock:
            value = self.value
            if value is None:
                if self.error is None:
                    self._pending.append(message)
                return
        self._consume(value, message)

    @property
    def queued(self) -> int:
        """Messages waiting for the object."""
        return len(self._pending)

    def _run(self) -> None:
        try:
            built = self._build()
        except BaseException as error:  # noqa: BLE001 - kept for the node to report
            with self._lock:
                self.error = error
                self._pending.clear()
        else:
            while True:
                with self._lock:
                    batch, self._pending = self._pending, []
                    if not batch:
                        self.value = built
                        break
                for message in batch:  # outside the lock: offer() keeps queueing meanwhile
                    self._consume(built, message)
                self.replayed += len(batch)
        self.seconds = time.monotonic() - self._started
        self.finished.set()
        if self._done is not None:
            self._done(self)
