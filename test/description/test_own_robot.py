"""Issue 26: a robot written by a user (not shipped) goes through describe, kinematics, dynamics and the demo;
vendor trees load as written (continuous joints, an MJCF under a pardyn YAML); errors say what is wrong.

The robot: the tutorial's biglide (its files read from doc/tutorials/own_robot.md), two horizontal sliders (prismatic actuators
with viscous and Coulomb friction in the URDF) each carrying a 0.3 m bar; the bars meet at the task point
P = (x, y) in the vertical plane (gravity -y).
Hand closed form: slider_i = x -+ sqrt(L^2 - y^2).

The issue's "done when": three robots not shipped, from temporary folders, no file edited, through describe,
kinematics, dynamics and ``pardyn demo`` (held-out error below the nominal model's): this biglide (loaded,
without its ``payload`` link), the spatial RSSR linkage below, and the gripper-style MJCF finger of
``test/kinematics/test_couplings.py`` (coupling, tendon actuator, spring, absent meshes).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pardyn
from pardyn.cli import main
from pardyn.errors import DescriptionError, KinematicsError

L = 0.3  # m, bar length


def readme_files() -> dict[str, str]:
    """The files the tutorial "Write your own robot" writes (``cat > NAME <<'EOF' ... EOF``): the user's robot."""
    text = (Path(__file__).resolve().parents[2] / "doc" / "tutorials" / "own_robot.md").read_text()
    return dict(re.findall(r"cat > (\S+) <<'EOF'\n(.*?\n)EOF\n", text, flags=re.S))


FILES = readme_files()
YAML = FILES["biglide.yaml"]
PAYLOAD_LINK = ('<link name="payload"/>', '  <joint name="payload_joint" type="fixed"><parent link="platform"/>'
                '<child link="payload"/></joint>\n')
MOVING_MASS = 2 * 0.5 + 2 * 0.2 + 0.3  # kg: sliders, bars, platform (the tutorial's URDF)


def biglide_files(folder: Path, *, payload_link: bool = True) -> Path:
    """The tutorial's biglide in ``folder``; ``payload_link=False``: as a user who left out the ``payload`` link
    writes it (a massless link: the same robot; a loaded run then carries its load on the task frame)."""
    urdf = FILES["biglide.urdf"]
    assert all(line in urdf for line in PAYLOAD_LINK)
    for line in () if payload_link else PAYLOAD_LINK:
        urdf = urdf.replace(line, "")
    (folder / "biglide.urdf").write_text(urdf)
    (folder / "biglide.yaml").write_text(YAML)
    return folder / "biglide.yaml"


@pytest.fixture
def biglide(tmp_path):
    return biglide_files(tmp_path)


def test_describe_and_kinematics_match_the_hand_closed_form(biglide, capsys):
    assert main(["robots", "--describe", str(biglide)]) == 0
    assert "degrees of freedom: 2" in capsys.readouterr().out
    assert main(["kinematics", "--robot", str(biglide), "--task", "0.03,0.2"]) == 0
    answer = json.loads(capsys.readouterr().out)
    half = math.sqrt(L**2 - 0.2**2)
    assert answer["joints"]["slider1_joint"] == pytest.approx(0.03 - half, abs=1e-12)
    assert answer["joints"]["slider2_joint"] == pytest.approx(0.03 + half, abs=1e-12)
    assert answer["locked_joints"] == {}


def test_friction_stated_once_in_the_urdf_and_a_hand_force_balance(biglide):
    """The YAML gives gravity only: bodies and friction come from the URDF (a second, different value is an
    error that does not tell a user to regenerate a file they wrote); statics against a hand balance."""
    from pardyn.dynamics import InverseDynamics

    robot = pardyn.load_robot(biglide)
    drives = {d.joint: (d.fv, d.fs) for d in robot.nominal_parameters.drives}
    assert drives == {"slider1_joint": (2.0, 0.5), "slider2_joint": (2.0, 0.5)}
    text = YAML + "  drives: [{joints: [slider1_joint], fv: 3.0}]\n"
    biglide.write_text(text)
    with pytest.raises(DescriptionError, match="state the values in one file only") as error:
        pardyn.load_robot(biglide)
    assert "regenerate" not in str(error.value)
    biglide.write_text(YAML)
    # statics at home by virtual work: V(x, y) = (m_P + 2 m_bar / 2) g y (bars' coms at mid-length), so
    # J_a^T tau = dV/d(x, y) = (0, 0.5 g) with J_a = dq_a/d(x, y) of q_i = x -+ sqrt(L^2 - y^2)
    tau_home = InverseDynamics(robot).torques_from_task(robot.home, [0.0, 0.0], [0.0, 0.0])
    y = robot.home[robot.joint_names.index("platform_y")]
    slope = y / math.sqrt(L**2 - y**2)
    expected = np.linalg.solve(np.array([[1.0, slope], [1.0, -slope]]).T, [0.0, 0.5 * 9.81])
    torques = tau_home
    np.testing.assert_allclose(torques, expected, rtol=1e-12)


