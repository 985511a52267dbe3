"""MJCF loader against MuJoCo itself: kinematics, inertias, dynamics and equality residuals of the same file."""

from __future__ import annotations

import math
import re
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from pardyn.description.mjcf import MjcfClosure, read_mjcf
from pardyn.errors import DescriptionError

# The planar four-bar (FOUR_BAR, assembled_four_bar, its pivot D) comes from conftest.py.

# Spatial tree: non-unit and negative axes, a body with two joints (hinge + slide), joint refs,
# inertia from geoms, an explicit rotated <inertial>, a jointless body inside the chain (merged),
# a static body under the world, rotated bodies, welds (body- and site-based, with and without
# relpose, torquescale 0) and connects (to the world, site-based).
SPATIAL = """
<mujoco model="spatial">
  <compiler angle="degree"/>
  <option gravity="0.3 -0.2 -9.7"/>
  <worldbody>
    <body name="base" pos="0 0 0.1" euler="10 -20 30">
      <joint name="j1" axis="0.3 0.2 1" pos="0.01 0 0" range="-170 170" damping="0.4" armature="0.02"
             frictionloss="0.1"/>
      <geom type="box" size="0.05 0.04 0.1" pos="0 0 0.1" euler="0 15 0"/>
      <body name="arm" pos="0.2 0.05 0.3" euler="30 10 -20">
        <joint name="j2" axis="1 0 0" pos="0.01 0.02 0" damping="0.1"/>
        <joint name="j3" type="slide" axis="0 1 1" ref="0.05" range="-0.1 0.2" armature="0.5"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 0.2" size="0.02"/>
        <body name="tool" pos="0.1 0 0.2" quat="0.9 0.1 0.3 -0.2">
          <inertial pos="0.01 0.02 0.03" mass="0.3" diaginertia="0.001 0.002 0.0025" quat="0.8 0.2 -0.1 0.3"/>
          <site name="tool_site" pos="0.02 0.01 0.05" euler="5 6 7"/>
          <body name="tip" pos="0.05 0 0.05">
            <joint name="j4" axis="0 0 -1" ref="11"/>
            <geom type="sphere" size="0.03" pos="0.02 0 0"/>
            <site name="tip_site" pos="0.03 0.01 -0.02" euler="-15 25 40"/>
          </body>
        </body>
      </body>
    </body>
    <body name="post" pos="0.5 0 0" euler="0 0 45">
      <geom type="cylinder" size="0.02 0.1"/>
      <body name="leg" pos="0 0 0.2">
        <joint name="j5" axis="0 1 0" ref="17" pos="0 0 0.01"/>
        <joint name="j6" type="slide" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 -0.2 0 0.3" size="0.02"/>
        <site name="leg_site" pos="-0.2 0 0.3"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <weld name="w" body1="tip" body2="leg" anchor="0.01 0.02 0.03"/>
    <connect body1="arm" anchor="0.1 0 0"/>
    <weld name="wr" body1="tool" body2="leg" relpose="0.1 0.2 0.3 0.7 0.1 0.2 -0.3" anchor="-0.05 0 0.02"
          torquescale="2"/>
    <connect name="cs" site1="tip_site" site2="leg_site"/>
    <weld name="ws" site1="tool_site" site2="leg_site" torquescale="1.5"/>
    <weld name="w0" body1="arm" body2="post" torquescale="0"/>
  </equality>
  <actuator>
    <motor name="m1" joint="j1" gear="2"/>
    <position name="p5" joint="j5" kp="10"/>
    <general name="g2" joint="j2"/>
    <motor name="m1_again" joint="j1"/>
    <motor name="on_site" site="tip_site" gear="0 0 1 0 0 0"/>
  </actuator>
  <keyframe>
    <key name="bent" qpos="0.1 0.2 0.03 0.4 0.5 0.06"/>
  </keyframe>
</mujoco>
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, four_bar_xml) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("mjcf")
    paths = {}
    for name, text in (("four_bar", four_bar_xml), ("spatial", SPATIAL)):
        paths[name] = folder / f"{name}.xml"
        paths[name].write_text(text)
    return paths


@pytest.fixture(scope="module")
def four_bar(files):
    return read_mjcf(files["four_bar"]), mujoco.MjModel.from_xml_path(str(files["four_bar"]))


@pytest.fixture(scope="module")
def spatial(files):
    with pytest.warns(UserWarning):  # a site transmission, a joint driven twice
        robot = read_mjcf(files["spatial"])
    return robot, mujoco.MjModel.from_xml_path(str(files["spatial"]))


def _body_frame(model: pin.Model, name: str) -> int:
    return model.getFrameId(name, pin.FrameType.BODY)


def _joint_of_body(mj: mujoco.MjModel, body: int) -> int:
    """Pinocchio joint id carrying a MuJoCo body: last joint of the body or of its nearest moving ancestor."""
    while body and not mj.body_jntnum[body]:
        body = mj.body_parentid[body]
    return 0 if body == 0 else int(mj.body_jntadr[body] + mj.body_jntnum[body])  # joint ids shifted by universe


def _check_tree_against_mujoco(robot, mj: mujoco.MjModel, configurations: np.ndarray) -> None:
    """Bodies, joint axes and anchors, centres of mass, mass matrix and bias forces against MuJoCo."""
    model = robot.model
    data, mj_data = model.createData(), mujoco.MjData(mj)
    body_frames = [_body_frame(model, mj.body(b).name) for b in range(mj.nbody)]
    rng = np.random.default_rng(7)
    for q in configurations:
        qdot = rng.uniform(-2.0, 2.0, mj.nv)
        mj_data.qpos[:], mj_data.qvel[:] = q, qdot
        mujoco.mj_forward(mj, mj_data)
        pin.framesForwardKinematics(model, data, q)
        pin.computeJointJacobians(model, data, q)
        for body, frame in enumerate(body_frames):
            np.testing.assert_allclose(data.oMf[frame].translation, mj_data.xpos[body], rtol=0, atol=1e-12)
            np.testing.assert_allclose(data.oMf[frame].rotation, mj_data.xmat[body].reshape(3, 3), rtol=0, atol=1e-12)
            # centre of mass of the body (carried by its BODY frame's inertia)
            com = data.oMf[frame].act(model.frames[frame].inertia.lever)
            np.testing.assert_allclose(com, mj_data.xipos[body], rtol=0, atol=1e-12)
        for joint in range(mj.njnt):
            joint_id = model.getJointId(mj.joint(joint).name)
            local = pin.getJointJacobian(model, data, joint_id, pin.LOCAL)[:, model.idx_vs[joint_id]]
            is_hinge = mj.jnt_type[joint] == mujoco.mjtJoint.mjJNT_HINGE
            axis = data.oMi[joint_id].rotation @ (local[3:] if is_hinge else local[:3])
            np.testing.assert_allclose(axis, mj_data.xaxis[joint], rtol=0, atol=1e-12)
            # MuJoCo's anchor is taken before the joint moves: a slide then carries pinocchio's joint frame along
            slide = 0.0 if is_hinge else q[mj.jnt_qposadr[joint]] - mj.qpos0[mj.jnt_qposadr[joint]]
            np.testing.assert_allclose(data.oMi[joint_id].translation, mj_data.xanchor[joint] + slide * axis,
                                       rtol=0, atol=1e-12)
        # centres of mass of the lumped joint inertias: mass-weighted MuJoCo xipos
        for joint_id in range(1, model.njoints):
            bodies = [b for b in range(1, mj.nbody) if _joint_of_body(mj, b) == joint_id]
            mass = sum(mj.body_mass[b] for b in bodies)
            if mass > 0.0:
                com = sum(mj.body_mass[b] * mj_data.xipos[b] for b in bodies) / mass
                np.testing.assert_allclose(data.oMi[joint_id].act(model.inertias[joint_id].lever), com,
                                           rtol=0, atol=1e-12)
        mass_matrix = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, mj_data, mass_matrix)  # armature included, as in pinocchio's crba
        crba = pin.crba(model, data, q)
        np.testing.assert_allclose(np.triu(crba) + np.triu(crba, 1).T, mass_matrix, rtol=0,
                                   atol=1e-12 * np.abs(mass_matrix).max())
        bias = pin.rnea(model, data, q, qdot, np.zeros(mj.nv))  # Coriolis, centrifugal and gravity
        np.testing.assert_allclose(bias, mj_data.qfrc_bias, rtol=0, atol=1e-12 * np.abs(mj_data.qfrc_bias).max())


def _check_inertias_at_qpos0(robot, mj: mujoco.MjModel) -> None:
    """Mass and world inertia tensor (about its centre of mass) of every lumped joint body, from MuJoCo's bodies."""
    model, data, mj_data = robot.model, robot.model.createData(), mujoco.MjData(mj)
    mujoco.mj_kinematics(mj, mj_data)
    pin.forwardKinematics(model, data, mj.qpos0)
    for joint_id in range(1, model.njoints):
        bodies = [b for b in range(1, mj.nbody) if _joint_of_body(mj, b) == joint_id]
        mass = sum(mj.body_mass[b] for b in bodies)
        inertia = model.inertias[joint_id]
        assert inertia.mass == pytest.approx(mass, rel=1e-12, abs=0.0)
        if not bodies or mass == 0.0:
            continue
        com = sum(mj.body_mass[b] * mj_data.xipos[b] for b in bodies) / mass
        expected = np.zeros((3, 3))
        for b in bodies:
            frame = mj_data.ximat[b].reshape(3, 3)  # principal axes of the body in the world
            r = mj_data.xipos[b] - com
            parallel_axis = mj.body_mass[b] * (r @ r * np.eye(3) - np.outer(r, r))
            expected += frame @ np.diag(mj.body_inertia[b]) @ frame.T + parallel_axis
        rotation = data.oMi[joint_id].rotation
        np.testing.assert_allclose(rotation @ inertia.inertia @ rotation.T, expected, rtol=0,
                                   atol=1e-12 * np.abs(expected).max())


