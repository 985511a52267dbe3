"""The ``wu_redundancy`` experiment (Wu et al. 2009, Figs. 2-3): its motion and its figures.

References: the paper's section 5 (start and goal poses, three phases), the generic
engine's driving forces (pinocchio RNEA + loop closure, independent of the
virtual-work model the experiment plots) from which the test recomputes every
figure, and the claim definition written in the JSON.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pardyn.dynamics import InverseDynamics
from pardyn.experiments.wu_redundancy import WuOptions, paper_motion, sample_times, wu_redundancy


def test_motion_is_the_papers_with_three_phases():
    trajectory = paper_motion(WuOptions())
    np.testing.assert_allclose(trajectory.start, [0.3 - 0.6, 3.2, math.pi / 3])
    np.testing.assert_allclose(trajectory.goal, [0.9 - 0.6, 2.3, 0.0])
    assert trajectory.duration_s == pytest.approx(2.0)
    assert trajectory.accel_time_s == pytest.approx(0.5)
    samples = trajectory.evaluate([0.25, 1.0, 1.75])
    delta = trajectory.goal - trajectory.start
    np.testing.assert_allclose(samples.acceleration[0], delta / (0.5 * 1.5))  # accelerating
    np.testing.assert_allclose(samples.velocity[1], delta / 1.5)  # constant velocity
    np.testing.assert_allclose(samples.acceleration[1], 0.0)
    np.testing.assert_allclose(samples.acceleration[2], -delta / (0.5 * 1.5))  # decelerating


def test_figures_recomputed_from_the_generic_engine(load, tmp_path):
    options = WuOptions(rate_hz=25.0)
    report = wu_redundancy(tmp_path, options)
    saved = json.loads((tmp_path / "wu_redundancy.json").read_text())
    assert saved["claim_held"] == report["claim_held"]
    assert all((tmp_path / f"wu_redundancy_{name}.png").stat().st_size > 10_000 for name in ("wu3r", "wu3n"))
    trajectory = paper_motion(options)
    times = sample_times(trajectory, options.rate_hz)
    samples = trajectory.evaluate(times)
    for name in ("wu3r", "wu3n"):
        robot = load(name)
        generic = InverseDynamics(robot)
        forces = []
        for pose, velocity, acceleration in zip(samples.position, samples.velocity, samples.acceleration):
            q = robot.solve_inverse(pose).q  # generic Newton solver
            forces.append(generic.torques_from_task(q, velocity, acceleration))
        forces = np.array(forces)
        entry = saved["results"][name]
        assert entry["max_gap_to_generic_engine_n"] < 1e-8
        f1, f2 = np.abs(forces[:, 0]), np.abs(forces[:, 1])
        assert entry["max_abs_force_n"]["F1"] == pytest.approx(f1.max(), rel=1e-10)
        assert entry["max_abs_force_n"]["F2"] == pytest.approx(f2.max(), rel=1e-10)
        assert entry["slider_difference"] == pytest.approx(np.max(np.abs(forces[:, 0] - forces[:, 1])) / max(f1.max(), f2.max()))
        assert entry["slider_ratio"] == pytest.approx(f1.max() / f2.max())
    for label in ("F1", "F2", "F4"):
        assert saved["wu3n_over_wu3r"][label] == pytest.approx(
            saved["results"]["wu3n"]["max_abs_force_n"][label] / saved["results"]["wu3r"]["max_abs_force_n"][label])
    held = saved["results"]["wu3r"]["slider_difference"] <= 0.1 and saved["results"]["wu3n"]["slider_ratio"] >= 2.0
    assert saved["claim_held"] == held
