"""MJCF ball joints (issue 41 item 5): a leg in the style of MuJoCo Menagerie's Agility Cassie (``cassie.xml``: a rod
on a ``ball`` joint whose far end is held by a ``connect`` equality, a ``<freejoint>`` pelvis, a texture whose file
is absent, a keyframe), written here. pardyn reads each ball joint as three hinges ``NAME_x``, ``NAME_y``,
``NAME_z`` about the body's axes (``R = Rx(a) Ry(b) Rz(c)``, massless bodies between them); they were refused.

References, independent of pardyn's reading: MuJoCo's own compiled model of the same file (body poses at a keyframe
whose ball quaternion is turned, equality residuals ``efc_pos`` and Jacobian ``efc_J`` through the loop,
``mj_inverse``) and pinocchio's own MJCF parser, which reads the ball as ``JointModelSpherical`` (a quaternion,
``nq = 4 != nv = 3``). A ball's velocity is its angular velocity in the body frame ``w = S(a, b, c) (a', b', c')``
(MuJoCo's and pinocchio's ``v``), so its torque maps to the hinges as ``tau_hinges = S^T tau_ball`` (virtual work).
"""

from __future__ import annotations

import math
import warnings

import mujoco
import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.description.mjcf import ball_angles, read_mjcf
from pardyn.errors import DescriptionError

ROD_ANCHOR = (0.2, 0.0, 0.13)  # the rod's far end in its body frame: from the crank's tip to the rocker's
KEY_ROD = (0.2, -0.35, 0.5)  # a keyframe's ball orientation (Rx Ry Rz angles, rad): not a closed pose, a tree's


def _quat(angles) -> np.ndarray:
    matrix = _rx(angles[0]) @ _ry(angles[1]) @ _rz(angles[2])
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, matrix.reshape(-1))
    return quat


def _rx(a: float) -> np.ndarray:
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def _ry(a: float) -> np.ndarray:
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


def _rz(a: float) -> np.ndarray:
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def _s(angles) -> np.ndarray:
    """Body-frame angular velocity of ``R = Rx(a) Ry(b) Rz(c)`` per angle rate, (3, 3)."""
    a, b, c = angles
    ex, ey, ez = np.eye(3)
    return np.column_stack([_rz(c).T @ _ry(b).T @ ex, _rz(c).T @ ey, ez])


def leg_mjcf(*, free: bool = True, texture: bool = True, spring: bool = False, key: bool = True) -> str:
    """A crank (the motor, about y) drives a rod on a ball joint; the rod's end is held by a ``connect`` on a
    rocker (about x) of the pelvis, or (``spring``) on a heel on a stiff hinge of the rocker (Cassie's heel
    spring). The rod's centre of mass is on its axis: its spin about that axis is an internal motion."""
    heel = ('<body name="heel" pos="0 0 -0.08"><joint name="heel" axis="0 1 0" stiffness="50" damping="0.002"/>'
            '<inertial pos="0.01 0 -0.02" mass="0.05" diaginertia="1e-5 1.2e-5 0.8e-5"/></body>') if spring else ""
    free_joint = '<freejoint name="root"/>' if free else ""
    material = ' material="skin"' if texture else ""
    assets = ('<asset><texture name="skin" type="2d" file="leg-texture.png"/><material name="skin" texture="skin"/>'
              '</asset>') if texture else ""
    keyframe = ""
    if key:
        base = "0 0 1 1 0 0 0 " if free else ""
        rod = " ".join(f"{v:.17g}" for v in _quat(KEY_ROD))
        keyframe = f'<keyframe><key name="home" qpos="{base}0.3 {rod} -0.4{" 0.25" if spring else ""}"/></keyframe>'
    return f"""<mujoco model="leg">
  <compiler angle="radian" autolimits="true"/>{assets}
  <worldbody>
    <body name="pelvis" pos="0 0 1">{free_joint}
      <inertial pos="0 0 0" mass="5" diaginertia="0.05 0.05 0.05"/>
      <geom type="box" size="0.05 0.05 0.05"{material}/>
      <body name="crank">
        <joint name="crank" axis="0 1 0" range="-1 1" damping="0.05"/>
        <inertial pos="0.05 0 0.01" mass="0.3" fullinertia="1e-4 3e-4 2.5e-4 1e-5 -2e-5 3e-6"/>
        <body name="rod" pos="0.1 0 0">
          <joint name="rod" type="ball" damping="0.01"/>
          <inertial pos="0.1 0 0.065" mass="0.15" fullinertia="4e-4 6e-4 3e-4 0 -2.4e-4 0"/>
        </body>
      </body>
      <body name="rocker" pos="0.3 0 0.25">
        <joint name="rocker" axis="0.3 1 0" range="-1 1"/>
        <inertial pos="0 0.01 -0.06" mass="0.2" diaginertia="2e-4 2e-4 5e-5"/>{heel}
      </body>
    </body>
  </worldbody>
  <equality><connect name="achilles" body1="rod" body2="{'heel' if spring else 'rocker'}" anchor="{' '.join(map(str, ROD_ANCHOR))}"/></equality>
  <actuator><motor name="crank" joint="crank" gear="1"/></actuator>{keyframe}
</mujoco>
"""


