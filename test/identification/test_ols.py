"""The ``ols`` estimator (IDIM-OLS, Briot et al. 2015 eqs. 44-47) against numpy and the nominal model.

* A hand-built system: the estimate is ``numpy.linalg.lstsq``'s, the standard deviations
  ``sqrt(diag(sigma^2 (W^T W)^-1))`` with ``sigma^2 = ||Y - W chi||^2 / (r - n)`` from the normal
  equations (the estimator uses QR: an independent computation).
* ``pardyn identify --estimator ols`` on a bag whose efforts are the nominal model's torques: the
  estimator is selectable by name and the identified model explains them.
"""

from __future__ import annotations

import json

import numpy as np

from pardyn.bags.joint_states import write_joint_states
from pardyn.cli import main
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.identification.estimators import ESTIMATORS, EstimatorContext, NoOptions, estimate
from pardyn.identification.least_squares import LinearSystem


def test_ols_is_numpys_least_squares_with_eq_47_standard_deviations():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((300, 4)) * [1.0, 2.0, 0.5, 3.0]
    chi = np.array([1.5, -0.7, 2.0, 0.1])
    y = w @ chi + 0.05 * rng.standard_normal(300) * np.repeat([1.0, 4.0, 0.5], 100)  # blocks of unequal noise
    system = LinearSystem(w, y, (100, 100, 100), names=("a", "b", "c", "d"))
    result = ESTIMATORS.get("ols").build(system, NoOptions(), EstimatorContext())
    expected, residual, _, _ = np.linalg.lstsq(w, y, rcond=None)
    sigma2 = float(residual[0]) / (300 - 4)
    std = np.sqrt(np.diag(sigma2 * np.linalg.inv(w.T @ w)))
    assert result.estimator == "ols" and result.iterations == 0 and result.converged
    np.testing.assert_allclose(result.estimate.chi, expected, rtol=1e-10)
    np.testing.assert_allclose(result.estimate.std, std, rtol=1e-8)
    np.testing.assert_allclose(result.estimate.relative_std, 100 * std / np.abs(expected), rtol=1e-8)
    assert result.estimate.names == ("a", "b", "c", "d")
    # the same through the registry's entry point, and not a closed-loop estimator (needs no simulation)
    np.testing.assert_allclose(estimate("ols", system).estimate.chi, expected, rtol=1e-10)
    assert not ESTIMATORS.get("ols").closed_loop
    # WLS weights the noisy block down: a different estimate on the same data
    assert np.linalg.norm(estimate("wls", system).estimate.chi - expected) > 1e-4


def test_cli_selects_ols_by_name(load, tmp_path):
    robot = load("ur5e")
    t = np.arange(0.0, 12.0, 2e-3)  # 500 Hz
    rng = np.random.default_rng(4)
    frequencies = rng.uniform(0.2, 0.6, (3, 6))
    phases = rng.uniform(0, 2 * np.pi, (3, 6))
    q = robot.home + sum(0.3 * np.sin(2 * np.pi * f * t[:, None] + p) for f, p in zip(frequencies, phases))
    qdot = sum(0.3 * 2 * np.pi * f * np.cos(2 * np.pi * f * t[:, None] + p) for f, p in zip(frequencies, phases))
    qddot = sum(-0.3 * (2 * np.pi * f) ** 2 * np.sin(2 * np.pi * f * t[:, None] + p) for f, p in zip(frequencies, phases))
    torque = InverseDynamics(robot).torques_batch(q, qdot, qddot)  # the nominal model's torques, exactly
    bag = write_joint_states(tmp_path / "bag", t, list(robot.actuated_names), q, effort=torque)
    out = tmp_path / "result.json"
    assert main(["identify", "--robot", "ur5e", "--bag", str(bag), "--estimator", "ols", "--effort-delay", "0",
                 "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["estimator"]["name"] == "ols" and data["estimator"]["iterations"] == 0
    assert data["fit"]["relative_error_norm"] < 0.01  # the nominal model explains its own torques
