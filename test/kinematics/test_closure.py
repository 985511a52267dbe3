"""Closure equations: Jacobian and drift against finite differences, distance closures by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import pardyn

ROBOTS = ("five_bar", "dualv", "rrr3", "wu3r", "wu3n")

ROD_URDF = """<?xml version="1.0"?>
<robot name="rod_five_bar">
  <link name="base_link"/>
  <link name="leg1_link1"><inertial><mass value="0.3"/><origin xyz="0.1 0 0"/>
    <inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="leg1_joint1" type="revolute"><parent link="base_link"/><child link="leg1_link1"/>
    <origin xyz="-0.1 0 0"/><axis xyz="0 0 1"/><limit lower="-7" upper="7" effort="1" velocity="1"/></joint>
  <link name="leg1_tip"/>
  <joint name="leg1_tip_marker" type="fixed"><parent link="leg1_link1"/><child link="leg1_tip"/>
    <origin xyz="0.2 0 0"/></joint>
  <link name="leg2_link1"><inertial><mass value="0.3"/><origin xyz="0.1 0 0"/>
    <inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="leg2_joint1" type="revolute"><parent link="base_link"/><child link="leg2_link1"/>
    <origin xyz="0.1 0 0"/><axis xyz="0 0 1"/><limit lower="-7" upper="7" effort="1" velocity="1"/></joint>
  <link name="leg2_tip"/>
  <joint name="leg2_tip_marker" type="fixed"><parent link="leg2_link1"/><child link="leg2_tip"/>
    <origin xyz="0.2 0 0"/></joint>
  <link name="platform_x_link"/>
  <joint name="platform_x" type="prismatic"><parent link="base_link"/><child link="platform_x_link"/>
    <axis xyz="1 0 0"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>
  <link name="platform"><inertial><mass value="0.1"/>
    <inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/></inertial></link>
  <joint name="platform_y" type="prismatic"><parent link="platform_x_link"/><child link="platform"/>
    <axis xyz="0 1 0"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>
</robot>
"""

ROD_YAML = """
name: rod_five_bar
urdf: rod_five_bar.urdf
task: {x: platform_x, y: platform_y}
actuated: [leg1_joint1, leg2_joint1]
closures:
  - {name: rod1, frames: [leg1_tip, platform], type: distance, length: 0.25}
  - {name: rod2, frames: [leg2_tip, platform], type: distance, length: 0.25}
assembly_mode:
  - {point: platform, line: [leg1_tip, leg2_tip], side: left}
home:
  task: {x: 0.0, y: 0.3}
  joints: {leg1_joint1: 2.16, leg2_joint1: 0.98}
