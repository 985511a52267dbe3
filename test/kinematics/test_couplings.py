"""Joint couplings (issue 26): an MJCF ``joint`` equality ``q_b = c0 + c1 q_a`` is a closure row; the kinematics
against the hand relation, the dynamics against MuJoCo's inverse dynamics of the unedited file's tree mapped
through the coupling (virtual work: ``tau_a = tau_t,a + c1 tau_t,b``), the MuJoCo plant keeps the coupling."""

from __future__ import annotations

import json
import re

import mujoco
import numpy as np
import pytest

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.dynamics.forward import ForwardDynamics
from pardyn.errors import DescriptionError

# FINGER (test/conftest.py, the fixture finger_xml): q_tip - 0.1 = 0.05 + 0.8 (q_drive - 0.2) about qpos0 =
# (0.2, 0.1) from the joints' ref
C1 = 0.8
C0 = 0.05 + 0.1 - C1 * 0.2  # q_tip = C0 + C1 q_drive in qpos


# the vendor-style finger's expected note (its absent meshes; checked in test/description/test_own_robot.py)
pytestmark = pytest.mark.filterwarnings("ignore:.*mesh files missing.*2 mesh geoms skipped:UserWarning")

TENDON = ('<actuator><motor joint="drive"/></actuator>',
          '<tendon><fixed name="pull"><joint joint="drive" coef="1.0"/><joint joint="tip" coef="0.5"/></fixed></tendon>'
          '<actuator><motor name="pull_motor" tendon="pull" gear="2"/></actuator>')
"""The gripper's idiom: one actuator pulls a fixed tendon over both coupled joints (replaces the motor)."""


def vendor_style(text: str) -> str:
    """The finger as a vendor ships it: its one actuator on a fixed tendon (``TENDON``), and mesh geoms for
    looks and contacts whose files are absent here (each body carries an explicit ``<inertial>``)."""
    text = text.replace(*TENDON).replace(
        '<compiler angle="radian"/>', '<compiler angle="radian" meshdir="meshes"/>'
        '<asset><mesh name="proximal_shell" file="proximal.stl"/><mesh name="distal_shell" file="distal.stl"/></asset>')
    for body in ("proximal", "distal"):
        text = re.sub(f'(<body name="{body}".*?<inertial [^>]*/>)', rf'\1<geom type="mesh" mesh="{body}_shell"/>',
                      text, flags=re.S)
    assert text.count('type="mesh"') == 2 and 'tendon="pull"' in text
    return text


@pytest.fixture(params=["as written", "vendor style"])
def finger(tmp_path, request, finger_xml):
    """The unedited file, as a vendor ships it: the plain finger, and the same in the gripper's style."""
    (tmp_path / "finger.xml").write_text(finger_xml if request.param == "as written" else vendor_style(finger_xml))
    return tmp_path / "finger.xml"


def test_a_joint_equality_is_a_closure_row(finger):
    robot = pardyn.load_robot(finger)
    assert robot.structure.rank == 1 and robot.summary()["closures"][0]["type"] == "coupling"
    for drive in (-0.5, 0.1, 0.9):
        q = robot.solve_forward([drive]).q
        assert q[robot.joint_names.index("tip")] == pytest.approx(C0 + C1 * drive, abs=1e-12)


def test_dynamics_through_the_coupling_agree_with_mujoco(finger, finger_xml):
    robot = pardyn.load_robot(finger)
    reference = mujoco.MjModel.from_xml_string(finger_xml)  # the same tree (MuJoCo cannot compile absent meshes)
    reference.eq_active0[:] = 0  # the tree alone: its inverse dynamics, springs and damping included
    data = mujoco.MjData(reference)
    dynamics = InverseDynamics(robot)
    rng = np.random.default_rng(1)
    drive, tip = robot.joint_names.index("drive"), robot.joint_names.index("tip")
    for _ in range(5):
        a, a_dot, a_ddot = rng.uniform(-1.0, 1.0, 3)
        q, qdot, qddot = np.zeros(2), np.zeros(2), np.zeros(2)
        q[drive], qdot[drive], qddot[drive] = a, a_dot, a_ddot
        q[tip], qdot[tip], qddot[tip] = C0 + C1 * a, C1 * a_dot, C1 * a_ddot
        data.qpos[:], data.qvel[:], data.qacc[:] = q, qdot, qddot
        mujoco.mj_inverse(reference, data)
        expected = data.qfrc_inverse[drive] + C1 * data.qfrc_inverse[tip]
        assert dynamics.torques(q, qdot, qddot)[0] == pytest.approx(expected, rel=1e-10, abs=1e-13)


