"""Joint springs (issue 26): MJCF ``stiffness``/``springref`` and the YAML ``springs:`` section in the dynamics,
the regressor (the stiffness is an identifiable parameter ``k_<joint>``) and the MuJoCo plant, checked against
MuJoCo's own inverse dynamics (``mj_inverse``: ``M qacc + bias - qfrc_passive``, springs and damping in the
passive forces) of the unedited file, and against a hand case."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.dynamics.regressor import Regressor
from pardyn.plants.mujoco_plant import build_mjcf

PENDULUM = """
<mujoco model="sprung">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="upper">
      <joint name="shoulder" type="hinge" axis="0 1 0" stiffness="3.0" springref="0.2" damping="0.1"/>
      <inertial pos="0 0 -0.15" mass="0.8" diaginertia="0.004 0.005 0.002"/>
      <body name="lower" pos="0 0 -0.3">
        <joint name="elbow" type="hinge" axis="0 1 0" stiffness="1.5" springref="-0.4"/>
        <inertial pos="0.01 0 -0.12" mass="0.5" diaginertia="0.002 0.003 0.001"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="shoulder"/><motor joint="elbow"/></actuator>
</mujoco>
"""


@pytest.fixture
def sprung(tmp_path):
    path = tmp_path / "sprung.xml"
    path.write_text(PENDULUM)
    return path


def test_mjcf_springs_in_the_dynamics_regressor_and_plant_agree_with_mujoco(sprung, mujoco_inverse):
    robot = pardyn.load_robot(sprung)
    params = robot.nominal_parameters
    assert [(s.joint, s.stiffness, s.reference) for s in params.springs] == [("shoulder", 3.0, 0.2),
                                                                            ("elbow", 1.5, -0.4)]
    assert params.names[-2:] == ("k_shoulder", "k_elbow")
    reference = mujoco.MjModel.from_xml_path(str(sprung))
    plant = mujoco.MjModel.from_xml_string(build_mjcf(robot))
    np.testing.assert_array_equal(plant.jnt_stiffness, [3.0, 1.5])
    np.testing.assert_array_equal(plant.qpos_spring, [0.2, -0.4])
    rng = np.random.default_rng(0)
    dynamics, regressor = InverseDynamics(robot), Regressor(robot)
    states = rng.uniform(-1.0, 1.0, (5, 3, 2))
    for q, qdot, qddot in states:
        expected = mujoco_inverse(reference, q, qdot, qddot)
        torques = dynamics.torques(q, qdot, qddot)
        np.testing.assert_allclose(torques, expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(mujoco_inverse(plant, q, qdot, qddot), expected, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(regressor.equations(q, qdot, qddot)[0] @ params.vector(), expected,
                                   rtol=1e-10, atol=1e-12)
    # the stiffnesses are identifiable: least squares on MuJoCo's torques gives them back
    observation = np.concatenate([regressor.equations(q, qdot, qddot)[0] for q, qdot, qddot in states])
    measured = np.concatenate([mujoco_inverse(reference, q, qdot, qddot) for q, qdot, qddot in states])
    columns = [params.names.index("k_shoulder"), params.names.index("k_elbow")]
    known = np.delete(np.arange(params.size), columns)
    fit = np.linalg.lstsq(observation[:, columns], measured - observation[:, known] @ params.vector()[known],
                          rcond=None)[0]
    np.testing.assert_allclose(fit, [3.0, 1.5], rtol=1e-10)


def test_a_springs_section_on_a_urdf_robot_against_a_hand_case(tmp_path):
    """Two links turning about vertical axes (gravity does no work), at rest: tau = k (q - q_ref) exactly."""
    links = "".join(f'<link name="l{i}"><inertial><origin xyz="0.5 0 0"/><mass value="1"/><inertia ixx="0.01" '
                    f'iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>' for i in (1, 2))
    (tmp_path / "arm.urdf").write_text(
        f'<robot name="arm"><link name="base"/>{links}'
        '<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>'
        '<joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/>'
        '<axis xyz="0 0 1"/></joint></robot>')
    (tmp_path / "arm.yaml").write_text(
        "name: arm\nurdf: arm.urdf\ntask: actuated\nactuated: [j1, j2]\n"
        "springs:\n  - {joints: [j2], stiffness: 4.0, reference: 0.5}\n")
    robot = pardyn.load_robot(tmp_path / "arm.yaml")
    tau = InverseDynamics(robot).torques(np.array([0.3, 1.0]), np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(tau, [0.0, 4.0 * (1.0 - 0.5)], atol=1e-12)
    (tmp_path / "arm.yaml").write_text(
        "name: arm\nurdf: arm.urdf\ntask: actuated\nactuated: [j1, j2]\nsprings:\n  - {joints: [j3], stiffness: 1}\n")
    with pytest.raises(pardyn.DescriptionError, match="springs: unknown joint 'j3'"):
        pardyn.load_robot(tmp_path / "arm.yaml")


def test_the_sdf_export_carries_the_springs_in_the_simulators_coordinate(sprung):
    """SDF joints move ``s = q - home``: the spring torque ``k (s - s_ref)`` must equal pardyn's ``k (q - q_ref)``."""
    from pardyn.export import build_mechanism

    robot = pardyn.load_robot(sprung)
    joints = {joint.name: joint for joint in build_mechanism(robot).joints}
    q = np.array([0.7, -0.1])
    for spring in robot.nominal_parameters.springs:
        joint, home = joints[spring.joint], robot.home[spring.index]
        assert joint.spring_stiffness == spring.stiffness
        sdf_torque = joint.spring_stiffness * ((q[spring.index] - home) - joint.spring_reference)
        assert sdf_torque == pytest.approx(spring.stiffness * (q[spring.index] - spring.reference), abs=1e-12)
