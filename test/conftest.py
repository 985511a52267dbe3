"""Shared fixtures: robots are loaded once per session (loading solves the home configuration)."""

from __future__ import annotations

import numpy as np
import pytest

import pardyn


@pytest.fixture(scope="session", autouse=True)
def kernel_cache(tmp_path_factory):
    """Compiled kernels (pardyn.kernels) are built once per test session into a temporary cache."""
    import os

    folder = tmp_path_factory.mktemp("kernels")
    previous = os.environ.get("PARDYN_KERNEL_CACHE")
    os.environ["PARDYN_KERNEL_CACHE"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("PARDYN_KERNEL_CACHE", None)
    else:
        os.environ["PARDYN_KERNEL_CACHE"] = previous


PATHS = ("python", "compiled")
"""The two computation paths of pardyn.kernels: parametrize key accuracy tests over both."""


@pytest.fixture(scope="session")
def load():
    """``load(name, kernels="python")`` returns a cached :class:`pardyn.Robot` (``kernels``: a path of PATHS)."""
    cache: dict[tuple[str, str], pardyn.Robot] = {}

    def get(name: str, kernels: str = "python") -> pardyn.Robot:
        if (name, kernels) not in cache:
            cache[name, kernels] = pardyn.load_robot(name, kernels=kernels)
        return cache[name, kernels]

    return get


def _random_task(robot: pardyn.Robot, rng: np.random.Generator, *, spread: float = 0.05) -> np.ndarray:
    home = robot.home[robot.task_indices]
    return home + rng.uniform(-spread, spread, size=home.shape)


def _angle_distance(a: np.ndarray, b: np.ndarray, angles: np.ndarray) -> np.ndarray:
    delta = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    delta[angles] = (delta[angles] + np.pi) % (2 * np.pi) - np.pi
    return np.abs(delta)


@pytest.fixture
def random_task():
    """``random_task(robot, rng, spread=0.05)``: a task pose within ``spread`` (m, rad) of home."""
    return _random_task


@pytest.fixture
def angle_distance():
    """``angle_distance(a, b, angles)``: |a - b| with angle differences taken modulo 2 pi."""
    return _angle_distance


@pytest.fixture(scope="session", autouse=True)
def _session_engine():
    """One engine for every parallel map of the session (pardyn.parallel): a ``LocalCluster`` of two worker
    processes (loopback, no dashboard, quiet logs), started by the first map that needs it, not per call."""
    from pardyn.parallel import Engine

    with Engine(2) as engine:
        yield engine


@pytest.fixture(scope="session")
def dask_engine(_session_engine):
    """The session's engine, started: a real Dask ``LocalCluster`` of two worker processes."""
    _session_engine.client(2)  # start it now: the tests time what they run, not the start
    return _session_engine