def test_the_mujoco_plant_keeps_the_coupling(finger):
    from pardyn.plants.mujoco_plant import MujocoPlant

    robot = pardyn.load_robot(finger)
    plant = MujocoPlant(robot)
    assert "polycoef" in plant.mjcf()
    drive, tip = robot.joint_names.index("drive"), robot.joint_names.index("tip")
    state = plant.step(np.array([0.02]), 0.2)
    assert abs(state.q[tip] - C0 - C1 * state.q[drive]) < 1e-6
    assert abs(state.q[drive] - robot.home[drive]) > 1e-3  # it moved


def test_a_fixed_tendon_actuator_is_a_transmission_to_the_driving_joint(tmp_path, finger_xml):
    """The gripper's idiom: one actuator pulls a fixed tendon over both coupled joints. Through the coupling its
    generalized force on ``drive`` is ``ratio f`` with ``ratio = gear (k_drive + c1 k_tip)``; MuJoCo's actuator
    forces (``qfrc_actuator``) mapped by virtual work, and its tendon length, say the same."""
    path = tmp_path / "finger_tendon.xml"
    path.write_text(finger_xml.replace(*TENDON))
    robot = pardyn.load_robot(path)
    assert robot.actuated_names == ("drive",)
    transmission = robot.description.transmissions
    ratio = 2.0 * (1.0 + 0.5 * C1)
    assert transmission.motors == ("pull_motor",) and transmission.ratio[0, 0] == pytest.approx(ratio, rel=1e-12)
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    drive, tip = robot.joint_names.index("drive"), robot.joint_names.index("tip")
    data.qpos[drive] = 0.4
    data.qpos[tip] = C0 + C1 * 0.4
    data.ctrl[:] = 0.3
    mujoco.mj_forward(model, data)
    generalized = data.qfrc_actuator[drive] + C1 * data.qfrc_actuator[tip]
    assert generalized == pytest.approx(ratio * 0.3, rel=1e-10)
    assert transmission.joint_positions(np.array([[2.0 * data.ten_length[0]]]))[0, 0] == pytest.approx(0.4, abs=1e-12)


def test_compiled_kernels_decline_couplings_and_springs_with_one_line(finger, tmp_path, finger_xml):
    """The kernel generator knows neither couplings nor springs: kernels='auto' keeps the Python path, says
    why, and the answer is still the hand relation (a compiled tree without the coupling row would not be)."""
    robot = pardyn.load_robot(finger, kernels="auto")
    assert "Python kinematics and dynamics" in robot.kernel_note and "coupling" in robot.kernel_note
    q = robot.solve_forward([0.4]).q
    assert q[robot.joint_names.index("tip")] == pytest.approx(C0 + C1 * 0.4, abs=1e-12)
    springs_only = tmp_path / "spring.xml"
    springs_only.write_text(finger_xml.replace(
        '<equality><joint joint1="tip" joint2="drive" polycoef="0.05 0.8 0 0 0"/></equality>', "").replace(
        '<motor joint="drive"/>', '<motor joint="drive"/><motor joint="tip"/>'))
    robot = pardyn.load_robot(springs_only, kernels="auto")
    assert "Python kinematics and dynamics" in robot.kernel_note and "springs" in robot.kernel_note


