"""Physically consistent estimates (pseudo-inertia LMIs): physical always, unbiased on clean data, optimal.

Independent references: the second moment of a point cloud (the pseudo-inertia's
definition), pinocchio's rigid-body inertia (mass > 0, inertia about the centre of
mass positive definite and satisfying the triangle inequalities), the as-built
parameters behind synthetic data, and a scipy solution of the same problem in a
Cholesky parametrisation ``J = L L^T`` (no SDP solver).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

import pardyn
from pardyn.dynamics.parameters import inertia_from_standard, read_parameter_file
from pardyn.dynamics.regressor import Regressor
from pardyn.simulation.identification_runs import Run, as_built_parameters, record_runs
from pardyn.identification import base_parameters, relative_error_norm, stack_equations, symmetric_order, wls
from pardyn.identification.physical import physical_estimate, pseudo_inertia
from pardyn.identification.pipeline import IdentificationSettings, identify
from pardyn.identification.report import write_report


def _standard_of_points(masses: np.ndarray, points: np.ndarray) -> np.ndarray:
    """[xx xy xz yy yz zz mx my mz m] of point masses: I = sum m (|r|^2 1 - r r^T) at the origin."""
    inertia = sum(m * (r @ r * np.eye(3) - np.outer(r, r)) for m, r in zip(masses, points))
    moment = masses @ points
    return np.array([inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2], inertia[2, 2],
                     *moment, masses.sum()])


def _physical_by_pinocchio(standard: np.ndarray) -> bool:
    """Rigid body: m > 0, inertia about the com positive definite and within the triangle inequalities."""
    if standard[9] <= 0.0:
        return False
    principal = np.sort(np.linalg.eigvalsh(inertia_from_standard(standard).inertia))
    return bool(principal[0] > 0.0 and principal[2] < principal[0] + principal[1])


def test_pseudo_inertia_is_the_second_moment_of_the_mass():
    """J = sum m [r; 1][r; 1]^T for point masses (Wensing et al. 2017, eq. 5)."""
    rng = np.random.default_rng(0)
    masses, points = rng.uniform(0.1, 2.0, 7), rng.normal(size=(7, 3)) * 0.3
    expected = sum(m * np.outer(np.append(r, 1.0), np.append(r, 1.0)) for m, r in zip(masses, points))
    np.testing.assert_allclose(pseudo_inertia(_standard_of_points(masses, points)), expected, atol=1e-12)


def _closed_states(robot, *, seed, count, position, velocity, acceleration):
    """Random closed-loop states around home: task pose, rate and acceleration drawn, tree solved."""
    rng = np.random.default_rng(seed)
    center = robot.home[robot.task_indices]
    q = np.empty((count, robot.nv))
    qdot, qddot = np.empty_like(q), np.empty_like(q)
    start = robot.home
    for k in range(count):
        q[k] = start = robot.solve_inverse(center + rng.uniform(-position, position, center.size), start=start).q
        _, qdot[k], qddot[k] = robot.differential.task_states(
            q[k], rng.normal(size=center.size) * velocity, rng.normal(size=center.size) * acceleration)
    return q, qdot, qddot


def _synthetic(name, *, states, noise, noise_seed=0):
    """System ``Y = W_st phi_true + noise`` (payload columns dropped), base parameters, WLS, truth."""
    robot = pardyn.load_robot(name)
    layout = robot.nominal_parameters
    regressor = Regressor(robot)
    columns = [k for k, n in enumerate(regressor.names) if not n.endswith("_payload")]
    names = [regressor.names[k] for k in columns]
    truth = as_built_parameters(layout, seed=3).vector()[columns]
    observation = regressor.matrix(*_closed_states(robot, **states))[:, :, columns]
    measured = observation @ truth
    measured = measured + noise * measured.std() * np.random.default_rng(noise_seed).normal(size=measured.shape)
    system = stack_equations(measured, observation, names=names)
    base = base_parameters(system.W, names=names, order=symmetric_order(names))
    reduced = base.reduce_system(system)
    estimate = wls(reduced.W, reduced.Y, block_sizes=reduced.block_sizes, names=reduced.names)
    return layout, system, base, estimate, truth


@pytest.mark.parametrize("name", ["five_bar", "rrr3"])
def test_noisy_poorly_exciting_data_still_give_physical_bodies(name):
    """60 samples of slow, small motions with 30 % noise: the WLS gives a negative friction, the SDP cannot."""
    states = dict(seed=1, count=60, position=0.01, velocity=0.02, acceleration=0.2)
    layout, system, base, estimate, _ = _synthetic(name, states=states, noise=0.3)
    unconstrained = dict(zip(estimate.names, estimate.chi))
    friction = [n for n in unconstrained if n.startswith(("fv_", "fs_"))]  # base parameters alone: >= 0 if physical
    assert min(unconstrained[n] for n in friction) < 0.0  # the unconstrained estimate is not physical
    result = physical_estimate(system, base, layout, block_sigmas=estimate.block_sigmas)
    for body, values in result.eigenvalues.items():
        standard = result.values[[result.names.index(f"{p}_{body}") for p in
                                  ("xx", "xy", "xz", "yy", "yz", "zz", "mx", "my", "mz", "m")]]
        assert np.linalg.eigvalsh(pseudo_inertia(standard))[0] > 0.0, body
        assert _physical_by_pinocchio(standard), body
        assert values[0] >= 0.99 * result.margins[body]
    projected = dict(zip(result.base_names, result.base_values))
    assert min(projected[n] for n in friction) >= -1e-9
    # the price of physical consistency: a slightly larger residual, never a smaller one
    assert estimate.relative_error <= result.relative_error < estimate.relative_error + 0.05
    # its reward: better torques on held-out exciting states of the same (physical) truth
    _, exciting, _, _, _ = _synthetic(name, states=dict(seed=7, count=100, position=0.04, velocity=0.3,
                                                        acceleration=3.0), noise=0.0)
    held_out = exciting.W[:, base.independent]
    unconstrained_error = relative_error_norm(exciting.Y, held_out @ estimate.chi)
    assert relative_error_norm(exciting.Y, held_out @ result.base_values) < 0.7 * unconstrained_error


@pytest.mark.parametrize("name", ["five_bar", "dualv"])
def test_clean_exciting_data_give_the_unconstrained_base_parameters(name):
    """Noise-free, exciting data of a physical truth: the SDP's K phi is the WLS estimate (and the truth)."""
    states = dict(seed=2, count=80, position=0.04, velocity=0.3, acceleration=3.0)
    layout, system, base, estimate, truth = _synthetic(name, states=states, noise=0.0)
    result = physical_estimate(system, base, layout, block_sigmas=estimate.block_sigmas)
    expected = base.from_standard(truth)
    np.testing.assert_allclose(estimate.chi, expected, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(result.base_values, estimate.chi, rtol=1e-4, atol=1e-6 * np.abs(expected).max())
    assert result.relative_error < 1e-5
    assert result.min_eigenvalue > 0.0


def _parameters_of_pseudo_inertia(matrix: np.ndarray) -> np.ndarray:
    """Inverse of the pseudo-inertia map: m = J_33, h = J[:3, 3], I = tr(Sigma) 1 - Sigma."""
    sigma = matrix[:3, :3]
    inertia = np.trace(sigma) * np.eye(3) - sigma
    return np.array([inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2], inertia[2, 2],
                     *matrix[:3, 3], matrix[3, 3]])