def _equality_rows(mj: mujoco.MjModel, mj_data: mujoco.MjData, name: str) -> np.ndarray:
    index = next(i for i in range(mj.neq) if (mj.equality(i).name or f"equality{i}") == name)
    rows = (mj_data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY) & (mj_data.efc_id == index)
    return mj_data.efc_pos[rows]


def _check_closures_against_mujoco(robot, mj: mujoco.MjModel, configurations: np.ndarray) -> float:
    """MuJoCo's equality residual (efc_pos) = frame_a - frame_b; rotation rows = torquescale Im(q_b^-1 q_a)."""
    model, data, mj_data = robot.model, robot.model.createData(), mujoco.MjData(mj)
    largest = 0.0
    for q in configurations:
        mj_data.qpos[:] = q
        mujoco.mj_forward(mj, mj_data)
        pin.framesForwardKinematics(model, data, q)
        for closure in robot.closures:
            a, b = data.oMf[model.getFrameId(closure.frame_a)], data.oMf[model.getFrameId(closure.frame_b)]
            residual = _equality_rows(mj, mj_data, closure.name)
            np.testing.assert_allclose(residual[:3], a.translation - b.translation, rtol=0, atol=1e-10)
            largest = max(largest, np.abs(residual[:3]).max())
            if residual.size == 6:  # a weld
                index = next(i for i in range(mj.neq) if mj.equality(i).name == closure.name)
                torquescale = mj.eq_data[index, 10]
                imaginary = pin.Quaternion(b.rotation.T @ a.rotation).coeffs()[:3]  # (x, y, z, w) order
                sign = 1.0 if residual[3:] @ imaginary >= 0.0 else -1.0  # a quaternion and its opposite
                np.testing.assert_allclose(residual[3:], sign * torquescale * imaginary, rtol=0, atol=1e-10)
    return largest