def test_singular_home_and_failed_solves_say_why(biglide):
    text = YAML.replace("y: 0.2236}", "y: 0.0}").replace(
        "slider1_joint: -0.2, slider2_joint: 0.2, leg1_joint: 0.8411, leg2_joint: 2.3005",
        "slider1_joint: -0.3, slider2_joint: 0.3, leg1_joint: 0.0, leg2_joint: 3.14159265")
    text = re.sub(r"working_mode:.*\n  - \{point: platform, above: slider1, axis: y\}\n", "", text)
    assert "working_mode" not in text and "y: 0.0}" in text and "leg2_joint: 3.14159265" in text
    biglide.write_text(text)
    with pytest.raises(DescriptionError, match=r"home: near a parallel singularity \(condition number [0-9.e+]+"):
        pardyn.load_robot(biglide)
    biglide.write_text(YAML)
    robot = pardyn.load_robot(biglide)
    with pytest.raises(KinematicsError, match="condition numbers start: serial") as error:
        robot.solve_forward([-0.5, 0.5])  # 1 m apart: out of reach of two 0.3 m bars
    assert "e+13" not in str(error.value) and "closest configuration" in str(error.value)


def test_derived_excitation_drawings_and_units(biglide, tmp_path):
    """Derived bounds against the hand figures: size 0.4 m (slider to slider) -> amplitude 0.04 m; the slider
    speed |dq/dx| v + |dq/dy| v (dq/dy = y / sqrt(L^2 - y^2)) held to half the 2 m/s limit."""
    from pardyn.cli.demo import _plot, _unit, circle
    from pardyn.excitation.bounds import derived_excitation
    from pardyn.visualization import plane_axes

    robot = pardyn.load_robot(biglide)
    with pytest.warns(UserWarning, match="biglide: no excitation: section"):
        settings = derived_excitation(robot)
    assert settings.amplitude == pytest.approx((0.04, 0.04), rel=1e-3)
    y = robot.home[robot.joint_names.index("platform_y")]
    slope = y / math.sqrt(L**2 - y**2)
    assert settings.max_velocity == pytest.approx((1.0 / (1 + slope),) * 2, rel=1e-6)
    times = np.linspace(0.0, 1.0, 21)
    poses, _ = circle(robot, times, 0.02)
    joints = np.array([robot.solve_inverse(p).q for p in poses])
    assert plane_axes(robot, joints) == (0, 1)  # planar: drawn in 2D from the model's frames
    assert robot.task_units == ("m", "m")
    assert [_unit(robot, index) for index in robot.actuated_indices] == ["m", "m"]  # the sliders' axis label
    _plot(robot, times, poses, joints, tmp_path / "kinematics.png")
    assert (tmp_path / "kinematics.png").stat().st_size > 10_000


def test_continuous_joints_of_a_vendor_urdf_load_as_unbounded_revolute(tmp_path):
    from pardyn.control import actuator_limits
    from pardyn.dynamics import InverseDynamics
    from pardyn.errors import InputError

    links = "".join(f'<link name="l{i}"><inertial><origin xyz="0.5 0 0"/><mass value="1"/><inertia ixx="0.01" '
                    f'iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>' for i in (1, 2))
    (tmp_path / "arm.urdf").write_text(textwrap.dedent(f"""\
        <robot name="arm"><link name="base"/>{links}
        <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
        <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/>
          <axis xyz="0 0 1"/><limit effort="7" velocity="3"/></joint></robot>"""))
    (tmp_path / "arm.yaml").write_text("name: arm\nurdf: arm.urdf\ntask: actuated\nactuated: [j1, j2]\n")
    robot = pardyn.load_robot(tmp_path / "arm.yaml")
    assert robot.model.nq == robot.model.nv == 2
    assert np.all(np.isinf(robot.model.upperPositionLimit)) and robot.model.effortLimit[1] == 7.0
    # j1 states no effort: what the sim and the controllers need is asked for where the user can give it
    with pytest.raises(InputError, match=r"\['j1'\] must be positive and finite, got \[0.0, 7.0\]; give those "
                                         r"joints <limit effort=\.\.\. velocity=\.\.\.> in the tree, or the YAML"):
        actuator_limits(robot)
    # hand: two unit masses at 0.5 and 1.5 m from j1, horizontal arm, gravity -z along the axes: no torque; a
    # pure j1 acceleration of 1 rad/s^2 at q = 0 needs I1 = 2 * 0.01 + 0.5^2 + 1.5^2 = 2.52 kg m^2
    tau = InverseDynamics(robot).torques(np.zeros(2), np.zeros(2), np.array([1.0, 0.0]))
    assert tau[0] == pytest.approx(2.52, rel=1e-12)


