"""A vendor's adaptive gripper as shipped (issue 26): an MJCF in MuJoCo Menagerie's style for the Robotiq 2F-85,
written here (the CI has no Menagerie file) with each element of the real file that pardyn had to learn:

* mesh geoms whose files are absent, on bodies with explicit ``<inertial>``, and on a mount fixed to the world
  whose mass comes from its mesh (it moves nothing);
* two four-bar fingers closed by ``connect`` equalities, each with an adaptive coupler resting on its joint limit
  (the YAML locks it there: ``locked: {coupler: upper}``) and a spring link (``stiffness``/``springref``);
* a ``joint`` equality coupling the two drivers (``polycoef``), one actuator on a fixed tendon over both drivers
  (``coef`` 0.5 each, ``forcerange``).

References: MuJoCo's own equality residuals (``efc_pos``) and constraint Jacobian (``efc_J``: the loop's velocity
map is its null space), ``mj_inverse`` of the tree mapped through that map by virtual work, ``qfrc_actuator``.
The reference model is the same text with the mesh geoms taken out (MuJoCo cannot compile it otherwise).
"""

from __future__ import annotations

import re
import warnings

import mujoco
import numpy as np
import pytest

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.errors import DescriptionError


def _link(name: str, pos: str, mass: float, com: str, inertia: str, mesh: str, inner: str = "", extra: str = "") -> str:
    """One moving body of a finger: its explicit inertial, its joint ``<name>_joint`` (class ``mesh``), a visual
    mesh geom (the file absent), and the bodies it carries."""
    return (f'<body name="{name}" pos="{pos}" {extra}><inertial mass="{mass}" pos="{com}" diaginertia="{inertia}"/>'
            f'<joint name="{name}_joint" class="{mesh}"/><geom class="visual" mesh="{mesh}"/>{inner}</body>')


def _finger(side: str, mirror: str = "") -> str:
    """A four-bar finger: driver + adaptive coupler, spring link + follower carrying the pad (no joint)."""
    pad = (f'<body name="{side}_pad" pos="0 -0.02 0.015"><inertial mass="0.004" pos="0 -0.002 0.018" '
           'diaginertia="5e-7 4e-7 1.2e-7"/><geom class="pad" type="box" size="0.01 0.004 0.009"/></body>')
    coupler = _link(f"{side}_coupler", "0 0.03 -0.005", 0.015, "0 0.003 0.02", "4e-6 3.5e-6 9e-7", "coupler")
    follower = _link(f"{side}_follower", "0 0.05 0.04", 0.012, "0 -0.01 0.012", "2.7e-6 2.5e-6 6e-7", "follower",
                     pad)
    return (_link(f"{side}_driver", "0 0.03 0.05", 0.01, "0 0.015 0.001", "1.8e-6 1.6e-6 3e-7", "driver", coupler,
                  mirror)
            + _link(f"{side}_spring_link", "0 0.012 0.06", 0.02, "0 0.018 0.02", "9e-6 7e-6 2.5e-6", "spring_link",
                    follower, mirror))


GRIPPER = f"""<mujoco model="gripper">
  <compiler angle="radian" meshdir="assets" autolimits="true"/>
  <asset>
    <mesh file="mount.stl"/> <mesh file="base.stl"/> <mesh file="driver.stl"/> <mesh file="coupler.stl"/>
    <mesh file="spring_link.stl"/> <mesh file="follower.stl"/>
  </asset>
  <default>
    <default class="g">
      <joint axis="1 0 0"/>
      <general biastype="affine"/>
      <default class="driver"><joint range="0 0.8" armature="0.005" damping="0.1"/></default>
      <default class="coupler"><joint range="-1.57 0"/></default>
      <default class="spring_link"><joint range="-0.3 0.8" stiffness="0.05" springref="2.62" damping="0.00125"/></default>
      <default class="follower"><joint range="-0.87 0.87" pos="0 -0.02 0.006"/></default>
      <default class="visual"><geom type="mesh" contype="0" conaffinity="0" group="2"/></default>
      <default class="pad"><geom mass="0" friction="0.7"/></default>
    </default>
  </default>
  <worldbody>
    <body name="mount" pos="0 0 0.007" childclass="g">
      <geom class="visual" mesh="mount"/>
      <body name="base" pos="0 0 0.004">
        <inertial mass="0.8" pos="0 0 0.035" diaginertia="2.6e-4 2.2e-4 1.5e-4"/>
        <geom class="visual" mesh="base"/>
        {_finger("right")}
        {_finger("left", 'quat="0 0 0 1"')}
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="split"><joint joint="right_driver_joint" coef="0.5"/><joint joint="left_driver_joint" coef="0.5"/></fixed>
  </tendon>
  <equality>
    <connect anchor="0 0 0" body1="right_follower" body2="right_coupler"/>
    <connect anchor="0 0 0" body1="left_follower" body2="left_coupler"/>
    <joint joint1="right_driver_joint" joint2="left_driver_joint" polycoef="0 1 0 0 0"/>
  </equality>
  <actuator>
    <general class="g" name="fingers" tendon="split" forcerange="-5 5" ctrlrange="0 255" gainprm="0.3137255 0 0"
        biasprm="0 -100 -10"/>
  </actuator>
</mujoco>
"""

