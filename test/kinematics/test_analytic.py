"""Closed-form kinematics of the planar robots against the generic Newton solver and the papers.

Independent references:
* the generic solver (:mod:`pardyn.kinematics.solver`, Newton on the pinocchio
  closure equations) on seeded random poses inside the workspace, away from
  singularities (condition numbers below 1e4);
* the papers' own equations written here with the papers' numbers: DualV
  (Briot 2015, Table 1, eqs. 53-57) and 3-RRR (Zubizarreta 2010, section 4.8,
  eqs. 27, 28, 30, 31).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.errors import ConvergenceError, PardynError
from pardyn.kinematics.solver import revolute_mask

ROBOTS = ("five_bar", "dualv", "rrr3")
SAMPLES = 30
SPREAD = 0.08  # m, rad around home
MAX_CONDITION = 1e4
TOL = 1e-10

# DualV, Briot 2015 Table 1 (r_p = 0.1 m is pardyn's choice, config/robots/dualv.yaml).
DUALV_GAMMA = np.radians([15.52, 164.48, -164.48, -15.52])
DUALV_A = 0.41 * np.column_stack([np.cos(DUALV_GAMMA), np.sin(DUALV_GAMMA)])
DUALV_D2 = DUALV_D3 = 0.28
DUALV_RP = 0.1
DUALV_K = (0, 0, 1, 1)  # k of eq. (53); k_bar = 1 - k

# 3-RRR, Zubizarreta 2010 section 4.8.
RRR_A = np.array([(-0.15, -0.84), (0.69, -0.17), (-0.66, 0.21)])
RRR_L, RRR_l, RRR_d = 0.5, 0.4, 0.1732
RRR_PHI = np.array([(4 * i + 1) * math.pi / 6 for i in range(3)])


def _wrapped(angle: np.ndarray | float) -> np.ndarray:
    return (np.asarray(angle) + math.pi) % (2 * math.pi) - math.pi


@pytest.fixture(scope="module")
def samples(load):
    """``samples(name)``: seeded well-conditioned poses with the generic inverse solution."""
    cache: dict[str, list] = {}

    def get(name: str):
        if name not in cache:
            robot = load(name)
            rng = np.random.default_rng(20240 + len(name))
            found = []
            while len(found) < SAMPLES:
                task = robot.home[robot.task_indices] + rng.uniform(-SPREAD, SPREAD, len(robot.task_indices))
                try:
                    solution = robot.solve_inverse(task)
                except PardynError:
                    continue
                if max(solution.conditioning.values()) < MAX_CONDITION:
                    found.append((task, solution.q))
            cache[name] = found
        return cache[name]

    return get


def _readings(robot, q):
    sensed = q[robot.sensed_indices] if len(robot.sensed_indices) else None
    return q[robot.actuated_indices], sensed


# ------------------------------------------------------------ against the generic solver
@pytest.mark.parametrize("name", ROBOTS)
def test_inverse_matches_generic_solver(load, samples, angle_distance, name):
    robot = load(name)
    angles = revolute_mask(robot.model)
    for task, generic in samples(name):
        solution = robot.solve_inverse(task, method="analytic")
        assert np.max(angle_distance(solution.q, generic, angles)) < TOL
        assert solution.residual < 1e-12
        assert robot.working_mode_violations(solution.q) == []


@pytest.mark.parametrize("name", ROBOTS)
def test_forward_matches_generic_solver(load, samples, angle_distance, name):
    """five_bar: 2 actuators; dualv: all 4 (redundant); rrr3: 3 active + 3 sensed passive."""
    robot = load(name)
    angles = revolute_mask(robot.model)
    for _, q in samples(name):
        actuated, sensed = _readings(robot, q)
        generic = robot.solve_forward(actuated, sensed=sensed).q
        solution = robot.solve_forward(actuated, sensed=sensed, method="analytic")
        assert np.max(angle_distance(solution.q, generic, angles)) < TOL
        assert np.max(angle_distance(solution.q, q, angles)) < TOL
        assert solution.residual < 1e-12
        assert robot.assembly_mode_violations(solution.q) == []


def test_angles_are_wrapped_like_the_generic_solver(load, samples):
    """Given angles off by 2 pi give the same answer, within pi of home like Newton from home."""
    robot = load("dualv")
    task, q = samples("dualv")[0]
    shifted = task + np.array([0.0, 0.0, 2 * math.pi])
    np.testing.assert_allclose(robot.analytic.inverse(shifted), robot.analytic.inverse(task), atol=1e-12)
    actuated = q[robot.actuated_indices] + np.array([2, -2, 4, 0]) * math.pi
    forward = robot.analytic.forward(actuated)
    np.testing.assert_allclose(forward, robot.analytic.forward(q[robot.actuated_indices]), atol=1e-12)
    angles = revolute_mask(robot.model)
    assert np.all(np.abs(forward - robot.home)[angles] <= math.pi)


def test_rrr3_forward_from_active_joints_only_uses_newton(load, samples, angle_distance):
    robot = load("rrr3")
    angles = revolute_mask(robot.model)
    for _, q in samples("rrr3")[:5]:
        solution = robot.solve_forward(q[robot.actuated_indices], method="analytic")
        assert np.max(angle_distance(solution.q, q, angles)) < TOL


# ------------------------------------------------------------------------ DualV paper
def _dualv_points(robot, q):
    """B_i, C_i (4, 2) of eqs. (53)-(54) from q with the paper's numbers."""
    x, y, phi = q[robot.task_indices]
    q1 = q[robot.indices([f"leg{i}_joint1" for i in range(1, 5)])]
    b = DUALV_A + DUALV_D2 * np.column_stack([np.cos(q1), np.sin(q1)])
    k = np.array(DUALV_K)
    c = np.column_stack([x - DUALV_RP * np.sin(phi + k * math.pi), y + DUALV_RP * np.cos(phi + k * math.pi)])
    return b, c


