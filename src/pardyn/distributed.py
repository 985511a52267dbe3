"""Independent jobs of a study, a sweep or a fleet on one engine: Dask distributed.

``parallel_map(function, shared, items)`` is ``[function(shared, item) for item in items]``:

* **serially, in this process**, with one worker (and inside a Dask worker, where a
  nested cluster would fight for the same cores): no Dask needed;
* on a **``LocalCluster``** of ``workers`` single-threaded worker processes on the
  loopback interface (dashboard off, logs quiet) when more are asked;
* on **any running scheduler** given by address (``tcp://host:8786``, e.g. one that
  ``dask-jobqueue`` started on a SLURM/PBS allocation).

``shared`` (robot, models, laws: costly) is sent once to every worker
(``scatter(broadcast=True)``); only the items and the results travel per task. The
results come back in the items' order and equal the serial path's, bitwise where the
function is deterministic: every task carries its own seeds, and Dask's workers run
one BLAS thread, as ``make test`` and :func:`pardyn.identification.pipeline.identify` do.

Failures: every task runs to its end; a task that raised is reported with its input
(:class:`TaskError`, or :class:`TaskFailure` in place of its result with
``errors="collect"``). A worker that dies (killed, out of memory) loses nothing: the
scheduler runs its tasks again on the others (Dask's ``allowed-failures``, 3 by default,
after which the task fails as ``KilledWorker``, named like any other).

An :class:`Engine` used as a context manager becomes the default of every
``parallel_map`` inside it (the CLI's ``--scheduler``), so a study keeps one cluster for
all its maps.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pardyn.errors import PardynError
from pardyn.progress import progress

__all__ = ["Engine", "TaskError", "TaskFailure", "current_engine", "parallel_map"]

Item = TypeVar("Item")
Result = TypeVar("Result")

_CURRENT: contextvars.ContextVar[Engine | None] = contextvars.ContextVar("pardyn_engine", default=None)


@dataclass(frozen=True)
class TaskFailure:
    """A task that raised: its position, its input (``describe(item)``) and the error, one line each."""

    index: int
    item: str
    error: str
    message: str
    traceback: str = ""

    def __str__(self) -> str:
        return f"{self.item}: {self.error}: {self.message}"


class TaskError(PardynError):
    """Tasks of a map failed (after every other task finished); ``failures`` names each input."""

    def __init__(self, label: str, failures: Sequence[TaskFailure], total: int):
        self.failures = tuple(failures)
        shown = "; ".join(str(f) for f in self.failures[:3])
        more = f" (and {len(self.failures) - 3} more)" if len(self.failures) > 3 else ""
        super().__init__(f"{label}: {len(self.failures)} of {total} tasks failed: {shown}{more}")


def _describe(item: Any) -> str:
    text = getattr(item, "name", None)
    if not isinstance(text, str):
        text = repr(item)
    return text if len(text) <= 120 else text[:117] + "..."


def _inside_worker() -> bool:
    """True in a Dask worker's task (nested clusters would only compete for its cores)."""
    if "distributed" not in sys.modules:
        return False
    from distributed import get_worker  # noqa: PLC0415

    try:
        get_worker()
    except ValueError:
        return False
    return True