def test_one_body_optimum_matches_a_cholesky_parametrised_scipy_solution():
    """min ||W phi - Y||^2 s.t. J(phi) >= 0 for one body, solved without SDP: J = L L^T, BFGS over L."""
    robot = pardyn.load_robot("five_bar")
    layout = robot.nominal_parameters
    names = [f"{p}_platform" for p in ("xx", "xy", "xz", "yy", "yz", "zz", "mx", "my", "mz", "m")]
    rng = np.random.default_rng(4)
    observation = rng.normal(size=(40, 10)) * np.array([10.0] * 6 + [3.0] * 3 + [1.0])
    wanted = np.array([0.01, 0.002, 0.0, 0.01, 0.0, -0.004, 0.05, -0.02, 0.0, -0.1])  # negative mass, zz
    measured = observation @ wanted + 0.01 * rng.normal(size=40)
    system = stack_equations(measured[:, None], observation[:, None, :], names=names)
    base = base_parameters(system.W, names=names)
    assert base.n_base == 10
    result = physical_estimate(system, base, layout, margin=0.0)  # all 10 identifiable: no regularisation

    def cost(phi):
        return float(np.sum((observation @ phi - measured) ** 2))

    lower = np.tril_indices(4)

    def cost_of_factor(values):
        factor = np.zeros((4, 4))
        factor[lower] = values
        return cost(_parameters_of_pseudo_inertia(factor @ factor.T))

    best = min((optimize.minimize(cost_of_factor, start, method="BFGS", options={"gtol": 1e-12, "maxiter": 20000})
                for start in rng.normal(size=(6, 10)) * 0.3), key=lambda r: r.fun)
    assert cost(wanted) < best.fun  # the constraint is active
    assert cost(result.values) == pytest.approx(best.fun, rel=1e-5)
    factor = np.zeros((4, 4))
    factor[lower] = best.x
    np.testing.assert_allclose(result.values, _parameters_of_pseudo_inertia(factor @ factor.T), atol=2e-4)


