"""Runs of the model shared across identifications (issue 38): the closed-loop estimators of one benchmark draw
start from the same estimate; :class:`SharedRuns` simulates that start once. The reference is an independent
simulation of the same model without sharing; the closed-loop simulations are counted at the runner."""

from __future__ import annotations

import numpy as np

import pardyn.simulation.runner as runner
from pardyn.control import JointReference
from pardyn.identification.base_parameters import base_parameters
from pardyn.identification.model_simulation import ClosedLoopSetup, ModelSimulator, SharedRuns
from pardyn.simulation.identification_runs import controller


def test_a_kept_start_is_simulated_once_and_equals_an_independent_run(load, monkeypatch):
    """Two simulators (two identify calls' worth) of the same model, recording and setup: with the estimate kept,
    the second run is the first one's (one simulation) and equals a simulation without sharing; an estimate not
    kept, another setup object or another start are simulated each time."""
    robot = load("five_bar")
    layout = robot.nominal_parameters
    names = layout.names[:10]  # the first body's parameters, each its own base parameter
    base = base_parameters(np.random.default_rng(0).normal(size=(20, 10)), names=names)
    chi = np.array([layout.as_dict()[name] for name in names])
    target = robot.home[robot.actuated_indices] + 0.05
    setup = ClosedLoopSetup(controller(robot), lambda t: JointReference.hold(target))
    times = np.arange(30) * 1e-3
    simulations = []
    real = runner.run_closed_loop
    monkeypatch.setattr(runner, "run_closed_loop", lambda *a, **k: simulations.append(1) or real(*a, **k))
    shared = SharedRuns()
    shared.keep(chi)

    def run(chi, shared=shared, setup=setup, start=robot.home):
        return ModelSimulator(robot, layout, base, shared).run(chi, setup, start_time=0.0, start=start, times=times)

    first, second = run(chi), run(chi)
    assert len(simulations) == 1 and shared.hits == 1
    alone = run(chi, shared=None)
    assert len(simulations) == 2
    for name in ("q", "qdot", "qddot", "tau"):
        np.testing.assert_array_equal(getattr(second, name), getattr(alone, name))
        np.testing.assert_array_equal(getattr(first, name), getattr(alone, name))
    assert np.ptp(alone.q[:, robot.actuated_indices]) > 1e-4  # the PD moved the joints: a run, not a rest
    run(1.01 * chi), run(1.01 * chi)  # not kept
    run(chi, setup=ClosedLoopSetup(setup.law, setup.reference))  # another setup object
    run(chi, start=robot.solve_forward(target).q)  # another start
    assert len(simulations) == 6 and shared.hits == 1