def test_a_vendor_style_finger_through_describe_kinematics_and_the_demo(tmp_path, own_robot_demo, capsys, finger_xml):
    """Issue 26's third robot: coupling, tendon actuator, spring, absent meshes; the file unedited. Its
    dynamics against MuJoCo: ``test_dynamics_through_the_coupling_agree_with_mujoco[vendor style]``."""
    from pardyn.cli import main

    path = tmp_path / "finger.xml"
    path.write_text(vendor_style(finger_xml))
    assert main(["robots", "--describe", str(path)]) == 0
    described = capsys.readouterr().out
    assert "tip = -0.01 + 0.8 drive" in described and "actuated: drive" in described
    assert main(["kinematics", "--robot", str(path), "--actuated", "0.4"]) == 0
    assert json.loads(capsys.readouterr().out)["joints"]["tip"] == pytest.approx(C0 + C1 * 0.4, abs=1e-12)
    result, console, _ = own_robot_demo(path)
    assert "overflow" not in console  # the unlimited tendon motor (DBL_MAX) in the command check
    validation = result["validation"]
    assert validation["relative_error_norm"] < validation["nominal"]["relative_error_norm"]


# a cubic coupling about qpos0 = (0.2, 0.1): q_tip - 0.1 = 0.05 + 0.8 x + 0.6 x^2 - 0.9 x^3, x = q_drive - 0.2
# (MuJoCo's polycoef, five coefficients); in qpos: q_tip = P(q_drive), the hand expansion below
POLYCOEF = (0.05, 0.8, 0.6, -0.9, 0.0)


def _hand_polynomial(q_drive: float, derivative: int = 0) -> float:
    """``q_tip`` (or its derivatives in ``q_drive``) by hand from MuJoCo's definition about qpos0."""
    x = q_drive - 0.2
    c0, c1, c2, c3, _ = POLYCOEF
    return (0.1 + c0 + c1 * x + c2 * x**2 + c3 * x**3, c1 + 2 * c2 * x + 3 * c3 * x**2, 2 * c2 + 6 * c3 * x)[derivative]


@pytest.fixture
def cubic_finger(tmp_path, finger_xml):
    path = tmp_path / "cubic.xml"
    path.write_text(finger_xml.replace('polycoef="0.05 0.8 0 0 0"', f'polycoef="{" ".join(map(str, POLYCOEF))}"'))
    return path


def test_a_polynomial_joint_equality_is_a_closure_row_with_its_jacobian_and_drift(cubic_finger):
    """Nonlinear ``polycoef`` (was refused: "not linear"): the solution is the hand polynomial and MuJoCo's own
    equality residual (``efc_pos``) is zero there; the Jacobian row and the drift ``Kdot qdot`` equal finite
    differences of the residual and of ``K qdot``."""
    robot = pardyn.load_robot(cubic_finger, kernels="auto")
    assert robot.summary()["closures"][0]["components"][0].endswith("drive^3")
    assert "coupling" in robot.kernel_note  # the compiled kernels decline it: the Python rows below
    closures = robot.closures
    reference = mujoco.MjModel.from_xml_path(str(cubic_finger))
    data = mujoco.MjData(reference)
    drive, tip = robot.joint_names.index("drive"), robot.joint_names.index("tip")
    for a in (-0.4, 0.2, 0.7):
        q = robot.solve_forward([a]).q
        assert q[tip] == pytest.approx(_hand_polynomial(a), abs=1e-12)
        data.qpos[:] = q
        mujoco.mj_forward(reference, data)
        assert abs(data.efc_pos[data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]).max() < 1e-12
        h, qdot = 1e-6, np.array([0.7, -0.4])
        numeric = np.array([(closures.residual(q + h * e) - closures.residual(q - h * e)) / (2 * h)
                            for e in np.eye(2)]).T
        jacobian, rate = closures.jacobian_and_rate(q, qdot)
        assert jacobian == pytest.approx(numeric, abs=1e-8)
        assert jacobian[0, drive] == pytest.approx(-_hand_polynomial(a, 1), rel=1e-12)
        rate_numeric = (closures.jacobian(q + h * qdot) - closures.jacobian(q - h * qdot)) / (2 * h)
        assert rate == pytest.approx(rate_numeric, abs=1e-8)
        assert closures.drift(q, qdot) == pytest.approx(rate @ qdot, abs=1e-12)