YAML = "name: leg\nurdf: leg.xml\nactuated: [crank]\ntask: actuated\nbase: {keyframe: home}\n"


@pytest.fixture(scope="module")
def leg(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ball_leg")
    (folder / "leg.xml").write_text(leg_mjcf())
    (folder / "leg.yaml").write_text(YAML)
    (folder / "reference.xml").write_text(leg_mjcf(free=False, texture=False))  # the pelvis where the YAML holds it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notes, checked below
        robot = pardyn.load_robot(folder / "leg.yaml")
    return robot, folder


def test_a_ball_joint_is_three_hinges_at_the_keyframes_pose(leg):
    """Refused before ("write a spherical joint as three hinges"). The tree at the keyframe, whose quaternion is
    turned by (0.2, -0.35, 0.5) rad, puts every body where MuJoCo does (the free joint and the texture as
    ``base:`` and the notes say)."""
    _, folder = leg
    with pytest.warns(UserWarning) as caught:
        tree = read_mjcf(folder / "leg.xml", base="home")
    notes = " ".join(str(w.message) for w in caught)
    assert "texture files missing: ['skin'] skipped" in notes and "free joint(s) ['root'] fixed" in notes
    assert "ball joints ['rod'] read as three hinges" in notes
    model = tree.model
    assert [model.names[j] for j in range(1, model.njoints)] == ["crank", "rod_x", "rod_y", "rod_z", "rocker"]
    assert model.nq == model.nv == 5
    q = model.referenceConfigurations["home"]
    assert np.allclose(q[1:4], KEY_ROD, atol=1e-12)
    mj = mujoco.MjModel.from_xml_path(str(folder / "reference.xml"))
    data = mujoco.MjData(mj)
    data.qpos[:] = mj.key_qpos[0]
    mujoco.mj_kinematics(mj, data)
    pin_data = model.createData()
    pin.framesForwardKinematics(model, pin_data, q)
    for body in ("crank", "rod", "rocker"):
        placement = pin_data.oMf[model.getFrameId(body, pin.FrameType.BODY)]
        index = mj.body(body).id
        assert np.abs(placement.translation - data.xpos[index]).max() < 1e-14
        assert np.abs(placement.rotation - data.xmat[index].reshape(3, 3)).max() < 1e-14
    assert np.allclose(ball_angles(_quat(KEY_ROD)), KEY_ROD, atol=1e-14)


def _closed_states(robot):
    """Closed states (q, qdot, qddot) by central differences of the forward problem along a crank motion."""
    step = 1e-4
    for a, a_dot, a_ddot in ((0.1, 0.8, -1.5), (-0.3, -1.1, 2.0), (0.2, 0.4, 0.3)):
        qs = [robot.solve_forward([a + k * step], start=robot.home).q for k in (-1, 0, 1)]
        slope, curvature = (qs[2] - qs[0]) / (2 * step), (qs[0] - 2 * qs[1] + qs[2]) / step**2
        yield qs[1], slope * a_dot, slope * a_ddot + curvature * a_dot**2


def _mujoco_state(robot, q, qdot=None, qddot=None):
    """MuJoCo's (qpos, qvel, qacc) of the reference file (crank, rod quaternion, rocker) from pardyn's hinges."""
    index = {name: i for i, name in enumerate(robot.joint_names)}
    angles = q[[index["rod_x"], index["rod_y"], index["rod_z"]]]
    qpos = np.concatenate([[q[index["crank"]]], _quat(angles), [q[index["rocker"]]]])
    if qdot is None:
        return qpos
    rates = qdot[[index["rod_x"], index["rod_y"], index["rod_z"]]]
    h = 1e-6
    s_dot = (_s(angles + h * rates) - _s(angles - h * rates)) / (2 * h)
    omega = _s(angles) @ rates
    omega_dot = _s(angles) @ qddot[[index["rod_x"], index["rod_y"], index["rod_z"]]] + s_dot @ rates
    qvel = np.concatenate([[qdot[index["crank"]]], omega, [qdot[index["rocker"]]]])
    qacc = np.concatenate([[qddot[index["crank"]]], omega_dot, [qddot[index["rocker"]]]])
    return qpos, qvel, qacc


def _hinge_map(robot, q) -> np.ndarray:
    """``d(MuJoCo qvel)/d(pardyn qdot)`` (6 ... ) at ``q``: identity on the hinges, ``S`` on the ball."""
    index = {name: i for i, name in enumerate(robot.joint_names)}
    rod = [index["rod_x"], index["rod_y"], index["rod_z"]]
    matrix = np.zeros((5, robot.nv))
    matrix[0, index["crank"]], matrix[4, index["rocker"]] = 1.0, 1.0
    matrix[1:4, rod] = _s(q[rod])
    return matrix


def test_the_loop_closes_as_mujoco_holds_it(leg):
    """pardyn's forward problem through the ball joint: MuJoCo's equality residuals at its solutions <= 1e-12 m,
    and its velocities in the null space of MuJoCo's equality Jacobian (``efc_J``); one internal motion, the rod
    spinning about its own axis, kept as a chart coordinate (mobility 2 = crank + spin)."""
    robot, folder = leg
    assert robot.nv == 5 and robot.summary()["degrees_of_freedom"] == 2
    mj = mujoco.MjModel.from_xml_path(str(folder / "reference.xml"))
    data = mujoco.MjData(mj)
    for q, qdot, _ in _closed_states(robot):
        data.qpos[:] = _mujoco_state(robot, q)
        mujoco.mj_forward(mj, data)
        assert np.abs(data.efc_pos[: data.ne]).max() < 1e-12
        jacobian = data.efc_J[: data.ne * mj.nv].reshape(data.ne, mj.nv)
        assert np.abs(jacobian @ (_hinge_map(robot, q) @ qdot)).max() < 1e-7 * max(1.0, np.abs(qdot).max())


def test_the_tree_dynamics_equal_mujoco_and_pinocchios_spherical_joint(leg):
    """The hinge tree's RNEA (gravity, Coriolis, inertia; no damping) equals ``S^T`` times pinocchio's RNEA of the
    same file read with a ``JointModelSpherical`` (its own MJCF parser, nq = 4, nv = 3) and MuJoCo's ``mj_inverse``
    (constraints and damping off), at closed states with the rod spinning."""
    robot, folder = leg
    spherical = pin.buildModelFromMJCF(str(folder / "reference.xml"))
    assert spherical.joints[spherical.getJointId("rod")].shortname() == "JointModelSpherical"
    assert (spherical.nq, spherical.nv) == (6, 5)
    sph_data = spherical.createData()
    mj = mujoco.MjModel.from_xml_path(str(folder / "reference.xml"))
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_DAMPER
    data = mujoco.MjData(mj)
    tree = robot.model.copy()
    tree.armature[:] = 0.0
    tree_data = tree.createData()
    spin = np.zeros(robot.nv)
    spin[robot.joint_names.index("rod_x")] = 0.7  # a motion off the loop's: the tree's dynamics everywhere
    for q, qdot, qddot in _closed_states(robot):
        qdot = qdot + spin
        qpos, qvel, qacc = _mujoco_state(robot, q, qdot, qddot)
        mapping = _hinge_map(robot, q)
        expected = tree.rnea(q, qdot, qddot) if hasattr(tree, "rnea") else pin.rnea(tree, tree_data, q, qdot, qddot)
        # pinocchio: its quaternion is (x, y, z, w), MuJoCo's (w, x, y, z)
        pin_q = np.concatenate([qpos[:1], qpos[2:5], qpos[1:2], qpos[5:]])
        sph = pin.rnea(spherical, sph_data, pin_q, qvel, qacc)
        assert np.abs(mapping.T @ sph - expected).max() < 1e-10 * max(1.0, np.abs(expected).max())
        data.qpos[:], data.qvel[:], data.qacc[:] = qpos, qvel, qacc
        mujoco.mj_inverse(mj, data)
        assert np.abs(mapping.T @ data.qfrc_inverse - expected).max() < 1e-10 * max(1.0, np.abs(expected).max())


def test_the_crank_torque_through_the_loop_equals_mujoco_and_the_regressor(leg):
    """The motor's torque (damping of the crank and of the ball on each hinge included) equals MuJoCo's
    ``mj_inverse`` of the tree mapped through the loop by ``S G`` (``G = dq/dq_crank``, whose image MuJoCo's
    ``efc_J`` annihilates, checked above), and the closed-loop regressor times the nominal parameters."""
    from pardyn.dynamics import InverseDynamics
    from pardyn.dynamics.regressor import Regressor

    robot, folder = leg
    params = robot.nominal_parameters
    dynamics = InverseDynamics(robot, params)
    regressor = Regressor(robot)
    vector = params.vector() if callable(getattr(params, "vector", None)) else params.vector
    mj = mujoco.MjModel.from_xml_path(str(folder / "reference.xml"))
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    data = mujoco.MjData(mj)
    mj_closed = mujoco.MjModel.from_xml_path(str(folder / "reference.xml"))
    closed_data = mujoco.MjData(mj_closed)

    def data_closed(model, qpos):
        closed_data.qpos[:] = qpos
        mujoco.mj_forward(model, closed_data)
        return closed_data.efc_J[: closed_data.ne * model.nv].reshape(closed_data.ne, model.nv)

    for q, qdot, qddot in _closed_states(robot):
        qpos, qvel, qacc = _mujoco_state(robot, q, qdot, qddot)
        data.qpos[:], data.qvel[:], data.qacc[:] = qpos, qvel, qacc
        mujoco.mj_inverse(mj, data)
        velocity_map = robot.differential.task_velocity_map(q)  # (nv, 2): the crank's motion, the rod's spin
        mapped = _hinge_map(robot, q) @ velocity_map
        jacobian = data_closed(mj_closed, qpos)
        assert np.abs(jacobian @ mapped).max() < 1e-10  # motions of the loop, as MuJoCo holds it
        # MuJoCo's ball damps its angular velocity, pardyn each hinge's rate (equal where S = I): the ball's damping
        # is taken out of MuJoCo's forces and added as pardyn models it
        tree = data.qfrc_inverse.copy()
        tree[1:4] -= mj.dof_damping[1:4] * qvel[1:4]
        rod = [robot.joint_names.index(f"rod_{axis}") for axis in "xyz"]
        expected = float(mapped[:, 0] @ tree + velocity_map[rod, 0] @ (0.01 * qdot[rod]))
        torque = dynamics.torques(q, qdot, qddot)[0]
        assert torque == pytest.approx(expected, rel=1e-6, abs=1e-9)
        row = regressor.matrix(q[None], qdot[None], qddot[None]).reshape(-1)
        assert float(row @ vector) == pytest.approx(torque, rel=1e-9, abs=1e-12)


def test_a_spring_in_the_loop_is_the_one_joint_to_lock(tmp_path):
    """Cassie's heel spring on the rocker (in the loop): with the free joint held, 3 motions are left by the motor
    (the spring, the rod's spin and ... ): the count said to lock was the number of internal motions (2, the rod's
    spin among them, which moves no centre of mass and has no limit), so locking that many either froze the loop or
    asked for a limit the ball has not. Now: 1, and locking the spring at its rest loads."""
    (tmp_path / "leg.xml").write_text(leg_mjcf(spring=True))
    (tmp_path / "leg.yaml").write_text(YAML)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DescriptionError, match=r"leave 3 degrees of freedom for 1 task coordinates .* 1 motion\(s\) "
                                                   r"remain .* lock 1 of these joints"):
            pardyn.load_robot(tmp_path / "leg.yaml")
        (tmp_path / "locked.yaml").write_text(YAML + "locked: {heel: 0.0}\n")
        robot = pardyn.load_robot(tmp_path / "locked.yaml")
    assert robot.summary()["degrees_of_freedom"] == 2 and "heel" not in robot.joint_names