class Engine:
    """Where the tasks run: serial in-process, a ``LocalCluster`` of ``workers`` processes, or ``scheduler``.

    Args:
        workers: worker processes of a local cluster; 1: serial in this process;
            ``None``: one per core. Ignored with ``scheduler``.
        scheduler: address of a running Dask scheduler (``tcp://host:8786``); its workers
            need pardyn installed (the same version) and the data paths the tasks read.
        client: an existing ``distributed.Client`` (tests share one cluster).

    The cluster starts on first use (entering the ``with`` block starts nothing) and stops
    with :meth:`close` (or the end of the block).
    """

    def __init__(self, workers: int | None = None, *, scheduler: str | None = None, client: Any = None):
        if workers is not None and workers < 1:
            raise PardynError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.scheduler = scheduler
        self._client = client
        self._own: list[Any] = []
        self._exceptions: dict[int, BaseException] = {}
        self._token: contextvars.Token | None = None

    @property
    def serial(self) -> bool:
        """True when tasks run in this process, one after the other."""
        return self._client is None and self.scheduler is None and (self.workers or os.cpu_count() or 1) <= 1

    def client(self, tasks: int | None = None) -> Any:
        """The Dask client, started on first use (a local cluster sized ``min(workers, tasks)``)."""
        if self._client is not None:
            return self._client
        try:
            from distributed import Client, LocalCluster  # noqa: PLC0415 - only when more than one worker
        except ImportError as error:
            raise PardynError(
                f"parallel runs need Dask distributed ({error}): pip install 'dask[distributed]', or pass --workers 1"
            ) from error
        if self.scheduler is not None:
            try:
                self._client = Client(self.scheduler, timeout="20s")
            except (OSError, TimeoutError) as error:
                raise PardynError(f"no Dask scheduler at {self.scheduler} ({error}): start one (dask scheduler) "
                                  "or check the address") from error
        else:
            size = self.workers or os.cpu_count() or 1
            cluster = LocalCluster(n_workers=min(size, tasks or size), threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None, silence_logs=logging.CRITICAL)
            self._client = Client(cluster)
            self._own.append(cluster)
        self._own.insert(0, self._client)
        return self._client

    def close(self) -> None:
        """Stop the client and the cluster this engine started (not a client it was given)."""
        for resource in self._own:
            resource.close()
        if self._own:
            self._client = None
        self._own = []

    def __enter__(self) -> Engine:
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None
        self.close()

    def map(
        self,
        function: Callable[[Any, Item], Result],
        shared: Any,
        items: Sequence[Item],
        *,
        label: str | None = None,
        errors: str = "raise",
        describe: Callable[[Item], str] = _describe,
    ) -> list[Result | TaskFailure]:
        """``[function(shared, item) for item in items]``, in order (module docstring).

        Args:
            function: a module-level function (workers import it by name).
            shared: the first argument of every call, sent once to each worker.
            items: the tasks' inputs (picklable).
            label: progress bar (finished tasks, on stderr) and error label; ``None``: no bar.
            errors: ``"raise"``: :class:`TaskError` naming every failed input once all tasks
                finished; ``"collect"``: a :class:`TaskFailure` in place of each failed result.
            describe: an item's name in errors (default: its ``name`` attribute, else ``repr``).
        """
        if errors not in ("raise", "collect"):
            raise PardynError(f"errors must be 'raise' or 'collect', got {errors!r}")
        items = list(items)
        if not items:
            return []
        if self.serial or _inside_worker() or (len(items) == 1 and self._client is None and self.scheduler is None):
            results = self._serial(function, shared, items, label=label, describe=describe)
        else:
            results = self._distributed(function, shared, items, label=label, describe=describe)
        failures = [r for r in results if isinstance(r, TaskFailure)]
        if failures and errors == "raise":
            error = TaskError(label or getattr(function, "__name__", "tasks"), failures, len(items))
            raise error from self._exceptions.get(failures[0].index)
        return results

    def _serial(self, function: Callable, shared: Any, items: list, *, label: str | None,
                describe: Callable) -> list:
        results: list = []
        self._exceptions = {}
        indices = range(len(items))
        if label is not None:
            indices = progress(indices, total=len(items), label=f"{label} (in process)")
        for index in indices:
            try:
                results.append(function(shared, items[index]))
            except Exception as error:  # noqa: BLE001 - named with its input, the others go on
                self._exceptions[index] = error
                results.append(TaskFailure(index, describe(items[index]), type(error).__name__, str(error),
                                           traceback.format_exc()))
        return results

    def _distributed(self, function: Callable, shared: Any, items: list, *, label: str | None,
                     describe: Callable) -> list:
        from distributed import as_completed  # noqa: PLC0415

        client = self.client(len(items))
        shared_future = client.scatter(shared, broadcast=True, hash=False)
        stamp = f"{getattr(function, '__name__', 'task')}-{time.time_ns()}"
        # the function itself is submitted (not a wrapper): Dask then pickles it by value where
        # cloudpickle is told to (a function of __main__ or of a module registered by value)
        futures = [client.submit(function, shared_future, item, key=f"{stamp}-{index}", pure=False)
                   for index, item in enumerate(items)]
        position = {future.key: index for index, future in enumerate(futures)}
        results: list = [None] * len(items)
        self._exceptions = {}
        finished = as_completed(futures)
        if label is not None:
            workers = len(client.scheduler_info().get("workers", {}))
            finished = progress(finished, total=len(items), label=f"{label} ({workers} Dask workers)")
        for future in finished:
            index = position[future.key]
            try:
                results[index] = future.result()
            except Exception as error:  # noqa: BLE001 - named with its input, the others go on
                self._exceptions[index] = error
                results[index] = TaskFailure(index, describe(items[index]), type(error).__name__, str(error),
                                             "".join(traceback.format_exception(error)))
        for future in futures:
            future.release()
        del shared_future
        return results


def current_engine() -> Engine | None:
    """The engine of the innermost ``with Engine(...)`` block, if any."""
    return _CURRENT.get()


def parallel_map(
    function: Callable[[Any, Item], Result],
    shared: Any,
    items: Sequence[Item],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    label: str | None = None,
) -> list[Result]:
    """``[function(shared, item) for item in items]`` on the engine (module docstring); raises :class:`TaskError`.

    Serial for ``workers=1`` or a single item; else the engine of an enclosing ``with Engine(...)``
    block if there is one, else one for this call: a local cluster of ``workers`` processes
    (``None``: one per core, at most one per item), or the ``scheduler`` at that address.
    """
    engine = current_engine()
    if engine is not None and scheduler is None and workers != 1:
        return engine.map(function, shared, items, label=label)
    if len(items) <= 1 and scheduler is None:
        workers = 1
    with Engine(workers, scheduler=scheduler) as engine:
        return engine.map(function, shared, items, label=label)