def test_dynamics_and_plant_through_a_polynomial_coupling_agree_with_mujoco(cubic_finger):
    """Inverse dynamics = MuJoCo's ``mj_inverse`` of the tree mapped by virtual work through the hand polynomial
    (``tau_a = tau_t,a + P'(q_a) tau_t,b``, ``qddot_b = P' qddot_a + P'' qdot_a^2``), and so does the forward
    dynamics (its accelerations keep the hand relation and give the torque back); the plant's MuJoCo model
    holds the cubic equality while it moves."""
    from pardyn.plants.mujoco_plant import MujocoPlant

    robot = pardyn.load_robot(cubic_finger)
    reference = mujoco.MjModel.from_xml_path(str(cubic_finger))
    reference.eq_active0[:] = 0
    data = mujoco.MjData(reference)
    dynamics = InverseDynamics(robot)
    drive, tip = robot.joint_names.index("drive"), robot.joint_names.index("tip")
    for a, a_dot, a_ddot in ((-0.3, 0.8, -1.5), (0.5, -1.1, 2.0)):
        slope, curvature = _hand_polynomial(a, 1), _hand_polynomial(a, 2)
        q, qdot, qddot = np.zeros(2), np.zeros(2), np.zeros(2)
        q[drive], qdot[drive], qddot[drive] = a, a_dot, a_ddot
        q[tip], qdot[tip] = _hand_polynomial(a), slope * a_dot
        qddot[tip] = slope * a_ddot + curvature * a_dot**2
        data.qpos[:], data.qvel[:], data.qacc[:] = q, qdot, qddot
        mujoco.mj_inverse(reference, data)
        expected = data.qfrc_inverse[drive] + slope * data.qfrc_inverse[tip]
        assert dynamics.torques(q, qdot, qddot)[0] == pytest.approx(expected, rel=1e-10, abs=1e-13)
        # forward dynamics (the drift row): the hand second derivative, and MuJoCo returns the torque applied
        accelerations = ForwardDynamics(robot).accelerations(q, qdot, np.array([0.07]))
        assert accelerations[tip] == pytest.approx(slope * accelerations[drive] + curvature * a_dot**2, rel=1e-10)
        data.qacc[:] = accelerations
        mujoco.mj_inverse(reference, data)
        assert data.qfrc_inverse[drive] + slope * data.qfrc_inverse[tip] == pytest.approx(0.07, rel=1e-10)
    plant = MujocoPlant(robot)
    state = plant.step(np.array([0.03]), 0.2)
    assert abs(state.q[tip] - _hand_polynomial(state.q[drive])) < 1e-6
    assert abs(state.q[drive] - robot.home[drive]) > 1e-3


def test_polynomial_couplings_in_a_yaml_and_what_is_refused(tmp_path, cubic_finger):
    """A YAML coupling takes 2 to 5 coefficients; a tendon over a nonlinearly coupled joint is one line."""
    from pardyn.description.config import parse_description

    closure = {"name": "g", "type": "coupling", "joints": ["drive", "tip"], "coefficients": [0.1, 0.5, 0.2]}
    top = {"name": "f", "urdf": str(cubic_finger), "task": "actuated", "actuated": ["drive"], "closures": [closure]}
    assert parse_description(top, source=tmp_path / "f.yaml").closures[0].coefficients == (0.1, 0.5, 0.2)
    closure["coefficients"] = [0.0] * 6
    with pytest.raises(DescriptionError, match=r"closures\[0\].coefficients: expected 2 to 5 numbers"):
        parse_description(top, source=tmp_path / "f.yaml")
    text = cubic_finger.read_text().replace(
        '<actuator><motor joint="drive"/></actuator>',
        '<tendon><fixed name="pull"><joint joint="drive" coef="1"/><joint joint="tip" coef="1"/></fixed></tendon>'
        '<actuator><motor name="m" tendon="pull"/></actuator>')
    cubic_finger.write_text(text)
    with pytest.raises(DescriptionError, match="actuator 'm': its tendon runs over 'tip', coupled to 'drive' by a "
                                               "nonlinear polycoef"):
        pardyn.load_robot(cubic_finger)
