"""Newton solver: round trips, the papers' loop equations, redundancy, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.errors import ConvergenceError, InputError, SingularityError
from pardyn.kinematics.solver import revolute_mask

ROBOTS = ("five_bar", "dualv", "rrr3", "wu3r", "wu3n")
PATHS = ("python", "compiled")  # pardyn.kernels: the Python reference and the generated C


@pytest.mark.parametrize("kernels", PATHS)
@pytest.mark.parametrize("name", ROBOTS)
def test_inverse_then_forward_round_trip(load, name, kernels, random_task, angle_distance):
    robot = load(name, kernels)
    rng = np.random.default_rng(10)
    angles = revolute_mask(robot.model)
    for _ in range(10):
        task = random_task(robot, rng)
        inverse = robot.solve_inverse(task)
        assert inverse.residual <= 1e-12
        np.testing.assert_allclose(inverse.q[robot.task_indices], task, atol=1e-12)
        forward = robot.solve_forward(inverse.q[robot.actuated_indices])
        assert forward.residual <= 1e-12
        assert angle_distance(forward.q, inverse.q, angles).max() < 1e-10
        if len(robot.sensed_indices):
            sensed = robot.solve_forward(
                inverse.q[robot.actuated_indices], sensed=inverse.q[robot.sensed_indices]
            )
            assert angle_distance(sensed.q, inverse.q, angles).max() < 1e-10


@pytest.mark.parametrize("kernels", PATHS)
def test_dualv_solution_satisfies_eq_53(load, kernels, random_task):
    """The loop equations of Briot 2015 eq. (53), written from the paper, hold at our solutions."""
    robot = load("dualv", kernels)
    rng = np.random.default_rng(11)
    gammas = np.radians([15.52, 164.48, -164.48, -15.52])
    r_p, d2, d3 = 0.1, 0.28, 0.28
    for _ in range(5):
        x, y, phi = random_task(robot, rng)
        joints = robot.joint_dict(robot.solve_inverse([x, y, phi]).q)
        for i in range(1, 5):
            k, k_bar = (0, 1) if i <= 2 else (1, 0)
            xa, ya = 0.41 * math.cos(gammas[i - 1]), 0.41 * math.sin(gammas[i - 1])
            q1, q2, q3 = (joints[f"leg{i}_joint{j}"] for j in (1, 2, 3))
            assert x - r_p * math.sin(phi + k * math.pi) - xa - d2 * math.cos(q1) - d3 * math.cos(q1 + q2) == pytest.approx(0, abs=1e-12)
            assert y + r_p * math.cos(phi + k * math.pi) - ya - d2 * math.sin(q1) - d3 * math.sin(q1 + q2) == pytest.approx(0, abs=1e-12)
            wrapped = (phi + k_bar * math.pi - q1 - q2 - q3 + math.pi) % (2 * math.pi) - math.pi
            assert wrapped == pytest.approx(0, abs=1e-12)


def test_working_mode_kept_far_from_home(load):
    """Continuation keeps the elbows of the DualV where the issue puts them (sin q1 > 0 for legs 1, 2)."""
    robot = load("dualv")
    joints = robot.joint_dict(robot.solve_inverse([0.08, 0.06, 0.25]).q)
    assert math.sin(joints["leg1_joint1"]) > 0 and math.sin(joints["leg2_joint1"]) > 0
    assert math.sin(joints["leg3_joint1"]) < 0 and math.sin(joints["leg4_joint1"]) < 0


@pytest.mark.parametrize("kernels", PATHS)
def test_redundant_forward_with_inconsistent_readings_is_a_least_squares_fit(load, kernels):
    """DualV, 4 actuators for 3 dof: a reading off by 1 mrad gives the closest closed configuration.

    Optimality (first-order condition of min |q_a - y|^2 on the constraint
    manifold): the reading error is orthogonal to the actuator velocity space,
    J^T (q_a - y) = 0 with J = W[actuated] the inverse Jacobian (eq. 20).
    """
    robot = load("dualv", kernels)
    exact = robot.solve_inverse([0.02, -0.01, 0.1])
    readings = exact.q[robot.actuated_indices] + np.array([0.0, 0.0, 0.0, 1e-3])
    fit = robot.solve_forward(readings)
    assert fit.residual <= 1e-12
    error = fit.q[robot.actuated_indices] - readings
    jacobian = robot.differential.inverse_jacobian(fit.q, robot.actuated_indices)
    # |error| ~ 1e-3 rad; the fit stops at steps below 1e-10 rad (solver.FIT_STEP_TOLERANCE)
    np.testing.assert_allclose(jacobian.T @ error, 0.0, atol=1e-9)
    assert 0 < np.linalg.norm(error) < 1e-3


def test_warm_start_gives_the_same_answer(load):
    robot = load("rrr3")
    first = robot.solve_inverse([0.03, -0.02, 0.05])
    again = robot.solve_inverse([0.03, -0.02, 0.05], start=first.q)
    np.testing.assert_allclose(again.q, first.q, atol=1e-12)
    assert again.iterations == 0


def test_unreachable_pose_raises_convergence_error_with_the_values(load):
    robot = load("five_bar")
    with pytest.raises(ConvergenceError, match=r"2\.0"):
        robot.solve_inverse([2.0, 0.3])


def test_bad_input_is_rejected(load):
    robot = load("dualv")
    with pytest.raises(InputError, match="finite"):
        robot.solve_forward([0.0, math.nan, 0.0, 0.0])
    with pytest.raises(InputError, match="expected 4"):
        robot.solve_forward([0.0, 0.0])
    with pytest.raises(InputError, match="unknown"):
        robot.solve_inverse({"x": 0.0, "y": 0.0, "psi": 0.0})


def _five_bar_near_parallel_singularity(epsilon: float) -> list[float]:
    """Actuated angles putting B_1, C, B_2 (distal links) epsilon from collinear.

    Symmetric posture q_11 = pi - b, q_21 = b: |B_1 B_2| = 0.2 + 0.4 cos b equals
    twice the distal length 0.25 (aligned distal links) at cos b = 0.75.
    """
    b = math.acos(0.75 - epsilon)
    return [math.pi - b, b]


@pytest.mark.parametrize("kernels", PATHS)
def test_condition_number_grows_at_the_five_bar_parallel_singularity(load, kernels):
    robot = load("five_bar", kernels)
    conditions = [
        robot.solve_forward(_five_bar_near_parallel_singularity(eps)).conditioning["parallel"]
        for eps in (1e-2, 1e-4)
    ]
    # Distance to the singularity ~ sqrt(eps): the condition number grows ~ 1/sqrt(eps).
    assert conditions[1] > 5 * conditions[0]
    with pytest.raises((SingularityError, ConvergenceError)):
        robot.solve_forward(_five_bar_near_parallel_singularity(1e-14))


@pytest.mark.parametrize("kernels", PATHS)
def test_singularity_error_carries_kind_and_condition(load, kernels):
    import pardyn

    robot = pardyn.load_robot("five_bar", max_condition=1e3, kernels=kernels)
    with pytest.raises(SingularityError) as info:
        robot.solve_forward(_five_bar_near_parallel_singularity(1e-7))
    assert info.value.kind == "parallel" and info.value.condition > 1e3
    assert "leg1_joint1" in str(info.value)  # the configuration is in the message


def test_newton_wraps_revolute_angles_like_the_closed_form(load):
    """Issue 20, item 7: five-bar at the origin, Newton's angles wrapped as the analytic path's (within pi of home)."""
    import math

    robot = load("five_bar")
    newton = robot.solve_inverse([0.0, 0.3])
    analytic = robot.solve_inverse([0.0, 0.3], method="analytic")
    angles = robot.solver.angles
    assert np.all(np.abs(newton.q[angles] - robot.home[angles]) <= math.pi)  # within pi of home, as analytic
    np.testing.assert_allclose(newton.q, analytic.q, atol=1e-9)
    # from a start one turn away, still wrapped
    start = robot.home.copy()
    start[angles] += 2 * math.pi
    shifted = robot.solve_inverse([0.0, 0.3], start=start)
    np.testing.assert_allclose(shifted.q, analytic.q, atol=1e-9)


def test_non_convergence_says_what_did_not_converge(load):
    """Issue 20, item 6: the closure residual is satisfied but the given coordinates are not reached."""
    from pardyn.errors import ConvergenceError

    robot = load("dualv")
    with pytest.raises(ConvergenceError) as raised:
        robot.solve_forward([4.61, -4.49, 4.61, -4.49])
    text = str(raised.value)
    assert "max |phi|" not in text
    assert "closure residual" in text and "given coordinates" in text


def test_the_lapack_gufuncs_answer_as_numpy_linalg_does():
    """The solver's factorizations are numpy's LAPACK gufuncs called directly (no SciPy in the nodes, issue 34):
    the answers of numpy.linalg (dgesv, dgesdd) to the last bits on this machine, a singular matrix refused
    without a warning, a non-finite right-hand side answered (NaN) as LAPACK does rather than called singular."""
    import warnings

    from pardyn.kinematics.solver import _condition, _solve_or_minimum_norm, solve_regular

    rng = np.random.default_rng(3)
    for n in (1, 3, 6, 12):
        matrix = rng.standard_normal((n, n))
        vector, block = rng.standard_normal(n), rng.standard_normal((n, 4))
        assert np.array_equal(solve_regular(matrix, vector), np.linalg.solve(matrix, vector))
        assert np.array_equal(solve_regular(matrix, block), np.linalg.solve(matrix, block))
        singular = np.linalg.svd(matrix, compute_uv=False)
        assert _condition(matrix) == singular[0] / singular[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from the ignored floating-point flags
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            solve_regular(np.diag([1.0, 0.0]), np.ones(2))
        assert np.array_equal(_solve_or_minimum_norm(np.diag([2.0, 0.0]), np.ones(2)), [0.5, 0.0])
        assert _condition(np.diag([1.0, 0.0])) == math.inf
        assert np.isnan(solve_regular(np.eye(2), np.array([np.inf, 1.0]))).all()