def _dualv_eq53(robot, q):
    """Residual of the three lines of eq. (53) for the four legs (4, 3), third line modulo 2 pi."""
    x, y, phi = q[robot.task_indices]
    out = np.empty((4, 3))
    for i in range(4):
        q1, q2, q3 = q[robot.indices([f"leg{i + 1}_joint{j}" for j in (1, 2, 3)])]
        k = DUALV_K[i]
        c_x, c_y = x - DUALV_RP * math.sin(phi + k * math.pi), y + DUALV_RP * math.cos(phi + k * math.pi)
        out[i, 0] = c_x - DUALV_A[i, 0] - DUALV_D2 * math.cos(q1) - DUALV_D3 * math.cos(q1 + q2)
        out[i, 1] = c_y - DUALV_A[i, 1] - DUALV_D2 * math.sin(q1) - DUALV_D3 * math.sin(q1 + q2)
        out[i, 2] = _wrapped(phi + (1 - k) * math.pi - q1 - q2 - q3)
    return out


def test_dualv_answers_satisfy_eqs_53_54(load, samples):
    robot = load("dualv")
    for task, q in samples("dualv"):
        for answer in (robot.analytic.inverse(task), robot.analytic.forward(q[robot.actuated_indices])):
            b, c = _dualv_points(robot, answer)
            np.testing.assert_allclose(np.linalg.norm(c - b, axis=1), DUALV_D3, atol=1e-12)  # eq. (54)
            assert np.max(np.abs(_dualv_eq53(robot, answer))) < 1e-12  # eq. (53)
            np.testing.assert_allclose(answer[robot.task_indices], task, atol=TOL)


def _eq56(b_j, b_k, k_j):
    """Both roots of eq. (56) with eq. (57)'s f_j, g_j, p_j, r_j and the given k_j."""
    f = -(b_k[1] - b_j[1]) / (b_k[0] - b_j[0])
    g = f**2 + 1
    p = 2 * f * (k_j - b_j[0]) - 2 * b_j[1]
    r = b_j[0] ** 2 + b_j[1] ** 2 - DUALV_D3**2 + k_j**2 - 2 * k_j * b_j[0]
    roots = [(-p + s * math.sqrt(p**2 - 4 * g * r)) / (2 * g) for s in (1, -1)]
    return [np.array([f * yc + k_j, yc]) for yc in roots]


def test_dualv_eq_57_corrected_gives_the_forward_answer_printed_one_does_not(load, samples):
    """Eq. (57)'s k_j as printed is a typo; the corrected one reproduces C_1, C_3 of the closed form."""
    robot = load("dualv")
    for _, q in samples("dualv")[:10]:
        answer = robot.analytic.forward(q[robot.actuated_indices])
        b, c = _dualv_points(robot, answer)
        for j in (0, 2):
            b_j, b_k = b[j], b[j + 1]
            corrected = (b_k @ b_k - b_j @ b_j) / (2 * (b_k[0] - b_j[0]))
            printed = (b_j[0] ** 2 + b_j[1] ** 2 - b_j[1] ** 2 - b_k[1] ** 2) / (2 * (b_k[0] - b_j[0]))
            assert min(np.linalg.norm(root - c[j]) for root in _eq56(b_j, b_k, corrected)) < 1e-12
            try:
                wrong = _eq56(b_j, b_k, printed)
            except ValueError:  # negative discriminant
                continue
            assert all(abs(np.linalg.norm(root - b_k) - DUALV_D3) > 1e-6 for root in wrong)  # rounding-level if right


def test_dualv_inconsistent_readings_keep_the_readings(load, samples):
    """Four readings for three dof: eq. (55) splits the mismatch; close to the generic least-squares fit."""
    robot = load("dualv")
    rng = np.random.default_rng(7)
    for _, q in samples("dualv")[:10]:
        readings = q[robot.actuated_indices] + rng.normal(0.0, 1e-4, 4)
        analytic = robot.solve_forward(readings, method="analytic")
        generic = robot.solve_forward(readings)
        np.testing.assert_allclose(analytic.q[robot.actuated_indices], readings, atol=1e-12)
        assert np.max(np.abs(analytic.q[robot.task_indices] - generic.q[robot.task_indices])) < 1e-3
        assert 0.0 < analytic.residual < 1e-3