"""


@pytest.fixture(scope="module")
def rod_robot(tmp_path_factory) -> pardyn.Robot:
    """A five-bar whose distal links are massless rods: two distance closures."""
    folder: Path = tmp_path_factory.mktemp("rod")
    (folder / "rod_five_bar.urdf").write_text(ROD_URDF)
    (folder / "rod_five_bar.yaml").write_text(ROD_YAML)
    return pardyn.load_robot(folder / "rod_five_bar.yaml")


def _perturbed(robot, rng, scale=0.05):
    return robot.home + rng.uniform(-scale, scale, robot.nv)


@pytest.mark.parametrize("name", ROBOTS)
def test_jacobian_matches_finite_differences(load, name):
    robot = load(name)
    rng = np.random.default_rng(1)
    h = 1e-6
    for _ in range(3):
        q = _perturbed(robot, rng)  # away from closure: rows are exact for parallel joint axes
        jacobian = robot.closures.jacobian(q)
        numeric = np.empty_like(jacobian)
        for j in range(robot.nv):
            dq = np.zeros(robot.nv)
            dq[j] = h
            numeric[:, j] = (robot.closures.residual(q + dq) - robot.closures.residual(q - dq)) / (2 * h)
        np.testing.assert_allclose(jacobian, numeric, atol=1e-8)


@pytest.mark.parametrize("name", ROBOTS)
def test_drift_is_jacobian_rate_times_velocity(load, name):
    robot = load(name)
    rng = np.random.default_rng(2)
    h = 1e-6
    q = _perturbed(robot, rng)
    v = rng.normal(size=robot.nv)
    numeric = (robot.closures.jacobian(q + h * v) - robot.closures.jacobian(q - h * v)) / (2 * h) @ v
    np.testing.assert_allclose(robot.closures.drift(q, v), numeric, atol=1e-7)


def test_distance_closure_jacobian_and_drift(rod_robot):
    robot = rod_robot
    rng = np.random.default_rng(3)
    h = 1e-6
    q = _perturbed(robot, rng)
    v = rng.normal(size=robot.nv)
    jacobian = robot.closures.jacobian(q)
    numeric = np.column_stack([
        (robot.closures.residual(q + h * e) - robot.closures.residual(q - h * e)) / (2 * h) for e in np.eye(robot.nv)
    ])
    np.testing.assert_allclose(jacobian, numeric, atol=1e-8)
    numeric_drift = (robot.closures.jacobian(q + h * v) - robot.closures.jacobian(q - h * v)) / (2 * h) @ v
    np.testing.assert_allclose(robot.closures.drift(q, v), numeric_drift, atol=1e-7)


def test_distance_closure_forward_problem_by_hand(rod_robot):
    """Circle intersection of the two rods, computed by hand, equals the Newton answer."""
    robot = rod_robot
    a1, a2 = np.array([0.2, 0.9]), np.array([0.1, -0.1])
    q1, q2 = 2.0, 1.0
    b1 = np.array([-0.1, 0.0]) + 0.2 * np.array([math.cos(q1), math.sin(q1)])
    b2 = np.array([0.1, 0.0]) + 0.2 * np.array([math.cos(q2), math.sin(q2)])
    half = np.linalg.norm(b2 - b1) / 2
    middle = (b1 + b2) / 2
    unit = (b2 - b1) / (2 * half)
    normal = np.array([-unit[1], unit[0]])  # left of b1 -> b2: the assembly mode
    expected = middle + math.sqrt(0.25**2 - half**2) * normal
    solution = robot.solve_forward([q1, q2])
    np.testing.assert_allclose(solution.q[robot.task_indices], expected, atol=1e-12)
    assert solution.residual < 1e-12
    del a1, a2


def test_closures_read_their_own_data_after_pickling():
    """The closures read pinocchio's frame placements through views of their ``pin.Data``: a pickled copy
    rebinds them to its own data (a stale view would return the original's placements)."""
    import pickle

    import pinocchio as pin

    robot = pardyn.load_robot("dualv")
    copy = pickle.loads(pickle.dumps(robot.closures))
    q = robot.home + 0.01
    robot.closures.residual(robot.home)  # the original's data elsewhere
    expected = []
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    for (a, b), closure in zip(copy._frame_ids, copy.closures):
        delta = data.oMf[b].translation - data.oMf[a].translation
        rotation = data.oMf[a].rotation @ pin.log3(data.oMf[a].rotation.T @ data.oMf[b].rotation)  # R_a log3(R_a^T R_b)
        expected.extend(np.concatenate([delta, rotation])[list(closure.components)])
    np.testing.assert_allclose(copy.residual(q), expected, atol=1e-15)


def _pinocchio_rows(closures, q, qdot):
    """``K`` and ``Kdot`` rows of the frame closures from pinocchio's own world-aligned frame Jacobians and their
    time variations (one call per frame, a fresh ``pin.Data``); a distance closure's Jacobian row ``u^T (J_b -
    J_a)_lin`` and no rate row (None)."""
    import pinocchio as pin

    model = closures.model
    data = model.createData()
    pin.computeJointJacobiansTimeVariation(model, data, q, qdot)
    pin.updateFramePlacements(model, data)
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    rows, rates = [], []
    for closure in closures.closures:
        a, b = (model.getFrameId(name) for name in closure.frames)
        jacobian = pin.getFrameJacobian(model, data, b, lwa) - pin.getFrameJacobian(model, data, a, lwa)
        rate = (pin.getFrameJacobianTimeVariation(model, data, b, lwa)
                - pin.getFrameJacobianTimeVariation(model, data, a, lwa))
        if closure.type == "distance":
            delta = data.oMf[b].translation - data.oMf[a].translation
            rows.append((delta / np.linalg.norm(delta)) @ jacobian[:3])
            rates.append(None)
        else:
            rows.extend(jacobian[list(closure.components)])
            rates.extend(rate[list(closure.components)])
    return rows, rates


@pytest.mark.parametrize("name", ("delta", "dualv"))
def test_jacobian_and_rate_equal_pinocchio_frame_jacobians(load, name):
    """K and Kdot (the closures' rows picked in one pass) equal pinocchio's getFrameJacobian and
    getFrameJacobianTimeVariation (LOCAL_WORLD_ALIGNED) row by row, off the closed configurations too (3D ball
    loops of the Delta, planar loops of the DualV); Kdot also equals finite differences of K along qdot."""
    robot = load(name)
    rng = np.random.default_rng(4)
    q, qdot = _perturbed(robot, rng, 0.2), rng.normal(size=robot.nv)
    jacobian, rate = robot.closures.jacobian_and_rate(q, qdot)
    rows, rates = _pinocchio_rows(robot.closures, q, qdot)
    np.testing.assert_allclose(jacobian, rows, rtol=0, atol=1e-14)
    np.testing.assert_allclose(rate, rates, rtol=0, atol=1e-13)
    np.testing.assert_allclose(robot.closures.residual_and_jacobian(q)[1], rows, rtol=0, atol=1e-14)
    h = 1e-6
    numeric = (robot.closures.jacobian(q + h * qdot) - robot.closures.jacobian(q - h * qdot)) / (2 * h)
    np.testing.assert_allclose(rate, numeric, atol=1e-8)


def test_jacobian_and_rate_of_mixed_closures_against_pinocchio_and_by_hand(load):
    """The DualV's planar loops, a distance closure (a rod) and a cubic joint coupling in one set: the frame rows
    equal pinocchio's frame Jacobians and rates, the distance row ``u^T (J_b - J_a)_lin``, the coupling row and its
    rate the hand polynomial's (``e_b - P'(q_a) e_a``, ``-P''(q_a) qdot_a e_a``), every rate finite differences."""
    from pardyn.description.config import Closure
    from pardyn.kinematics.closure import LoopClosures

    robot = load("dualv")
    model = robot.model
    a, b = model.joints[model.getJointId("leg1_joint1")].idx_v, model.joints[model.getJointId("leg2_joint1")].idx_v
    coefficients = (0.1, 0.5, -0.3, 0.2)  # P(x) = 0.1 + 0.5 x - 0.3 x^2 + 0.2 x^3
    closures = LoopClosures(model, [
        *robot.closures.closures,
        Closure(name="couple", frames=(), type="coupling", components=(), joints=("leg1_joint1", "leg2_joint1"),
                coefficients=coefficients),
        Closure(name="rod", frames=("leg1_B", "platform_c3"), type="distance", components=(), length=0.3)])
    rng = np.random.default_rng(5)
    q, qdot = _perturbed(robot, rng, 0.2), rng.normal(size=model.nv)
    jacobian, rate = closures.jacobian_and_rate(q, qdot)
    rows, rates = _pinocchio_rows(closures, q, qdot)
    frame_rows = len(rows)
    np.testing.assert_allclose(jacobian[:frame_rows], rows, rtol=0, atol=1e-14)
    np.testing.assert_allclose(rate[: frame_rows - 1], rates[:-1], rtol=0, atol=1e-13)  # the rod's rate: below
    slope = coefficients[1] + 2 * coefficients[2] * q[a] + 3 * coefficients[3] * q[a] ** 2
    curvature = 2 * coefficients[2] + 6 * coefficients[3] * q[a]
    coupling, coupling_rate = np.zeros(model.nv), np.zeros(model.nv)
    coupling[b], coupling[a], coupling_rate[a] = 1.0, -slope, -curvature * qdot[a]
    np.testing.assert_allclose(jacobian[-1], coupling, rtol=0, atol=1e-14)
    np.testing.assert_allclose(rate[-1], coupling_rate, rtol=0, atol=1e-14)
    np.testing.assert_allclose(closures.residual_and_jacobian(q)[1], jacobian, rtol=0, atol=1e-14)
    h = 1e-6
    numeric = (closures.jacobian(q + h * qdot) - closures.jacobian(q - h * qdot)) / (2 * h)
    np.testing.assert_allclose(rate, numeric, atol=1e-8)
