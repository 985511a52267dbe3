"""IDIM-IV and DIDIM (pardyn.identification.estimators) against independent references.

* A hand-built errors-in-variables case: ``Y = X chi + e`` observed through a
  noisy regressor ``W = X + U``. Least squares is biased towards zero by the
  known factor ``(S_x + S_u)^-1 S_x`` (attenuation); instruments ``Z = X``
  (noise-free, what the closed-loop simulation provides) are consistent.
* The MuJoCo plant: a short five-bar run, the plant's as-built parameters as the truth.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pardyn.bags.joint_states import write_joint_states
from pardyn.cli import main
from pardyn.errors import InputError
from pardyn.simulation.identification_runs import Run, record_runs
from pardyn.identification.errors import MissingRecordingError
from pardyn.identification.least_squares import LinearSystem, ols
from pardyn.identification.estimators import EstimatorContext, IterationOptions, estimate, instrumental_variables
from pardyn.identification.pipeline import IdentificationSettings, identify
from pardyn.identification.model_simulation import ClosedLoopSetup

CHI = np.array([2.0, -1.0, 0.5])


def errors_in_variables(rng, rows=20000, sigma_u=0.5, sigma_e=0.1):
    x = rng.standard_normal((rows, 3)) * [1.0, 0.8, 1.2]
    w = x + sigma_u * rng.standard_normal(x.shape)
    y = x @ CHI + sigma_e * rng.standard_normal(rows)
    return x, LinearSystem(w, y, (rows // 2, rows // 2)), sigma_u


def test_least_squares_is_attenuated_by_regressor_noise_and_iv_is_not():
    x, system, sigma_u = errors_in_variables(np.random.default_rng(0))
    s_x = x.T @ x / len(x)
    attenuated = np.linalg.solve(s_x + sigma_u**2 * np.eye(3), s_x @ CHI)  # plim of LS, closed form
    least_squares = ols(system.W, system.Y).chi
    np.testing.assert_allclose(least_squares, attenuated, atol=0.03)
    assert np.all(np.abs(least_squares - CHI) > 0.05)  # visibly biased
    iv = instrumental_variables(system, x)
    assert iv.method == "iv"
    assert np.all(np.abs(iv.chi - CHI) < 4 * iv.std)  # consistent, honest standard deviations
    np.testing.assert_allclose(iv.chi, CHI, atol=0.03)


@pytest.mark.parametrize("name", ["iv", "didim"])
def test_iterations_reach_the_noise_free_model_and_report_convergence(name):
    x, system, _ = errors_in_variables(np.random.default_rng(1))

    def simulate(chi):  # the "model" run: noise-free regressor, its output
        return LinearSystem(x, x @ chi, system.block_sizes)

    result = estimate(name, system, IterationOptions(start="nominal"),
                      EstimatorContext(simulate=simulate, start=np.array([1.0, 1.0, 1.0])))
    assert result.converged and 1 <= result.iterations <= 3 and result.estimator == name
    assert result.changes[-1] < 1e-3 and result.start == "nominal"
    np.testing.assert_allclose(result.estimate.chi, CHI, atol=0.03)
    stopped = estimate(name, system, {"estimator_iterations": 1}, EstimatorContext(simulate=simulate, start=np.zeros(3)))
    assert not stopped.converged and stopped.iterations == 1 and stopped.changes[0] > 0.5


def test_simulation_estimators_refuse_to_run_without_a_simulation():
    _, system, _ = errors_in_variables(np.random.default_rng(2), rows=100)
    with pytest.raises(InputError, match="didim estimator needs the closed-loop simulation"):
        estimate("didim", system)
    with pytest.raises(InputError, match="unknown estimator 'gls'.*'wls', 'iv', 'didim'"):
        estimate("gls", system)


@pytest.fixture(scope="module")
def five_bar_run(tmp_path_factory):
    """2.5 s of the five-bar on the MuJoCo plant, 5 % torque noise."""
    return record_runs("five_bar", [Run("unloaded", 1, 2.5)], tmp_path_factory.mktemp("five_bar"),
                       show_progress=False, torque_noise=0.05, workers=1)


def test_iv_and_didim_recover_the_mujoco_plant(five_bar_run, load, tmp_path, capsys):
    """WLS and DIDIM through the Python API, IV through ``pardyn identify`` (controller file, recorded reference)."""
    robot = load("five_bar")
    bag = five_bar_run.bags["unloaded"]
    with pytest.raises(MissingRecordingError, match="needs the controller and the reference of each of the 1 bags"):
        identify(robot, [bag], settings=IdentificationSettings(estimator="iv"), show_progress=False)
    setups = [ClosedLoopSetup(five_bar_run.controller, five_bar_run.references["unloaded"])]
    truth = five_bar_run.truth.as_dict()
    results = {}
    for name in ("wls", "didim"):
        settings = IdentificationSettings(estimator=name, estimator_iterations=1)
        results[name] = identify(robot, [bag], settings=settings, closed_loop=setups, show_progress=False).as_json()
    law = five_bar_run.controller
    controller = tmp_path / "controller.yaml"
    controller.write_text(f"controller:\n  ros__parameters:\n    law: pd\n    rate: 1000.0\n"
                          f"    kp: {law.kp.tolist()}\n    kd: {law.kd.tolist()}\n")
    out = tmp_path / "iv.json"
    command = ["identify", "--robot", "five_bar", "--bag", str(bag), "--out", str(out), "--estimator", "iv"]
    assert main(command) == 2 and "pass --controller FILE" in capsys.readouterr().err.splitlines()[-1]
    assert main([*command, "--controller", str(controller), "--max-iterations", "1"]) == 0, capsys.readouterr().err
    results["iv"] = json.loads(out.read_text())
    for name, data in results.items():
        assert data["estimator"]["name"] == name and data["base_parameters"][0]["std_pct"] > 0
        if name != "wls":
            assert data["estimator"]["iterations"] == 1 and len(data["estimator"]["changes"]) == 1
    errors = {name: _base_error(robot, data, truth) for name, data in results.items()}
    assert errors["wls"] < 0.05 and errors["iv"] < 0.05 and errors["didim"] < 0.05, errors
    # a bag without the reference topic: one line naming it
    plain = write_joint_states(tmp_path / "plain", np.arange(3000) * 1e-3, list(robot.actuated_names),
                               np.tile(robot.home[robot.actuated_indices], (3000, 1)), effort=np.zeros((3000, 2)))
    assert main(["identify", "--robot", "five_bar", "--bag", str(plain), "--out", str(tmp_path / "x.json"),
                 "--estimator", "didim", "--controller", str(controller)]) == 2
    assert "record the topic reference/trajectory" in capsys.readouterr().err.splitlines()[-1]


def _base_error(robot, data, truth) -> float:
    """||chi - chi_true|| / ||chi_true|| over the base parameters of a RESULT.json (regrouping from its relations)."""
    from pardyn.dynamics.regressor import Regressor
    from pardyn.identification.base_parameters import base_parameters, symmetric_order

    rng = np.random.default_rng(0)
    regressor = Regressor(robot)
    columns = [k for k, n in enumerate(regressor.names) if not n.endswith("_payload")]
    names = [regressor.names[k] for k in columns]
    rows = []
    for _ in range(40):  # the structural base parameters, as the pipeline regroups them
        q = robot.solve_forward(robot.home[robot.actuated_indices] + rng.uniform(-0.05, 0.05, 2), start=robot.home).q
        qdot, qddot = robot.differential.states_from(q, robot.actuated_indices, *rng.standard_normal((2, 2)))
        rows.append(regressor.matrix(q, qdot, qddot)[:, columns])
    base = base_parameters(np.concatenate(rows), names=names, order=symmetric_order(names))
    assert list(base.names) == [row["name"] for row in data["base_parameters"]]
    true_base = base.from_standard(np.array([truth[n] for n in names]))
    values = np.array([row["value"] for row in data["base_parameters"]])
    return float(np.linalg.norm(values - true_base) / np.linalg.norm(true_base))


def test_maximum_likelihood_through_the_pipeline_on_the_mujoco_plant(five_bar_run, load, monkeypatch):
    """ML (position output error, the covariance estimated; CLOE is the same code with the identity) from the WLS
    start on the MuJoCo run (5 % torque noise, 2^17-count encoders): one Levenberg-Marquardt step keeps the base
    parameters within 5 % of the plant's, as WLS, IV and DIDIM do. With the default linearised sensitivity the
    start's run gives the step's sensitivity: no differences (15 closed-loop simulations of 2.5 s with them, 2
    here; at 250 Hz instead of the robot's 1 kHz they cost 4 times less but the model's loop is another one)."""
    from pardyn.identification.model_simulation import ModelSimulator  # noqa: PLC0415

    robot = load("five_bar")
    setups = [ClosedLoopSetup(five_bar_run.controller, five_bar_run.references["unloaded"])]
    settings = IdentificationSettings(estimator="ml", estimator_iterations=1)
    runs, simulate = [], ModelSimulator._closed_loop
    monkeypatch.setattr(ModelSimulator, "_closed_loop", lambda *args: runs.append(1) or simulate(*args))
    data = identify(robot, [five_bar_run.bags["unloaded"]], settings=settings, closed_loop=setups,
                    show_progress=False).as_json()
    assert len(runs) < 5, len(runs)  # the start's run, the candidates; 13 base parameters: no differences
    assert data["estimator"]["name"] == "ml" and data["estimator"]["iterations"] == 1
    assert data["estimator"]["output_errors"][0] < 0.05  # the WLS start's positions: within 5 % of the motion
    assert _base_error(robot, data, five_bar_run.truth.as_dict()) < 0.05


@pytest.fixture(scope="module")
def delta_run(tmp_path_factory):
    """2 s of the Delta on the MuJoCo plant, no torque noise (2^17-count encoders)."""
    return record_runs("delta", [Run("unloaded", 1, 2.0)], tmp_path_factory.mktemp("delta"), show_progress=False,
                       torque_noise=0.0, workers=1)


def test_delta_closed_loop_estimators_start_from_the_physically_consistent_wls(delta_run, load, monkeypatch, capsys):
    """The Delta's WLS estimate on the benchmark's 10 s draws gives a model whose reduced mass matrix is singular
    (measured: every IV, DIDIM, CLOE and ML draw failed at its first simulation). ``estimator_start="physical"``
    starts from the physically consistent WLS (positive definite pseudo-inertias): IV converges from it to the
    WLS's fit; with the default start, a WLS model that cannot be simulated (forced here) falls back to it in one
    line, and an iterate that cannot be simulated ends the iteration at the last estimate instead of failing."""
    from pardyn.identification.model_simulation import ModelSimulationError, ModelSimulator  # noqa: PLC0415

    robot = load("delta")
    bag = delta_run.bags["unloaded"]
    setups = [ClosedLoopSetup(delta_run.controller, delta_run.references["unloaded"])]
    wls = identify(robot, [bag], show_progress=False).estimate
    result = identify(robot, [bag], settings=IdentificationSettings(estimator="iv", estimator_start="physical"),
                      closed_loop=setups, show_progress=False)
    assert result.estimator.start == "physical" and result.estimator.converged, result.estimator
    assert result.estimate.relative_error < 1.05 * wls.relative_error
    run = ModelSimulator.run

    def without_the_nominal_anchor(self, chi, *args, **kwargs):  # the WLS estimate's model: "singular"
        if self.layout is robot.nominal_parameters:
            raise ModelSimulationError("the model with the current estimate cannot be simulated in closed loop: "
                                       "delta: the reduced mass matrix W^T M W is singular (forced)")
        return run(self, chi, *args, **kwargs)

    monkeypatch.setattr(ModelSimulator, "run", without_the_nominal_anchor)
    result = identify(robot, [bag], settings=IdentificationSettings(estimator="didim", estimator_iterations=1),
                      closed_loop=setups, show_progress=True)
    said = capsys.readouterr().err
    assert "didim: the WLS estimate's model cannot be simulated" in said and "physically consistent WLS" in said
    assert result.estimator.start == "physical" and result.estimator.iterations == 1
    assert result.estimate.relative_error < 1.5 * wls.relative_error