def test_a_pardyn_yaml_around_an_mjcf_tree(tmp_path, four_bar_xml):
    """The four-bar MJCF unedited; the YAML adds the task and takes the closure from its equality."""
    (tmp_path / "four_bar.xml").write_text(four_bar_xml)
    vendor = pardyn.load_robot(tmp_path / "four_bar.xml")
    (tmp_path / "four_bar.yaml").write_text(
        f"name: mine\nurdf: four_bar.xml\ntask: actuated\nactuated: {list(vendor.actuated_names)}\n")
    robot = pardyn.load_robot(tmp_path / "four_bar.yaml")
    assert robot.description.tree_format == "mjcf" and len(robot.description.closures) == 1
    np.testing.assert_allclose(robot.home, vendor.home, atol=1e-10)


def test_a_yaml_locks_the_coupler_of_an_adaptive_finger_at_its_limit(tmp_path, capsys, finger_xml):
    """An adaptive finger: its coupler (the finger's distal joint, uncoupled, limited to [-0.3, 1.2]) rests on
    a joint limit, so the vendor's MJCF (unedited) gets a YAML that locks it there (``upper``), which leaves a
    one-joint tree (pinocchio's Jacobians are then 1-D: the load failed); the kinematics answer lists the locked
    joint with its value; the statics against a hand balance. Hinges about y turn a point
    (x, 0, z) of a body by theta to height -x sin(theta) + z cos(theta), theta from the joint's ref: with
    A = a - 0.2, T = 1.2 - 0.1, V = g (0.05 (-0.03 sin A) + 0.03 (-0.06 sin A - 0.02 sin(A + T)
    + 0.005 cos(A + T))) and tau = dV/da (the locked spring does no work)."""
    from pardyn.dynamics import InverseDynamics

    adaptive = re.sub(r"<equality>.*</equality>", "", finger_xml).replace(
        'ref="0.1"', 'ref="0.1" limited="true" range="-0.3 1.2"')
    (tmp_path / "adaptive.xml").write_text(adaptive)
    (tmp_path / "adaptive.yaml").write_text(
        "name: adaptive\nurdf: adaptive.xml\ntask: actuated\nactuated: [drive]\nlocked: {tip: upper}\n")
    robot = pardyn.load_robot(tmp_path / "adaptive.yaml")
    assert robot.locked_joints == {"tip": 1.2} and robot.joint_names == ("drive",)
    assert main(["kinematics", "--robot", str(tmp_path / "adaptive.yaml"), "--actuated", "0.5"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["locked_joints"] == {"tip": 1.2} and answer["joints"] == {"drive": 0.5}
    tau = InverseDynamics(robot).torques(np.array([0.5]), np.zeros(1), np.zeros(1))
    a, t = 0.5 - 0.2, 1.2 - 0.1
    expected = -9.81 * (0.05 * 0.03 * math.cos(a) + 0.03 * (0.06 * math.cos(a) + 0.02 * math.cos(a + t)
                                                             + 0.005 * math.sin(a + t)))
    assert tau[0] == pytest.approx(expected, rel=1e-12)


def test_a_closed_pipe_ends_quietly_with_status_0():
    process = subprocess.Popen([sys.executable, "-m", "pardyn.cli", "robots"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()  # the reader left before the first line (| head -0)
    assert process.wait(timeout=60) == 0
    assert b"Broken pipe" not in process.stderr.read()


def test_node_info_lines_go_to_the_log_file(tmp_path, capfd):
    from pardyn.cli.console import node_log

    with node_log(tmp_path / "nodes.log") as path:
        os.write(2, b"[INFO] [1.0] [sim]: gains [1, 2]\n[WARN] [1.0] [sim]: late\n")
    err = capfd.readouterr().err
    assert "[WARN] [1.0] [sim]: late" in err and "[INFO]" not in err
    assert path.read_text().count("[sim]") == 2


MESHED = """<mujoco model="meshed">
  <compiler angle="radian"/>
  <asset><mesh name="shell" file="absent_shell.stl"/></asset>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 0 1"/>
      {inertial}
      <geom type="mesh" mesh="shell"/>
      <body name="b" pos="0.2 0 0">
        <joint name="j2" type="hinge" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="0.1"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="j1"/><motor joint="j2"/></actuator>
</mujoco>
"""


def test_an_mjcf_with_absent_meshes_loads_when_bodies_carry_inertials(tmp_path):
    path = tmp_path / "meshed.xml"
    path.write_text(MESHED.format(inertial='<inertial pos="0.1 0 0" mass="0.5" diaginertia="1e-3 1e-3 1e-3"/>'))
    with pytest.warns(UserWarning, match="1 mesh geoms skipped"):
        robot = pardyn.load_robot(path)
    masses = sorted(float(body.standard[9]) for body in robot.nominal_parameters.bodies)
    assert masses == pytest.approx([0.1, 0.5])  # the explicit inertial, the capsule's mass: unchanged
    path.write_text(MESHED.format(inertial=""))
    with pytest.raises(DescriptionError, match="body 'a' takes its mass from mesh geom 'shell'"):
        pardyn.load_robot(path)


def rssr_files(tmp_path, theta: float = 0.5, phi: float = 1.0) -> tuple[Path, float]:
    """A spatial RSSR linkage: crank (0.1 m, about z at the origin), rocker (0.15 m, about x at B = (0.3, 0,
    0.1) m), their tips joined by a massless rod (a distance closure) of the length they have at (theta, phi)."""
    a, b, base = 0.1, 0.15, np.array([0.3, 0.0, 0.1])
    length = float(np.linalg.norm(a * np.array([math.cos(theta), math.sin(theta), 0.0])
                                  - base - b * np.array([0.0, math.cos(phi), math.sin(phi)])))
    (tmp_path / "rssr.urdf").write_text(f"""<robot name="rssr"><link name="base"/>
  <link name="crank"><inertial><origin xyz="0.05 0 0"/><mass value="0.3"/><inertia ixx="1e-5" iyy="3e-4" izz="3e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="rocker"><inertial><origin xyz="0 0.075 0"/><mass value="0.4"/><inertia ixx="8e-4" iyy="1e-5" izz="8e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="crank_tip"/><link name="rocker_tip"/>
  <joint name="crank_joint" type="continuous"><parent link="base"/><child link="crank"/><axis xyz="0 0 1"/>
    <limit effort="2" velocity="20"/></joint>
  <joint name="rocker_joint" type="revolute"><parent link="base"/><child link="rocker"/><origin xyz="0.3 0 0.1"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="0" velocity="20"/></joint>
  <joint name="crank_tip_joint" type="fixed"><parent link="crank"/><child link="crank_tip"/><origin xyz="{a} 0 0"/></joint>
  <joint name="rocker_tip_joint" type="fixed"><parent link="rocker"/><child link="rocker_tip"/><origin xyz="0 {b} 0"/></joint>
</robot>""")
    (tmp_path / "rssr.yaml").write_text(f"""name: rssr
urdf: rssr.urdf
task: actuated
actuated: [crank_joint]
closures:
  - {{name: rod, frames: [crank_tip, rocker_tip], type: distance, length: {length!r}}}
assembly_mode:
  - {{point: rocker_tip, above: rocker, axis: z}}
home:
  joints: {{crank_joint: {theta}, rocker_joint: {phi}}}
""")
    return tmp_path / "rssr.yaml", length


def test_a_spatial_linkage_against_its_closed_form_and_mujoco_through_the_loop(tmp_path):
    """Kinematics: the rod's length holds (hand distance equation); dynamics: MuJoCo's inverse dynamics of the
    same URDF tree (MuJoCo reads URDF) mapped through the loop by virtual work, ``tau = tau_c + (dphi/dtheta)
    tau_r`` with ``dphi/dtheta = -f_theta / f_phi`` of ``f = |P(theta) - Q(phi)|^2 - L^2`` (hand)."""
    import mujoco

    from pardyn.dynamics import InverseDynamics

    path, length = rssr_files(tmp_path)
    robot = pardyn.load_robot(path)
    reference = mujoco.MjModel.from_xml_path(str(tmp_path / "rssr.urdf"))
    data = mujoco.MjData(reference)
    a, b, base = 0.1, 0.15, np.array([0.3, 0.0, 0.1])
    for theta, theta_dot, theta_ddot in ((0.6, 0.5, -1.0), (0.3, -1.2, 2.0)):
        q = robot.solve_forward([theta]).q
        phi = q[robot.joint_names.index("rocker_joint")]
        tip_p = a * np.array([math.cos(theta), math.sin(theta), 0.0])
        tip_q = base + b * np.array([0.0, math.cos(phi), math.sin(phi)])
        assert np.linalg.norm(tip_p - tip_q) == pytest.approx(length, abs=1e-12)
        gap = tip_p - tip_q
        ratio = -(gap @ (a * np.array([-math.sin(theta), math.cos(theta), 0.0]))) / (
            -(gap @ (b * np.array([0.0, -math.sin(phi), math.cos(phi)]))))
        # phi(theta) to second order by finite differences of the closed form (the rod's length)
        step = 1e-4
        phis = [robot.solve_forward([theta + k * step], start=q).q[1] for k in (-1, 0, 1)]
        curvature = (phis[0] - 2 * phis[1] + phis[2]) / step**2
        assert (phis[2] - phis[0]) / (2 * step) == pytest.approx(ratio, rel=1e-6)
        qdot = np.array([theta_dot, ratio * theta_dot])
        qddot = np.array([theta_ddot, ratio * theta_ddot + curvature * theta_dot**2])
        data.qpos[:], data.qvel[:], data.qacc[:] = q, qdot, qddot
        mujoco.mj_inverse(reference, data)
        expected = data.qfrc_inverse[0] + ratio * data.qfrc_inverse[1]
        assert InverseDynamics(robot).torques(q, qdot, qddot)[0] == pytest.approx(expected, rel=1e-5)


def test_a_loaded_run_carries_the_load_on_the_task_frame_of_a_robot_without_a_payload_link(tmp_path, own_robot_demo,
                                                                                          capsys):
    """The biglide without its ``payload`` link through ``pardyn demo --loaded``: the load (20 % of the
    robot's moving mass, 0.34 kg by hand from the URDF) goes on its task frame, the platform (the body at
    the end of the task's x-y chain), said once; the identification finds that mass; the identified model
    beats the nominal one on the held-out run; the result file reads back as the bare robot's parameters."""
    from pardyn.dynamics.parameters import read_parameter_file

    path = biglide_files(tmp_path, payload_link=False)
    robot = pardyn.load_robot(path)
    assert robot.payload_frame == robot.effector_frame == "platform"
    assert pardyn.load_robot("ur5e").payload_frame == "tool0"  # a serial robot: its last link, the flange
    assert "payload" not in {body.name for body in robot.nominal_parameters.bodies}
    assert main(["robots", "--describe", str(path)]) == 0 and "degrees of freedom: 2" in capsys.readouterr().out
    result, console, out = own_robot_demo(path, "--loaded")
    true_mass = round(0.2 * MOVING_MASS, 3)
    assert console.count(f"payload: {true_mass:g} kg (20 % of biglide's moving mass) on frame 'platform' "
                         "(its task frame)") == 1
    assert result["payload"]["mass"] == pytest.approx(true_mass, rel=0.05)  # 0.8-2.6 % over seeds 7-14
    validation = result["validation"]
    assert validation["relative_error_norm"] < validation["nominal"]["relative_error_norm"]
    params = read_parameter_file(out / "result.json", robot)  # what a controller's parameters_file reads
    assert params.names == robot.nominal_parameters.names and "m_payload" not in params.names
    assert params.as_dict()["m_platform"] == pytest.approx(result["standard_parameters"]["m_platform"])


def test_a_spatial_linkage_through_describe_and_the_demo(tmp_path, own_robot_demo, capsys):
    """The RSSR (kinematics and dynamics checked above) through describe and the demo: its unlimited crank
    (``continuous``, effort and speed limits only) excited, identified, the identified model better than the
    nominal one on the held-out run; drawn in 3D."""
    path, _ = rssr_files(tmp_path)
    assert main(["robots", "--describe", str(path)]) == 0
    described = capsys.readouterr().out
    assert "degrees of freedom: 1" in described and "rod: crank_tip ~ rocker_tip (distance" in described
    result, console, out = own_robot_demo(path)
    validation = result["validation"]
    assert validation["relative_error_norm"] < validation["nominal"]["relative_error_norm"]
    assert (out / "kinematics" / "poses_3d.png").stat().st_size > 10_000  # spatial: drawn in 3D
