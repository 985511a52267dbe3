"""EKF and UKF (the base parameters as random-walk states) against independent references.

* The five-bar (closed loop) driven by a PD law on pardyn's closed-loop forward dynamics with
  as-built (perturbed) parameters: the accelerations are the forward dynamics' at the samples, so
  the torques are exactly ``W chi_true`` (chi_true: the plant's parameters regrouped) and both filters
  must return the truth: the EKF (square-root information form, diffuse prior) to 1e-9 of ``||chi||``,
  the UKF (covariance form, prior 1e3, three passes) to 1e-8.
* With torque noise and constant parameters, the Kalman filter of ``y = W chi + v`` ends at the
  weighted least-squares estimate (Gautier and Poignet 2001): the EKF equals eq. (48)'s WLS to 1e-7
  of ``||chi||``.
* A parameter that changes half-way (a step of the truth): with a random walk the EKF's last
  estimate follows the second half; without one it stays between the two.
"""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.simulation.identification_runs import as_built_parameters
from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.regressor import Regressor
from pardyn.identification.base_parameters import base_parameters, symmetric_order
from pardyn.identification.estimators import ESTIMATORS, estimate
from pardyn.identification.least_squares import LinearSystem
from pardyn.robot import load_robot


@pytest.fixture(scope="module")
def five_bar():
    """Noise-free closed-loop data of the five-bar (3 s at 500 Hz): the reduced system and the true base values."""
    robot = load_robot("five_bar")
    truth = as_built_parameters(robot.nominal_parameters, seed=3)
    actuated = np.asarray(robot.actuated_indices)
    q0 = robot.solve_inverse({"x": 0.0, "y": 0.3}).q
    home = q0[actuated]

    def torque(t, q, qdot):
        reference = home + 0.3 * np.array([np.sin(2.1 * t) + 0.3 * np.sin(5.3 * t),
                                           np.sin(1.7 * t + 0.5) + 0.3 * np.sin(4.1 * t)])
        return 30.0 * (reference - q[actuated]) - 2.0 * qdot[actuated]

    run = simulate(ForwardDynamics(robot, truth), torque, q0, np.zeros(robot.model.nv), duration=3.0, dt=0.002)
    regressor = Regressor(robot)
    matrices, torques = regressor.equations(run.q, run.qdot, run.qddot, run.tau)
    rows = matrices.shape[1]
    system = LinearSystem(np.vstack([matrices[:, j] for j in range(rows)]),
                          np.concatenate([torques[:, j] for j in range(rows)]), (len(run.t),) * rows, regressor.names)
    base = base_parameters(system.W, names=regressor.names, order=symmetric_order(regressor.names))
    values = truth.as_dict()
    return base.reduce_system(system), base.from_standard(np.array([values[n] for n in base.standard_names]))


@pytest.mark.parametrize(("name", "tolerance"), [("ekf", 1e-9), ("ukf", 1e-8)])
def test_noise_free_closed_loop_data_give_the_truth(five_bar, name, tolerance):
    system, truth = five_bar
    assert np.linalg.norm(system.W @ truth - system.Y) < 1e-12 * np.linalg.norm(system.Y)  # the data are exact
    result = estimate(name, system)
    assert result.estimator == name and result.estimate.method == name
    assert np.linalg.norm(result.estimate.chi - truth) < tolerance * np.linalg.norm(truth)
    assert result.estimate.relative_error < 1e-8


def test_constant_parameters_ekf_is_weighted_least_squares(five_bar):
    system, truth = five_bar
    rng = np.random.default_rng(0)
    noise = np.concatenate([s * rng.standard_normal(n) for s, n in zip([0.05, 0.2], system.block_sizes)])
    noisy = LinearSystem(system.W, system.Y + noise, system.block_sizes, system.names)
    weighted = estimate("wls", noisy).estimate
    filtered = estimate("ekf", noisy).estimate
    assert np.linalg.norm(filtered.chi - weighted.chi) < 1e-7 * np.linalg.norm(truth)
    np.testing.assert_allclose(filtered.std, weighted.std, rtol=1e-3)


def test_random_walk_follows_a_parameter_that_changes():
    """``y = x1 a + x2 b`` with ``b`` stepping from 1 to 2 half-way: a closed form (the step) as the truth."""
    rng = np.random.default_rng(1)
    rows = 2000
    x = rng.standard_normal((rows, 2))
    b = np.where(np.arange(rows) < rows // 2, 1.0, 2.0)
    system = LinearSystem(x, x[:, 0] * 3.0 + x[:, 1] * b + 1e-3 * rng.standard_normal(rows), (rows,), ("a", "b"))
    constant = estimate("ekf", system).estimate.chi
    assert 1.3 < constant[1] < 1.7  # the average of the two halves
    for name in ("ekf", "ukf"):
        tracking = estimate(name, system, {"estimator_process_noise": 1e4}).estimate.chi
        assert abs(tracking[1] - 2.0) < 0.02 and abs(tracking[0] - 3.0) < 0.02, (name, tracking)


def test_filters_are_registered_with_their_options():
    assert {"ekf", "ukf"} <= set(ESTIMATORS.names)
    assert not ESTIMATORS.get("ekf").closed_loop and not ESTIMATORS.get("ukf").closed_loop
    options = ESTIMATORS.get("ukf").Options(passes=2)
    assert options.passes == 2 and options.process_noise == 0.0


def test_identify_with_the_filters_writes_their_reports(tmp_path, vendor):
    """``pardyn identify --estimator ekf|ukf --report`` on a maker's log of the UR5e (torques from the truth, 1 %
    noise): the report names the filter, and with constant parameters the held-out error is WLS's."""
    import json  # noqa: PLC0415

    import pardyn  # noqa: PLC0415
    from pardyn.cli import main  # noqa: PLC0415

    robot = pardyn.load_robot("ur5e")
    truth = vendor.truth(robot)
    vendor.write(tmp_path / "run.csv", robot, truth, 4.0, seed=3)
    vendor.write(tmp_path / "held_out.csv", robot, truth, 3.0, seed=4)
    common = ["identify", "--robot", "ur5e", "--run", str(tmp_path / "run.csv"), "--validate",
              str(tmp_path / "held_out.csv"), "--columns", vendor.columns, "--time-unit", "samples", "--rate", "1000"]
    assert main([*common, "--out", str(tmp_path / "wls.json")]) == 0
    reference = json.loads((tmp_path / "wls.json").read_text())["validation"]["relative_error_norm"]
    for name in ("ekf", "ukf"):
        assert main([*common, "--estimator", name, "--out", str(tmp_path / f"{name}.json"),
                     "--report", str(tmp_path / name)]) == 0
        text = (tmp_path / name / "report.md").read_text()
        assert f"estimator: {name} ({ESTIMATORS.get(name).summary})" in text
        error = json.loads((tmp_path / f"{name}.json").read_text())["validation"]["relative_error_norm"]
        assert abs(error - reference) < 1e-6 * reference, (name, error, reference)