def _random_configurations(mj: mujoco.MjModel, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return mj.qpos0 + rng.uniform(-math.pi, math.pi, (count, mj.nq))


# -- the four-bar ---------------------------------------------------------------------------------


def test_four_bar_tree_agrees_with_mujoco(four_bar):
    robot, mj = four_bar
    assert [robot.model.names[i] for i in range(1, robot.model.njoints)] == [
        "crank_joint", "coupler_joint", "rocker_joint"]
    assert robot.closures == (MjcfClosure("loop", "loop_a", "loop_b", "3D"),)
    assert robot.actuated == ("crank_joint",)
    np.testing.assert_array_equal(robot.gravity, [0.0, 0.0, -9.81])
    assert robot.source.name == "four_bar.xml" and robot.notes == ()
    # the static ground stays on the universe, addressable by name
    ground = robot.model.frames[_body_frame(robot.model, "ground")]
    assert ground.parentJoint == 0 and robot.model.frames[robot.model.getFrameId("loop_b")].parentJoint == 0
    _check_tree_against_mujoco(robot, mj, _random_configurations(mj, 50, seed=1))
    _check_inertias_at_qpos0(robot, mj)


def test_four_bar_closure_frames_coincide_when_assembled(four_bar, assembled_four_bar, four_bar_pivot):
    robot, mj = four_bar
    model, data = robot.model, robot.model.createData()
    np.testing.assert_allclose(mj.eq_data[0, 3:6], 0.0, atol=1e-15)  # MuJoCo sees the file closed at qpos0
    mj_data = mujoco.MjData(mj)
    for crank in np.linspace(-math.pi, math.pi, 13):
        q = assembled_four_bar(crank)
        pin.framesForwardKinematics(model, data, q)
        a, b = data.oMf[model.getFrameId("loop_a")], data.oMf[model.getFrameId("loop_b")]
        np.testing.assert_allclose(a.translation, b.translation, rtol=0, atol=1e-12)
        np.testing.assert_allclose(a.translation[[0, 2]], four_bar_pivot, rtol=0, atol=1e-12)  # the rocker's end is at D
        mj_data.qpos[:] = q
        mujoco.mj_forward(mj, mj_data)
        np.testing.assert_allclose(_equality_rows(mj, mj_data, "loop"), 0.0, atol=1e-12)
    largest = _check_closures_against_mujoco(robot, mj, _random_configurations(mj, 50, seed=2))
    assert largest > 0.1  # the random configurations do violate the loop


# -- the spatial tree -----------------------------------------------------------------------------


def test_spatial_tree_agrees_with_mujoco(spatial):
    robot, mj = spatial
    model = robot.model
    assert [model.names[i] for i in range(1, model.njoints)] == ["j1", "j2", "j3", "j4", "j5", "j6"]
    kinds = [model.joints[i].shortname() for i in range(1, model.njoints)]
    assert kinds == ["JointModelRevoluteUnaligned", "JointModelRX", "JointModelPrismaticUnaligned",
                     "JointModelRevoluteUnaligned", "JointModelRY", "JointModelPZ"]
    assert model.parents[3] == 2 and model.inertias[2].mass == 0.0  # j2 -> j3 chain, j2 massless
    # every MuJoCo body, joint and named site is addressable by name
    for body in range(mj.nbody):
        assert model.existFrame(mj.body(body).name, pin.FrameType.BODY)
    for joint in range(mj.njnt):
        assert model.existFrame(mj.joint(joint).name, pin.FrameType.JOINT)
    for site in ("tool_site", "tip_site", "leg_site"):
        assert model.existFrame(site, pin.FrameType.OP_FRAME)
    np.testing.assert_array_equal(model.gravity.linear, [0.3, -0.2, -9.7])
    configurations = _random_configurations(mj, 50, seed=3)
    _check_tree_against_mujoco(robot, mj, configurations)
    _check_inertias_at_qpos0(robot, mj)
    # sites: world placement against MuJoCo's site_xpos / site_xmat
    data, mj_data = model.createData(), mujoco.MjData(mj)
    for q in configurations[:5]:
        mj_data.qpos[:] = q
        mujoco.mj_kinematics(mj, mj_data)
        pin.framesForwardKinematics(model, data, q)
        for site in range(mj.nsite):
            placement = data.oMf[model.getFrameId(mj.site(site).name)]
            np.testing.assert_allclose(placement.translation, mj_data.site_xpos[site], rtol=0, atol=1e-12)
            np.testing.assert_allclose(placement.rotation, mj_data.site_xmat[site].reshape(3, 3), rtol=0, atol=1e-12)


def test_spatial_joint_fields_actuators_and_references(spatial):
    robot, mj = spatial
    model = robot.model
    degree = math.pi / 180.0
    j1, j3 = model.idx_vs[model.getJointId("j1")], model.idx_vs[model.getJointId("j3")]
    # values written in the file (degrees for hinge ranges)
    assert (model.lowerPositionLimit[j1], model.upperPositionLimit[j1]) == pytest.approx((-170 * degree, 170 * degree))
    assert (model.lowerPositionLimit[j3], model.upperPositionLimit[j3]) == pytest.approx((-0.1, 0.2))
    assert model.upperPositionLimit[model.idx_qs[model.getJointId("j2")]] > 1e300  # unlimited
    np.testing.assert_allclose(model.damping, [0.4, 0.1, 0, 0, 0, 0])
    np.testing.assert_allclose(model.armature, [0.02, 0, 0.5, 0, 0, 0])
    np.testing.assert_allclose(model.friction, [0.1, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(model.lowerDryFrictionLimit, [-0.1, 0, 0, 0, 0, 0])
    # actuator order, each joint once; the site transmission and the repeat are noted
    assert robot.actuated == ("j1", "j5", "j2")
    assert any("'on_site' has a site transmission" in n for n in robot.notes)
    assert any("'m1_again' drives 'j1' again" in n for n in robot.notes)
    # MuJoCo's reference configuration (joint refs) and the keyframe
    np.testing.assert_allclose(robot.qpos0, [0, 0, 0.05, 11 * degree, 17 * degree, 0], atol=1e-15)
    np.testing.assert_array_equal(model.referenceConfigurations["qpos0"], mj.qpos0)
    np.testing.assert_allclose(model.referenceConfigurations["bent"], [0.1, 0.2, 0.03, 0.4, 0.5, 0.06])
    assert [c.name for c in robot.closures] == ["w", "equality1", "wr", "cs", "ws", "w0"]
    assert [c.type for c in robot.closures] == ["6D", "3D", "6D", "3D", "6D", "3D"]  # torquescale 0: a connect


def test_spatial_closure_frames_coincide_at_qpos0_and_match_mujoco_residuals(spatial):
    robot, mj = spatial
    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, mj.qpos0)
    for name in ("w", "equality1", "w0"):  # body-based without relpose: closed at qpos0 by MuJoCo's compiler
        closure = next(c for c in robot.closures if c.name == name)
        a, b = data.oMf[model.getFrameId(closure.frame_a)], data.oMf[model.getFrameId(closure.frame_b)]
        np.testing.assert_allclose(a.translation, b.translation, rtol=0, atol=1e-12)
        if closure.type == "6D":
            np.testing.assert_allclose(a.rotation, b.rotation, rtol=0, atol=1e-12)
    largest = _check_closures_against_mujoco(robot, mj, _random_configurations(mj, 50, seed=4))
    assert largest > 0.1


# -- bad files and what is skipped ----------------------------------------------------------------


def _write(tmp_path: Path, text: str, name: str = "robot.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_ball_joints_are_three_hinges_and_free_joints_say_how_to_hold_them(tmp_path):
    """A ball joint is read as three hinges (issue 41; test_vendor_ball.py: it was refused); a free joint (a floating
    base) is held by a YAML's ``base:`` (test_vendor_exports.py); bare, the refusal says so (it advised writing a
    spherical joint as three hinges)."""
    path = _write(tmp_path, """<mujoco><worldbody><body name="b"><joint name="knee" type="ball"/>
        <geom size="0.1"/></body></worldbody></mujoco>""")
    with pytest.warns(UserWarning, match=r"ball joints \['knee'\] read as three hinges"):
        robot = read_mjcf(path)
    assert [robot.model.names[j] for j in range(1, robot.model.njoints)] == ["knee_x", "knee_y", "knee_z"]
    path = _write(tmp_path, """<mujoco><worldbody><body name="b"><joint name="root" type="free"/>
        <geom size="0.1"/></body></worldbody></mujoco>""", "free.xml")
    with pytest.raises(DescriptionError, match=rf"{re.escape(str(path))}: joint 'root' is a free joint \(a floating "
                       r"base\); .* 'base: fixed' \(at the file's pose\) or 'base: \{keyframe: NAME\}'"):
        read_mjcf(path)


def test_missing_file_and_files_that_are_not_mjcf(tmp_path):
    with pytest.raises(DescriptionError, match=rf"{re.escape(str(tmp_path / 'nope.xml'))}: no such MJCF file"):
        read_mjcf(tmp_path / "nope.xml")
    urdf = _write(tmp_path, '<robot name="r"><link name="a"/></robot>', "robot.urdf")
    with pytest.raises(DescriptionError, match=rf"{re.escape(str(urdf))}: root element <robot> is not <mujoco>"):
        read_mjcf(urdf)  # MuJoCo itself would read a URDF
    text = _write(tmp_path, "joints: [a, b]\n", "robot.yaml")
    with pytest.raises(DescriptionError, match=rf"{re.escape(str(text))}: not an XML file"):
        read_mjcf(text)
    broken = _write(tmp_path, "<mujoco><worldbody><body>", "broken.xml")
    with pytest.raises(DescriptionError, match=rf"{re.escape(str(broken))}: MuJoCo cannot compile this MJCF: "
                       "XML parse error.*XML_ERROR_MISMATCHED_ELEMENT"):
        read_mjcf(broken)
    unknown = _write(tmp_path, '<mujoco><worldbody><body><joint axis="0 0 0"/><geom size="1"/></body>'
                               "</worldbody></mujoco>", "zero_axis.xml")
    with pytest.raises(DescriptionError, match=rf"{re.escape(str(unknown))}: MuJoCo cannot compile this MJCF: .*axis"):
        read_mjcf(unknown)


TWO_HINGES = """<mujoco><worldbody>
  <body name="a"><joint name="ja" axis="0 1 0"/><geom size="0.1"/>
    <body name="b" pos="1 0 0"><joint axis="0 1 0"/><geom size="0.1"/></body></body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="ja" coef="1"/></fixed></tendon>
  <equality>{}</equality></mujoco>"""


def test_constant_joint_and_tendon_equalities_are_refused_when_active_and_skipped_when_not(tmp_path):
    active = _write(tmp_path, TWO_HINGES.format('<joint name="gear" joint1="ja"/>'))
    unnamed = pytest.warns(UserWarning, match="joint 1 has no name: called 'joint1'")
    refused = pytest.raises(DescriptionError, match=rf"{re.escape(str(active))}: equality 'gear' holds joint 'ja' at "
                                                    "a constant: lock it instead")  # couplings: test_couplings.py
    with unnamed, refused:
        read_mjcf(active)
    tendon = _write(tmp_path, TWO_HINGES.format('<tendon name="rope" tendon1="t"/>'), "tendon.xml")
    unnamed = pytest.warns(UserWarning, match="joint 1 has no name: called 'joint1'")
    refused = pytest.raises(DescriptionError, match=rf"{re.escape(str(tendon))}: equality 'rope' is a tendon equality")
    with unnamed, refused:
        read_mjcf(tendon)
    inactive = _write(tmp_path, TWO_HINGES.format(
        '<joint name="gear" joint1="ja" active="false"/>'
        '<connect name="off" body1="b" anchor="0 0 0" active="false"/>'), "inactive.xml")
    with pytest.warns(UserWarning) as caught:
        robot = read_mjcf(inactive)
    assert robot.closures == () and robot.actuated == ()
    assert [robot.model.names[i] for i in (1, 2)] == ["ja", "joint1"]
    assert robot.notes == (
        "joint 1 has no name: called 'joint1'",
        "equality 'gear' (joint) is inactive (active=\"false\"): skipped",
        "equality 'off' (connect) is inactive (active=\"false\"): skipped",
        "1 tendon(s) ignored (their springs, dampers and limits are not in the tree)",
    )
    assert [str(w.message) for w in caught] == [f"{inactive}: {note}" for note in robot.notes]


def test_pinocchio_mjcf_parser_drops_later_top_level_bodies(four_bar, files):
    """Why read_mjcf exists (module docstring): pin 4.1's MJCF parser keeps only the first tree under <worldbody>."""
    with pytest.raises(ValueError, match="Model does not have any body named ground"):
        pin.buildModelAndConstraintsFromMJCF(str(files["four_bar"]))
    model = pin.buildModelFromMJCF(str(files["four_bar"]))
    assert not model.existFrame("ground") and model.existFrame("rocker")
    robot, _ = four_bar
    assert robot.model.existFrame("ground")
