"""onshape-to-robot's 3-dof spherical orientation mechanism (issue 41): a 3-RRR spherical parallel mechanism in the
style of the agile eye, written here as onshape-to-robot's URDF and MJCF exporters write it (dummy frame links on
fixed joints ``<frame>_frame``, the ``closing_<name>_1``/``_2`` frames of a revolute mate plus their ``_z`` pair,
unnamed ``connect`` equalities between sites, position actuators). Every axis passes through the centre O: leg ``i``
turns about ``u_i`` (the motor on the base), then ``w_i`` (the elbow), and holds the platform about ``v_i``; at
q = 0, ``(u_i, w_i, v_i) = (e_i, e_i+1, e_i+2)``. Leg 0 carries the platform in the tree; legs 1 and 2 close on it.

References, independent of pardyn: the mechanism's hand-derived closure (the elbow axis stays square to the
platform's axis: ``(Rot(u_i, q_i) w_i) . (R v_i) = 0``, R the platform's orientation), MuJoCo's own equality
residuals (``efc_pos``) at pardyn's solutions, and ``mj_inverse`` of the tree mapped through MuJoCo's loop
(``tau_a = G^T tau_tree``, ``G = dq/dq_a`` from the null space of ``efc_J``).
"""

from __future__ import annotations

import math
import warnings

import mujoco
import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.cli import main
from pardyn.dynamics import InverseDynamics

R = 0.1  # distance of every joint from the centre (m)
E = np.eye(3)
LINKS = {f"proximal{i}": (R * E[i], 0.08, 0.5 * R * (E[i] + E[(i + 1) % 3])) for i in range(3)}
LINKS.update({f"distal{i}": (R * E[(i + 1) % 3], 0.06, 0.5 * R * (E[(i + 1) % 3] + E[(i + 2) % 3]) + 0.01 * E[i])
              for i in range(3)})
LINKS["platform"] = (R * E[2], 0.2, np.array([0.01, -0.02, 0.03]))
"""link: (frame origin at q = 0 (world, frames unrotated), mass, centre of mass (world))."""
PARENT = {**{f"proximal{i}": "base" for i in range(3)}, **{f"distal{i}": f"proximal{i}" for i in range(3)},
          "platform": "distal0"}
JOINT = {**{f"proximal{i}": (f"motor{i}", E[i]) for i in range(3)},
         **{f"distal{i}": (f"elbow{i}", E[(i + 1) % 3]) for i in range(3)}, "platform": ("wrist0", E[2])}
CLOSING = {f"leg{i}": (f"distal{i}", E[(i + 2) % 3]) for i in (1, 2)}  # the cut revolute of legs 1, 2: link, axis v_i
MOTORS = ["motor0", "motor1", "motor2"]


def _origin(link: str) -> np.ndarray:
    return np.zeros(3) if link == "base" else LINKS[link][0]


def _inertia(mass: float) -> tuple[float, float, float]:
    return (2e-3 * mass, 3e-3 * mass, 2.5e-3 * mass)


def _numbers(values) -> str:
    return " ".join(f"{v:.17g}" for v in values)


def spherical_urdf() -> str:
    """The mechanism as onshape-to-robot's URDF exporter writes it."""
    links = ['<link name="base"><inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="1"/>'
             '<inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>']
    joints = []
    for link, (origin, mass, com) in LINKS.items():
        ixx, iyy, izz = _inertia(mass)
        links.append(f'<link name="{link}"><inertial><origin xyz="{_numbers(com - origin)}" rpy="0 0 0"/>'
                     f'<mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>'
                     '</inertial></link>')
        name, axis = JOINT[link]
        joints.append(f'<joint name="{name}" type="revolute"><origin xyz="{_numbers(origin - _origin(PARENT[link]))}" '
                      f'rpy="0 0 0"/><parent link="{PARENT[link]}"/><child link="{link}"/><axis xyz="{_numbers(axis)}"/>'
                      f'<limit effort="10" velocity="10" lower="{-math.pi}" upper="{math.pi}"/></joint>')
    for name, (link, axis) in CLOSING.items():
        for side, owner in (("1", link), ("2", "platform")):
            for suffix, point in (("", R * axis), ("_z", 1.5 * R * axis)):
                frame = f"closing_{name}_{side}{suffix}"
                links.append(f'<link name="{frame}"><inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="1e-9"/>'
                             '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>')
                joints.append(f'<joint name="{frame}_frame" type="fixed"><origin xyz="{_numbers(point - _origin(owner))}" '
                              f'rpy="0 0 0"/><parent link="{owner}"/><child link="{frame}"/><axis xyz="0 0 0"/></joint>')
    return ('<?xml version="1.0" ?><!-- Generated using onshape-to-robot --><robot name="spherical">'
            + "".join(links) + "".join(joints) + "</robot>")