@pytest.fixture(scope="module")
def five_bar_bags(tmp_path_factory):
    runs = [Run("unloaded", 1, 8.0), Run("validation_1", 3, 4.0)]
    return record_runs("five_bar", runs, tmp_path_factory.mktemp("five_bar_physical"), show_progress=False,
                       candidates=2)


def test_identify_reports_the_physical_estimate_beside_the_unconstrained_one(five_bar_bags, tmp_path, capsys):
    robot = pardyn.load_robot("five_bar")
    bags = five_bar_bags.bags
    result = identify(robot, [bags["unloaded"]], validate_bags=[bags["validation_1"]],
                      settings=IdentificationSettings(physical=True), show_progress=False)
    data = result.as_json()
    physical = data["physical"]
    assert physical["min_pseudo_inertia_eigenvalue"] > 0.0
    for body in result.physical.parameters.bodies:
        assert _physical_by_pinocchio(body.standard), body.name
    assert data["fit"]["condition_number"] > 1.0
    # the recorded data are exciting and the truth physical: both fits and validations agree
    assert physical["fit"]["relative_error_norm"] == pytest.approx(data["fit"]["relative_error_norm"], abs=0.01)
    assert physical["validation"]["relative_error_norm"] < data["validation"]["nominal"]["relative_error_norm"]
    assert physical["validation"]["relative_error_norm"] == pytest.approx(
        data["validation"]["relative_error_norm"], abs=0.01)
    assert set(physical["fit"]["per_joint"]) == set(data["fit"]["per_joint"])
    report = write_report(result, tmp_path / "report").read_text()
    assert "## Physically consistent estimate" in report and "validation relative error norm" in report
    # the CLI writes the physical parameters as a file pardyn dynamics --params reads
    from pardyn.cli import main  # noqa: PLC0415

    out = tmp_path / "result.json"
    assert main(["identify", "--robot", "five_bar", "--bag", str(bags["unloaded"]), "--physical",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cond(W)" in printed and "physical (SDP, min pseudo-inertia eigenvalue" in printed
    params = read_parameter_file(tmp_path / "result_physical.json", robot)
    np.testing.assert_allclose(params.vector(), result.physical.parameters.vector(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["pc_ekf", "pc_ukf"])
def test_identify_reports_the_physical_estimate_of_the_physically_consistent_filters(five_bar_bags, name):
    """``identify --estimator pc_ekf|pc_ukf``: ``result.physical`` is the filter's projection (as ``--physical``
    reports the SDP's), its fit taken on the data system, its base values the estimate."""
    robot = pardyn.load_robot("five_bar")
    bags = five_bar_bags.bags
    result = identify(robot, [bags["unloaded"]], validate_bags=[bags["validation_1"]],
                      settings=IdentificationSettings(estimator=name), show_progress=False)
    assert result.physical is not None and result.physical.min_eigenvalue > 0.0
    np.testing.assert_allclose(result.physical.base_values, result.estimate.chi)
    data = result.as_json()
    physical = data["physical"]
    assert physical["fit"]["relative_error_norm"] == pytest.approx(data["fit"]["relative_error_norm"], rel=1e-9)
    assert set(physical["fit"]["per_joint"]) == set(data["fit"]["per_joint"])
    assert physical["validation"]["relative_error_norm"] < data["validation"]["nominal"]["relative_error_norm"]


def test_physically_consistent_filters_project_the_filtered_estimate():
    """``pc_ekf``/``pc_ukf``: on the noisy, poorly exciting five-bar data the plain EKF (= WLS) has a negative
    friction; the projected filters give physical bodies (pseudo-inertias positive definite, friction >= 0) whose
    base values are the estimate, and ``pc_ekf`` is the physically consistent WLS (the same SDP on the same
    information). On noise-free exciting data of a physical truth both return the truth (the SDP's tolerance)."""
    from pardyn.identification.estimators import EstimatorContext, estimate  # noqa: PLC0415

    states = dict(seed=1, count=60, position=0.01, velocity=0.02, acceleration=0.2)
    layout, system, base, weighted, _ = _synthetic("five_bar", states=states, noise=0.3)
    reduced, context = base.reduce_system(system), EstimatorContext(base=base, layout=layout)
    plain = dict(zip(reduced.names, estimate("ekf", reduced, context=context).estimate.chi))
    friction = [n for n in plain if n.startswith(("fv_", "fs_"))]
    assert min(plain[n] for n in friction) < 0.0  # the plain filter is not physical
    reference = physical_estimate(system, base, layout, block_sigmas=weighted.block_sigmas)
    for name in ("pc_ekf", "pc_ukf"):
        result = estimate(name, reduced, context=context)
        physical = result.physical
        np.testing.assert_allclose(physical.base_values, result.estimate.chi)
        assert physical.min_eigenvalue > 0.0 and result.estimate.method == name
        assert all(_physical_by_pinocchio(physical.values[[physical.names.index(f"{p}_{body}") for p in
                   ("xx", "xy", "xz", "yy", "yz", "zz", "mx", "my", "mz", "m")]]) for body in physical.eigenvalues)
        assert min(dict(zip(reduced.names, result.estimate.chi))[n] for n in friction) >= -1e-9
    pc_ekf = estimate("pc_ekf", reduced, context=context).estimate.chi
    scale = np.abs(reference.base_values).max()
    np.testing.assert_allclose(pc_ekf, reference.base_values, atol=1e-4 * scale)
    clean = dict(seed=2, count=80, position=0.04, velocity=0.3, acceleration=3.0)
    layout, system, base, _, truth = _synthetic("five_bar", states=clean, noise=0.0)
    expected = base.from_standard(truth)
    for name in ("pc_ekf", "pc_ukf"):
        result = estimate(name, base.reduce_system(system), context=EstimatorContext(base=base, layout=layout))
        np.testing.assert_allclose(result.estimate.chi, expected, rtol=1e-4, atol=1e-6 * np.abs(expected).max())
        assert result.physical.min_eigenvalue > 0.0
