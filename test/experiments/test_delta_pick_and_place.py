"""``delta_pick_and_place``: the cycle's geometry and time law, exact vs simplified torques, a short CTC run.

Independent references: the cycle's corners written here (25 mm up, 305 mm across), finite
differences of the path for its rates, Codourey's simplification being exact when the bars
are massless (the difference comes from the bars only), the MuJoCo plant's true pose.
"""

from __future__ import annotations

import json

import numpy as np

from pardyn.dynamics.lumped import split_bar_masses
from pardyn.experiments.delta_pick_and_place import (
    BARS,
    DeltaOptions,
    _joint_reference,
    delta_pick_and_place,
    model_difference,
    pick_and_place_path,
)


def test_cycle_geometry_and_rates(load):
    robot = load("delta")
    options = DeltaOptions(cycle_s=0.6)
    t, x, xdot, xddot = pick_and_place_path(robot, options)
    home = robot.home[robot.task_indices]
    start = home - [0.1525, 0.0, 0.0]
    assert np.allclose(x[0], start) and np.allclose(x[-1], start)
    assert np.isclose(x[:, 2].max() - start[2], 0.025) and np.isclose(x[:, 0].max() - start[0], 0.305)
    assert np.isclose(t[-1], options.start_s + 0.6 + options.settle_s, atol=2e-3)
    assert np.allclose(np.diff(t), 1e-3, atol=1e-9)  # a uniform 1 kHz grid
    # the rates integrate back (trapezoids, error ~ h^2 / 12 x peak derivative x duration)
    from scipy.integrate import cumulative_trapezoid

    assert np.allclose(cumulative_trapezoid(xdot, t, axis=0, initial=0.0), x - x[0], atol=1e-5)
    assert np.allclose(cumulative_trapezoid(xddot, t, axis=0, initial=0.0), xdot, atol=2e-3)


def test_models_differ_by_the_bars_only(load):
    robot = load("delta")
    nominal = robot.nominal_parameters
    t, x, xdot, xddot = pick_and_place_path(robot, DeltaOptions())
    _, q, qdot, qddot = _joint_reference(robot, t[::20], x[::20], xdot[::20], xddot[::20])
    massless = nominal.with_values({f"{p}_{bar}": 0.0 for bar in BARS for p in ("xx", "xy", "xz", "yy", "yz", "zz",
                                                                               "mx", "my", "mz", "m")})
    same = model_difference(robot, massless, split_bar_masses(robot, massless, BARS), q, qdot, qddot, 0.0)
    assert same["max_pct"] < 1e-9
    differ = model_difference(robot, nominal, split_bar_masses(robot, nominal, BARS), q, qdot, qddot, 0.0)
    assert 1.0 < differ["max_pct"] < 30.0


def test_short_ctc_run(tmp_path):
    options = DeltaOptions(start_s=0.01, settle_s=0.0, cases=("empty",), laws=("ctc",),
                           workers=1, show_progress=False, plots=False)
    report = delta_pick_and_place(tmp_path, options)
    figures = report["results"]["empty"]["ctc"]
    assert figures["max_position_error_mm"] < 5.0  # true plant pose within 5 mm of the 305 mm cycle
    assert np.all(np.array(figures["max_torque_nm"]) > 1.0)
    assert json.loads((tmp_path / "delta_pick_and_place.json").read_text())["claim_held"] is None