def spherical_mjcf(*, actuators: bool = True, constraints: bool = True) -> str:
    """The mechanism as onshape-to-robot's MuJoCo exporter writes it (nested bodies, sites, connect equalities)."""
    children = {}
    for link in LINKS:
        children.setdefault(PARENT[link], []).append(link)
    sites = {}
    for name, (link, axis) in CLOSING.items():
        for side, owner in (("1", link), ("2", "platform")):
            for suffix, point in (("", R * axis), ("_z", 1.5 * R * axis)):
                sites.setdefault(owner, []).append(
                    f'<site name="closing_{name}_{side}{suffix}" pos="{_numbers(point - _origin(owner))}"/>')

    def body(link: str) -> str:
        origin, mass, com = LINKS[link]
        name, axis = JOINT[link]
        inner = "".join(body(child) for child in children.get(link, []))
        return (f'<body name="{link}" pos="{_numbers(origin - _origin(PARENT[link]))}">'
                f'<joint name="{name}" type="hinge" axis="{_numbers(axis)}" range="{-math.pi} {math.pi}"/>'
                f'<inertial pos="{_numbers(com - origin)}" mass="{mass}" diaginertia="{_numbers(_inertia(mass))}"/>'
                + "".join(sites.get(link, [])) + inner + "</body>")

    equalities = "".join(f'<connect site1="closing_{name}_1{suffix}" site2="closing_{name}_2{suffix}"/>'
                         for name in CLOSING for suffix in ("", "_z"))
    motors = "".join(f'<position name="{m}" joint="{m}" kp="10"/>' for m in MOTORS)
    flag = "" if constraints else '<option><flag constraint="disable"/></option>'
    return ('<mujoco model="spherical"><compiler angle="radian" autolimits="true"/>' + flag +
            '<worldbody><body name="base"><inertial pos="0 0 0" mass="1" diaginertia="1e-3 1e-3 1e-3"/>'
            + "".join(body(child) for child in children["base"]) + "</body></worldbody>"
            + f"<equality>{equalities}</equality>"
            + (f"<actuator>{motors}</actuator>" if actuators else "") + "</mujoco>")