YAML = """name: gripper
urdf: gripper.xml
task: actuated
actuated: [left_driver_joint]
locked: {right_coupler_joint: upper, left_coupler_joint: upper}
home:
  task: {left_driver_joint: 0.4}
"""


def _reference() -> mujoco.MjModel:
    """The same model for MuJoCo, mesh geoms and assets taken out of the text (they carry no mass here)."""
    text = re.sub(r'<geom class="visual" mesh="\w+"/>', "", GRIPPER)
    return mujoco.MjModel.from_xml_string(re.sub(r"<asset>.*?</asset>", "", text, flags=re.S))


@pytest.fixture(scope="module")
def gripper(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gripper")
    (folder / "gripper.xml").write_text(GRIPPER)  # assets/ absent, as a vendor's file copied alone
    (folder / "gripper.yaml").write_text(YAML)
    with pytest.warns(UserWarning, match=r"mesh geoms skipped .*\['mount'\] \(fixed to the world"):
        robot = pardyn.load_robot(folder / "gripper.yaml")
    return robot, folder


def _velocity_map(model, data, locked) -> np.ndarray:
    """``dq/dq_a`` (nv,) from MuJoCo: the null space of its equality rows ``efc_J`` and the locked joints."""
    jacobian = np.zeros((data.nefc, model.nv))
    if mujoco.mj_isSparse(model):
        mujoco.mju_sparse2dense(jacobian, data.efc_J, data.efc_J_rownnz, data.efc_J_rowadr, data.efc_J_colind)
    else:
        jacobian[:] = data.efc_J[: data.nefc * model.nv].reshape(data.nefc, model.nv)
    rows = [jacobian[data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]]
    rows += [np.eye(model.nv)[[model.joint(name).dofadr[0]]] for name in locked]
    null = np.linalg.svd(np.vstack(rows))[2][-1]
    return null / null[model.joint("left_driver_joint").dofadr[0]]


def test_the_gripper_loads_as_shipped_and_closes_its_loops_as_mujoco_does(gripper):
    """Meshes absent (the mount's mass from its mesh left out: fixed to the world), the adaptive couplers locked
    at their upper limit by the YAML and listed with their values (were not), 1 degree of freedom; pardyn's configurations leave MuJoCo's equality
    residuals at zero and its velocity map equals the null space of MuJoCo's constraint Jacobian."""
    robot, _ = gripper
    assert robot.structure.rank == 5 and robot.actuated_names == ("left_driver_joint",)
    assert robot.locked_joints == {"right_coupler_joint": 0.0, "left_coupler_joint": 0.0}  # range="-1.57 0": upper
    model = _reference()
    data = mujoco.MjData(model)
    for a in (0.1, 0.4, 0.7):
        q = robot.solve_forward([a]).q
        for name, value in zip(robot.joint_names, q):
            data.qpos[model.joint(name).qposadr[0]] = value
        mujoco.mj_forward(model, data)
        assert abs(data.efc_pos[data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]).max() < 1e-12
        expected = _velocity_map(model, data, ("right_coupler_joint", "left_coupler_joint"))
        mine = robot.differential.velocities_from_task(q, np.ones(1))
        assert mine == pytest.approx([expected[model.joint(n).dofadr[0]] for n in robot.joint_names], abs=1e-9)


def test_inverse_dynamics_through_the_loop_equal_mj_inverse(gripper):
    """Springs (12x the gravity torque on the real gripper), damping, armature, the four-bars and the driver
    coupling: ``tau_a = G^T tau_tree`` with MuJoCo's tree torques and MuJoCo's ``G``."""
    robot, _ = gripper
    model = _reference()
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT  # the tree's inverse dynamics
    data = mujoco.MjData(model)
    closed = _reference()
    closed_data = mujoco.MjData(closed)
    dynamics = InverseDynamics(robot)
    step = 1e-4
    for a, a_dot, a_ddot in ((0.2, 0.5, -1.0), (0.6, -1.2, 2.0)):
        qs = [robot.solve_forward([a + k * step]).q for k in (-1, 0, 1)]
        slope, curvature = (qs[2] - qs[0]) / (2 * step), (qs[0] - 2 * qs[1] + qs[2]) / step**2
        q, qdot, qddot = qs[1], slope * a_dot, slope * a_ddot + curvature * a_dot**2
        for target in (data, closed_data):
            target.qpos[:] = 0.0  # the locked couplers at their upper limit, 0
            for name, values in zip(robot.joint_names, zip(q, qdot, qddot)):
                index = model.joint(name).dofadr[0]
                target.qpos[index], target.qvel[index], target.qacc[index] = values
        mujoco.mj_inverse(model, data)
        mujoco.mj_forward(closed, closed_data)
        velocity_map = _velocity_map(closed, closed_data, ("right_coupler_joint", "left_coupler_joint"))
        expected = velocity_map @ data.qfrc_inverse
        assert dynamics.torques(q, qdot, qddot)[0] == pytest.approx(expected, rel=1e-6)


def test_the_tendon_actuator_of_a_yaml_around_the_mjcf_is_a_transmission(gripper):
    """The YAML keeps the MJCF's tendon actuator (was: no transmission): ratio ``0.5 + 0.5 * 1`` on the driving
    joint, MuJoCo's ``qfrc_actuator`` mapped through the loop says the same; the effort limit is the
    ``forcerange`` times that ratio (was: unlimited, and an overflow warning in the safety check)."""
    from pardyn.control.safety import check_command

    robot, _ = gripper
    transmission = robot.description.transmissions
    assert transmission.motors == ("fingers",) and transmission.ratio[0, 0] == pytest.approx(1.0, abs=1e-15)
    model = _reference()
    data = mujoco.MjData(model)
    q = robot.solve_forward([0.4]).q
    for name, value in zip(robot.joint_names, q):
        data.qpos[model.joint(name).qposadr[0]] = value
    data.ctrl[:] = 200.0
    mujoco.mj_forward(model, data)
    mapped = _velocity_map(model, data, ("right_coupler_joint", "left_coupler_joint")) @ data.qfrc_actuator
    assert mapped == pytest.approx(transmission.ratio[0, 0] * data.actuator_force[0], rel=1e-9)
    assert robot.model.effortLimit[robot.actuated_indices] == pytest.approx([5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_command([1.0], ["j"], np.array([np.finfo(float).max]))  # an unlimited joint: no overflow warning


def test_the_plant_holds_the_loops_and_the_coupling(gripper):
    from pardyn.plants.mujoco_plant import MujocoPlant

    robot, _ = gripper
    plant = MujocoPlant(robot)
    state = plant.step(np.array([0.05]), 0.05)
    assert abs(robot.closures.residual(state.q)).max() < 1e-8
    right, left = (robot.joint_names.index(f"{side}_driver_joint") for side in ("right", "left"))
    assert abs(state.q[right] - state.q[left]) < 1e-8 and abs(state.q[left] - robot.home[left]) > 1e-4


def test_a_moving_body_whose_mass_is_its_absent_mesh_is_named(tmp_path):
    """The 2F-85's silicone pads: a jointless body under a finger, mass from its mesh only: one line naming it and
    the remedies; the YAML's ``inertials:`` for both pads lets the unedited file load with their mass."""
    (tmp_path / "gripper.xml").write_text(GRIPPER.replace(
        '<geom class="pad" type="box" size="0.01 0.004 0.009"/>',
        '<geom class="pad" type="box" size="0.01 0.004 0.009"/><body name="{side}_silicone"><geom class="visual" '
        'mesh="follower"/></body>').replace("{side}", "x", 1).replace("{side}", "y", 1))
    with pytest.raises(DescriptionError, match="body 'x_silicone' takes its mass from mesh geom 'follower': provide "
                                               "the mesh files .* a pardyn YAML around this file \\(inertials:\\)"):
        pardyn.load_robot(tmp_path / "gripper.xml")
    # the remedy: the pads' inertials in the YAML (1.3 g each, as the 2F-85's); the file unedited
    (tmp_path / "gripper.yaml").write_text(YAML + "inertials:\n  - {links: [x_silicone, y_silicone], mass: 0.0013, "
                                           "com: [0, -0.002, 0.018], inertia_com: {xx: 1.0e-7, yy: 1.0e-7, zz: 4.0e-8}}\n")
    with pytest.warns(UserWarning, match="mesh geoms skipped"):
        robot = pardyn.load_robot(tmp_path / "gripper.yaml")
    reference = _reference()  # the moving bodies' masses, plus the two pads
    moving = [b for b in range(reference.nbody) if reference.body_weldid[b] != 0]
    assert sum(float(body.standard[9]) for body in robot.nominal_parameters.bodies) == pytest.approx(
        float(reference.body_mass[moving].sum()) + 2 * 0.0013, rel=1e-12)


def test_a_one_motor_robot_with_many_parameters_has_its_structural_base(gripper):
    """78 standard parameters, one equation per random state (was: "60 equations for 78 standard parameters"):
    the structural base reproduces the torques of any standard parameters on 400 fresh random states."""
    from pardyn.dynamics.regressor import Regressor
    from pardyn.identification.identifiability import random_states, structural_base

    robot, _ = gripper
    regressor = Regressor(robot)
    base = structural_base(robot, regressor, regressor.names)
    observation = regressor.matrix(*random_states(robot, samples=400, seed=3)).reshape(-1, len(regressor.names))
    standard = np.random.default_rng(3).standard_normal(len(regressor.names))
    torques = observation @ standard
    assert len(regressor.names) > 60 and 0 < base.n_base < 30
    assert np.linalg.norm(base.reduce(observation) @ base.from_standard(standard) - torques) < 1e-5 * np.linalg.norm(
        torques)


def test_describe_says_each_warning_once(gripper, capsys):
    """The MJCF is read for the description and again for the tree: its missing-meshes warning is said once (was
    twice: CPython's "once" remembers per module the warning is attributed to)."""
    from pardyn.cli import main

    _, folder = gripper
    with warnings.catch_warnings(record=True) as caught:
        assert main(["robots", "--describe", str(folder / "gripper.yaml")]) == 0
    assert sum("mesh geoms skipped" in str(w.message) for w in caught) == 1
    assert "degrees of freedom: 1" in capsys.readouterr().out


def test_the_unlocked_adaptive_gripper_is_refused_with_the_remedy(gripper):
    """Loaded alone, the file leaves the two couplers free (3 degrees of freedom for one motor): the one-line error
    says how to lock them without editing the file (was: no remedy)."""
    _, folder = gripper
    remedy = (r"3 degrees of freedom .* lock 2 of these joints there with locked: \{<joint>: lower, upper or a value\}: "
              r"write a pardyn YAML around gripper.xml")
    with pytest.warns(UserWarning, match="mesh geoms skipped"), pytest.raises(DescriptionError, match=remedy):
        pardyn.load_robot(folder / "gripper.xml")


def test_a_home_on_the_joint_limit_says_to_move_it(gripper):
    """MuJoCo's qpos0 puts the driver on its lower limit (0): no room to excite, and the error says to give a
    home inside the limits (was: only the excitation: keys)."""
    from pardyn.errors import InputError
    from pardyn.excitation.bounds import derived_excitation

    _, folder = gripper
    (folder / "at_limit.yaml").write_text(YAML.replace("home:\n  task: {left_driver_joint: 0.4}\n", ""))
    with pytest.warns(UserWarning, match="mesh geoms skipped"):
        robot = pardyn.load_robot(folder / "at_limit.yaml")
    assert robot.home[robot.actuated_indices] == pytest.approx([0.0])
    with pytest.raises(InputError, match=r"on a position limit\); give a home inside the limits \(home: task: in "
                                         r"at_limit.yaml"):
        derived_excitation(robot)


def test_a_yaml_driving_another_joint_is_told_the_tendon_is_left_out(gripper):
    """``actuated: [right_driver_joint]`` (coupled to the tendon's driving joint): loads, says once that the MJCF's
    tendon actuator is not used, and keeps joint motors (no transmission)."""
    _, folder = gripper
    (folder / "right.yaml").write_text(YAML.replace("left_driver_joint", "right_driver_joint"))
    with pytest.warns(UserWarning) as caught:  # the missing meshes, and:
        robot = pardyn.load_robot(folder / "right.yaml")
    said = [str(w.message) for w in caught if "tendon actuators drive" in str(w.message)]
    assert len(said) == 1 and "leaves out the joints that the MJCF's tendon actuators drive ['left_driver_joint'] " \
                              "(actuators ['fingers'])" in said[0]
    assert robot.actuated_names == ("right_driver_joint",) and robot.description.transmissions is None