# ------------------------------------------------------------------------ 3-RRR paper
def _rrr_vertices(robot, q):
    """C_i (3, 2) from the active and passive joints: eq. (31) with the paper's numbers."""
    qa = q[robot.indices([f"leg{i}_joint1" for i in range(1, 4)])]
    qp = q[robot.indices([f"leg{i}_joint2" for i in range(1, 4)])]
    return (RRR_A + RRR_L * np.column_stack([np.cos(qa), np.sin(qa)])
            + RRR_l * np.column_stack([np.cos(qa + qp), np.sin(qa + qp)]))


def _rrr_eq28(robot, q):
    x, y, theta = q[robot.task_indices]
    qa = q[robot.indices([f"leg{i}_joint1" for i in range(1, 4)])]
    return (-RRR_l**2 + (x - RRR_A[:, 0] - RRR_L * np.cos(qa) - RRR_d * np.cos(theta + RRR_PHI)) ** 2
            + (y - RRR_A[:, 1] - RRR_L * np.sin(qa) - RRR_d * np.sin(theta + RRR_PHI)) ** 2)


def test_rrr3_answers_satisfy_eqs_27_28_30(load, samples):
    robot = load("rrr3")
    side = math.sqrt(3.0) * RRR_d  # h_i(i+1): the platform is equilateral with circumradius d
    for task, q in samples("rrr3"):
        actuated, sensed = _readings(robot, q)
        for answer in (robot.analytic.inverse(task), robot.analytic.forward(actuated, sensed)):
            assert np.max(np.abs(_rrr_eq28(robot, answer))) < 1e-12  # eq. (28)
            c = _rrr_vertices(robot, answer)
            np.testing.assert_allclose(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1), side, atol=1e-12)  # (30)
            np.testing.assert_allclose(c.mean(axis=0), answer[robot.task_indices[:2]], atol=1e-12)  # (32)
            theta = answer[robot.task_indices[2]]
            legs = [robot.indices([f"leg{i}_joint{j}" for j in (1, 2, 3)]) for i in range(1, 4)]
            assert np.max(np.abs(_wrapped([theta - answer[leg].sum() for leg in legs]))) < 1e-12  # (27)
            np.testing.assert_allclose(answer[robot.task_indices], task, atol=TOL)


def test_rrr3_noisy_passive_sensors(load, samples):
    """Passive readings off by 1e-4 rad: averaging (eqs. 32-34) and least squares agree to 1e-3."""
    robot = load("rrr3")
    rng = np.random.default_rng(3)
    for task, q in samples("rrr3")[:10]:
        actuated, sensed = _readings(robot, q)
        noisy = sensed + rng.choice([-1e-4, 1e-4], size=3)
        analytic = robot.solve_forward(actuated, sensed=noisy, method="analytic")
        generic = robot.solve_forward(actuated, sensed=noisy)
        pose_a, pose_g = analytic.q[robot.task_indices], generic.q[robot.task_indices]
        assert np.max(np.abs(pose_a - pose_g)) < 1e-3
        assert np.max(np.abs(pose_a - task)) < 1e-3
        assert np.max(np.abs(pose_a - task)) > 1e-7  # the noise did reach the answer
        np.testing.assert_allclose(analytic.q[robot.sensed_indices], noisy, atol=1e-12)


# --------------------------------------------------------------------------- out of reach
@pytest.mark.parametrize("name", ROBOTS)
def test_unreachable_pose_raises_convergence_error(load, name):
    robot = load(name)
    task = robot.home[robot.task_indices].copy()
    task[0] += 2.0  # 2 m away: beyond every leg's reach
    with pytest.raises(ConvergenceError, match=r"cannot reach .*discriminant"):
        robot.solve_inverse(task, method="analytic")


@pytest.mark.parametrize("name", ("five_bar", "dualv"))
def test_forward_with_elbows_too_far_apart_raises_convergence_error(load, name):
    """Proximal links of each five-bar loop stretched outwards: the distal circles cannot meet."""
    robot = load(name)
    outward = {"five_bar": [math.pi, 0.0], "dualv": [0.0, math.pi, math.pi, 0.0]}[name]
    with pytest.raises(ConvergenceError, match="do not meet"):
        robot.solve_forward(outward, method="analytic")


def test_rrr3_without_passive_readings_answers_by_newton(load, samples, angle_distance):
    """rrr3's closed form needs the passive joints' readings (eqs. 31-36); without them it answers by the
    generic Newton solver (the robot's, handed to the closed form at load): loops closed, the actuated readings
    kept, on the assembly mode, the joints of the sample the readings came from."""
    robot = load("rrr3")
    angles = revolute_mask(robot.model)
    for _, q in samples("rrr3")[:3]:
        actuated = q[robot.actuated_indices]
        answer = robot.analytic.forward(actuated)
        assert np.max(np.abs(robot.closures.residual_and_jacobian(answer)[0])) < 1e-10
        np.testing.assert_allclose(answer[robot.actuated_indices], actuated, atol=1e-12)
        assert robot.assembly_mode_violations(answer) == []
        assert np.max(angle_distance(answer, q, angles)) < TOL