@pytest.fixture(scope="module")
def spherical(tmp_path_factory):
    """{format: robot} from onshape-style URDF and MJCF, each with the YAML `robots --init` writes."""
    from pardyn.description.starting import starting_yaml

    folder = tmp_path_factory.mktemp("spherical")
    (folder / "spherical.urdf").write_text(spherical_urdf())
    (folder / "spherical.xml").write_text(spherical_mjcf())
    robots = {}
    for suffix in ("urdf", "xml"):
        yaml_path = folder / f"spherical_{suffix}.yaml"
        yaml_path.write_text(starting_yaml(folder / f"spherical.{suffix}", yaml_path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robots[suffix] = pardyn.load_robot(yaml_path)
    return robots, folder


MOTOR_ANGLES = [(0.0, 0.0, 0.0), (0.2, -0.1, 0.15), (-0.25, 0.3, -0.1), (0.35, 0.2, 0.3)]


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def test_both_exports_close_as_the_hand_formula_and_mujoco(spherical):
    """Closures from the closing frames (two revolute mates, each a ``_1``/``_2`` pair and its ``_z`` pair: 12 rows,
    rank 4 on 7 joints, 3 dof); at each motor triple pardyn's solution from URDF and MJCF agree, the elbow axes
    stay square to the platform's (hand formula) and MuJoCo's equality residuals vanish."""
    robots, folder = spherical
    urdf, mjcf = robots["urdf"], robots["xml"]
    assert urdf.summary()["degrees_of_freedom"] == mjcf.summary()["degrees_of_freedom"] == 3
    assert list(urdf.actuated_names) == list(mjcf.actuated_names) == MOTORS
    mj = mujoco.MjModel.from_xml_path(str(folder / "spherical.xml"))
    data = mujoco.MjData(mj)
    platform = mjcf.model.getFrameId("platform")
    for angles in MOTOR_ANGLES:
        q_urdf, q_mjcf = (robot.solve_forward(list(angles)).q for robot in (urdf, mjcf))
        by_name = dict(zip(mjcf.joint_names, q_mjcf))
        assert np.allclose([dict(zip(urdf.joint_names, q_urdf))[n] for n in mjcf.joint_names], q_mjcf, atol=1e-12)
        pin_data = mjcf.model.createData()
        pin.framesForwardKinematics(mjcf.model, pin_data, q_mjcf)
        rotation = pin_data.oMf[platform].rotation
        for i in range(3):
            elbow = _rot(E[i], angles[i]) @ E[(i + 1) % 3]
            assert abs(elbow @ rotation @ E[(i + 2) % 3]) < 1e-12
        for name, value in by_name.items():
            data.qpos[mj.joint(name).qposadr[0]] = value
        mujoco.mj_forward(mj, data)
        assert np.abs(data.efc_pos[: data.ne]).max() < 1e-12


def _closed_state(robot, angles, rates, accelerations, step=1e-4):
    """(q, qdot, qddot) along the motor path ``a(t) = a0 + rates t + accelerations t^2 / 2``, differentiated
    centrally from pardyn's forward solutions."""
    a0, rates, accelerations = map(np.asarray, (angles, rates, accelerations))
    qs = [robot.solve_forward(list(a0 + rates * t + accelerations * t * t / 2)).q for t in (-step, 0.0, step)]
    return qs[1], (qs[2] - qs[0]) / (2 * step), (qs[0] - 2 * qs[1] + qs[2]) / step**2


def test_motor_torques_equal_mj_inverse_through_the_loop(spherical):
    """Inverse dynamics of both exports: ``tau_a = G^T tau_tree``, the tree's by ``mj_inverse`` (constraints off),
    ``G = dq/dq_a`` the null space of MuJoCo's equality Jacobian ``efc_J`` (rank 4 of 12 rows) scaled to the
    motors."""
    robots, _ = spherical
    tree = mujoco.MjModel.from_xml_string(spherical_mjcf(actuators=False, constraints=False))
    tree_data = mujoco.MjData(tree)
    closed = mujoco.MjModel.from_xml_string(spherical_mjcf(actuators=False))
    closed_data = mujoco.MjData(closed)
    motors = [closed.joint(m).dofadr[0] for m in MOTORS]
    for angles, rates, accelerations in (((0.1, -0.2, 0.15), (0.8, -0.5, 0.3), (-1.0, 2.0, 0.5)),
                                         ((-0.3, 0.25, 0.2), (-0.4, 0.9, -0.7), (1.5, -0.5, -2.0))):
        for robot in robots.values():
            q, qdot, qddot = _closed_state(robot, angles, rates, accelerations)
            for model, data in ((tree, tree_data), (closed, closed_data)):
                for k, name in enumerate(robot.joint_names):
                    dof = model.joint(name).dofadr[0]
                    data.qpos[dof], data.qvel[dof], data.qacc[dof] = q[k], qdot[k], qddot[k]
            mujoco.mj_inverse(tree, tree_data)
            mujoco.mj_forward(closed, closed_data)
            rows = closed_data.efc_J[: closed_data.ne * closed.nv].reshape(closed_data.ne, closed.nv)
            assert np.abs(rows @ closed_data.qvel).max() < 1e-7  # pardyn's velocities in MuJoCo's loop
            _, singular, vt = np.linalg.svd(rows)
            assert int(np.sum(singular > 1e-9 * singular[0])) == 4
            null = vt[4:].T  # (nv, 3)
            velocity_map = null @ np.linalg.inv(null[motors])
            expected = velocity_map.T @ tree_data.qfrc_inverse
            assert InverseDynamics(robot).torques(q, qdot, qddot) == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_describe_kinematics_animate_export_c(spherical, tmp_path, capsys):
    """Every command on the bare URDF and its YAML: describe, the demo's kinematics part, animate; export c
    writes its kernels or says in one line why not. ``--init`` gives the platform's turns as the task."""
    from pardyn.cli.demo import kinematics_demo

    _, folder = spherical
    assert main(["robots", "--describe", str(folder / "spherical.urdf")]) == 0
    out = capsys.readouterr().out
    assert "closing_leg1_1 ~ closing_leg1_2" in out and "closing_leg2_1 ~ closing_leg2_2" in out
    assert "closure 'leg2_z': every row depends on the others (dropped)" in out  # a revolute mate about O: 2 rows
    path = folder / "spherical_urdf.yaml"
    text = path.read_text()  # --init: the platform only turns about O, so its task is its turns (was [x, y, rz])
    assert "coordinates: [rx, ry, rz]" in text and "turn it about a fixed centre" in text
    summary = kinematics_demo(str(path), duration_s=1.0, rate_hz=20.0, radius_m=None, out=tmp_path / "kinematics")
    assert summary["max_inverse_residual"] < 1e-10 and summary["max_forward_round_trip_error"] < 1e-9
    assert main(["animate", "--robot", str(path), "--frames", "3", "--duration", "0.3",
                 "--out", str(tmp_path / "animate")]) == 0
    capsys.readouterr()
    code = main(["export", "c", "--robot", str(path), "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 0 or (code == 2 and err.count("\n") == 1), err
