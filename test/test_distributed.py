"""The engine of every multi-run job (pardyn.distributed): serial and Dask results alike, failures named, lost workers."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from pardyn.distributed import Engine, TaskError, TaskFailure, parallel_map


def _draw(scale: float, seed: int) -> np.ndarray:
    """A seeded computation with BLAS in it: a solve of a random system."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(30, 30)) + 30 * np.eye(30)
    if seed == 3:
        raise ValueError(f"seed {seed} is refused")
    return scale * np.linalg.solve(a, rng.normal(size=30))


def _slow(log: Path, item: int) -> tuple[int, int]:
    """Writes which process started ``item``, takes 0.4 s, returns (item squared, the process)."""
    with open(log, "a") as handle:
        handle.write(f"{item} {os.getpid()}\n")
    time.sleep(0.4)
    return item * item, os.getpid()


for _function in (_draw, _slow):  # sent by value (cloudpickle): workers cannot import a test module
    _function.__module__ = "__main__"


def test_cluster_results_equal_the_serial_ones_bitwise_and_failures_name_their_input(dask_engine):
    seeds = [0, 1, 2, 3, 4, 5]
    serial = Engine(1).map(_draw, 2.0, seeds, errors="collect")
    distributed = dask_engine.map(_draw, 2.0, seeds, errors="collect")
    for seed, a, b in zip(seeds, serial, distributed):
        if seed == 3:  # the failing task is named by its input in both paths, the others finished
            assert isinstance(a, TaskFailure) and isinstance(b, TaskFailure)
            assert (a.item, a.error, a.message) == (b.item, b.error, b.message) == ("3", "ValueError",
                                                                                   "seed 3 is refused")
        else:
            assert np.array_equal(a, b)  # bitwise
            rng = np.random.default_rng(seed)  # and the right answer: the residual of the system
            matrix = rng.normal(size=(30, 30)) + 30 * np.eye(30)
            assert np.allclose(matrix @ (a / 2.0), rng.normal(size=30), atol=1e-12)
    with pytest.raises(TaskError, match=r"1 of 6 tasks failed: 3: ValueError: seed 3 is refused") as raised:
        dask_engine.map(_draw, 2.0, seeds, label="draws")
    assert isinstance(raised.value.__cause__, ValueError)


def test_one_worker_runs_in_process_without_a_cluster():
    assert Engine(1).serial
    pids = parallel_map(lambda shared, item: os.getpid(), None, range(3), workers=1)
    assert pids == [os.getpid()] * 3


def test_a_killed_worker_loses_nothing(dask_engine, tmp_path):
    log = tmp_path / "started.txt"
    client = dask_engine.client()
    victim = sorted(client.run(os.getpid).values())[0]
    killer = threading.Timer(0.6, os.kill, (victim, signal.SIGKILL))  # a worker this test started, mid-run
    killer.start()
    results = dask_engine.map(_slow, log, list(range(8)))
    killer.join()
    assert [square for square, _ in results] == [k * k for k in range(8)]
    started = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
    on_victim = {item for item, pid in started if pid == victim}
    assert on_victim, "the killed worker had started tasks"
    finished_by = dict(enumerate(pid for _, pid in results))
    rerun = [item for item in on_victim if finished_by[item] != victim]
    assert rerun, "the task the killed worker was running ran again on another worker"
    assert victim not in {pid for _, pid in results[-4:]}