def test_a_ball_joint_driven_by_an_actuator_is_refused_in_one_line(tmp_path):
    text = leg_mjcf().replace('<motor name="crank" joint="crank" gear="1"/>', '<motor name="m" joint="rod"/>')
    (tmp_path / "leg.xml").write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DescriptionError, match=r"actuator 'm' drives ball joint 'rod'"):
            read_mjcf(tmp_path / "leg.xml", base="qpos0")


def test_describe_animate_and_export_c_of_the_ball_leg(leg, tmp_path, capsys):
    """The CLI paths: ``describe`` and ``animate`` work; ``export c`` says in one line why it cannot (the rod's spin
    is an internal motion, which the C kernels do not solve)."""
    from pardyn.cli import main

    _, folder = leg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["robots", "--describe", str(folder / "leg.yaml")]) == 0
        assert main(["animate", "--robot", str(folder / "leg.yaml"), "--frames", "3", "--duration", "0.3",
                     "--out", str(tmp_path / "animate")]) == 0
        capsys.readouterr()
        assert main(["export", "c", "--robot", str(folder / "leg.yaml"), "--out", str(tmp_path / "c")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "warning" not in line]
    assert err == ["pardyn export: leg: no C kernels: internal motions (minimum-norm Newton steps)"]


def test_the_keyframes_actuated_joints_are_home_as_init_writes_them(leg):
    """``robots --init`` writes the keyframe as ``home.joints``; a joint task's coordinates missing from
    ``home.task`` were 0 whatever ``home.joints`` said (the crank at 0, not the keyframe's 0.3; Menagerie's Cassie,
    knees at 0 instead of -1.2 rad, assembled 600 rad away at a serial singularity: "home: near a serial
    singularity (condition 6.24e+06)"). Now home is the keyframe's crank, closed where MuJoCo holds the loop."""
    from pardyn.description.starting import starting_yaml

    robot, folder = leg
    (folder / "init.yaml").write_text(starting_yaml(folder / "leg.xml", folder / "init.yaml"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        home = pardyn.load_robot(folder / "init.yaml").home
    assert home[robot.joint_names.index("crank")] == pytest.approx(0.3, abs=1e-12)
    mj = mujoco.MjModel.from_xml_path(str(folder / "reference.xml"))
    data = mujoco.MjData(mj)
    data.qpos[:] = _mujoco_state(robot, home)
    mujoco.mj_forward(mj, data)
    assert np.abs(data.efc_pos[: data.ne]).max() < 1e-12
