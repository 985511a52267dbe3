"""The ``inertials:`` section (issue 26 follow-up): a vendor's MJCF whose moving bodies take their mass from mesh
files that are not shipped (the Robotiq 2F-85's silicone pads) loads when a pardyn YAML gives those bodies'
inertials; the section overrides a URDF link's inertial in general.

Independent reference: a two-joint arm whose forearm and (jointless, rotated) pad take their mass from a box mesh
written here as a binary STL. With the mesh present, MuJoCo computes the box's inertia itself; the test first
checks that it equals the hand closed form (a parallelepiped: an affine image of a cube, exact in float32), then
deletes the mesh and gives those hand values in the YAML: pardyn's inverse dynamics and its MuJoCo plant equal
``mj_inverse`` of the original file with its mesh.
"""

from __future__ import annotations

import shutil
import struct

import mujoco
import numpy as np
import pytest

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.errors import DescriptionError
from pardyn.plants.mujoco_plant import build_mjcf

EDGES = np.array([[0.015625, 0.0, 0.00390625],
                  [0.0078125, 0.03125, 0.0],
                  [0.0, 0.0078125, 0.046875]])  # m, columns: the half edges a1 a2 a3 of a parallelepiped
CENTRE = np.array([0.0625, 0.015625, -0.03125])  # m, its centre in the body frame
DENSITY = 1000.0  # kg/m^3, MuJoCo's default geom density
# dyadic numbers: every vertex CENTRE +- a1 +- a2 +- a3 is exact in the STL's float32


def box_inertial() -> tuple[float, np.ndarray, np.ndarray]:
    """Hand closed form of the parallelepiped ``x = CENTRE + A u``, ``u`` in the cube ``[-1, 1]^3``: mass
    ``rho 8 |det A|``, second moment about the centre ``C = rho |det A| A (8/3 I) A^T``, inertia ``tr(C) I - C``
    (all products of inertia nonzero). (mass kg, com (3,) m, inertia about the com (3, 3) kg m^2, body axes)."""
    volume = abs(np.linalg.det(EDGES))
    second = DENSITY * volume * 8.0 / 3.0 * EDGES @ EDGES.T
    return DENSITY * 8.0 * volume, CENTRE, np.trace(second) * np.eye(3) - second


def write_box_stl(path) -> None:
    """A binary STL (MuJoCo reads binary only) of the parallelepiped, faces wound outwards."""
    triangles = []
    for axis in range(3):
        u, w = [k for k in range(3) if k != axis]
        for sign in (-1.0, 1.0):
            corners = []
            for du, dw in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                local = np.zeros(3)
                local[axis], local[u], local[w] = sign, du, dw
                corners.append(CENTRE + EDGES @ local)
            normal = np.cross(EDGES[:, u], EDGES[:, w])
            normal *= np.sign(normal @ (sign * EDGES[:, axis])) / np.linalg.norm(normal)
            for tri in ((0, 1, 2), (0, 2, 3)):
                a, b, c = (corners[i] for i in tri)
                if np.cross(b - a, c - a) @ normal < 0.0:
                    b, c = c, b
                triangles.append((normal, a, b, c))
    data = bytearray(b"\0" * 80) + struct.pack("<I", len(triangles))
    for triangle in triangles:
        data += struct.pack("<12fH", *np.concatenate(triangle), 0)
    path.write_bytes(bytes(data))


ARM = """<mujoco model="arm">
  <compiler angle="radian" meshdir="assets" autolimits="true"/>
  <asset><mesh name="shell" file="shell.stl"/></asset>
  <worldbody>
    <body name="upper">
      <joint name="j1" axis="0 1 0" damping="0.02"/>
      <inertial pos="0.1 0 0" mass="0.5" diaginertia="1e-3 2e-3 2.5e-3"/>
      <body name="fore" pos="0.2 0 0">
        <joint name="j2" axis="0 0.6 0.8"/>
        <geom type="mesh" mesh="shell"/>
        <body name="pad" pos="0.1 0 0.02" quat="0.9 0.1 -0.3 0.2">
          <geom type="mesh" mesh="shell"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="j1"/><motor joint="j2"/></actuator>
</mujoco>
"""


def yaml_text(links: str = "[fore, pad]") -> str:
    mass, com, inertia = box_inertial()
    values = ", ".join(f"{k}: {float(inertia[i, j])!r}" for k, i, j in (("xx", 0, 0), ("yy", 1, 1), ("zz", 2, 2),
                                                                  ("xy", 0, 1), ("xz", 0, 2), ("yz", 1, 2)))
    return ("name: arm\nurdf: arm.xml\ntask: actuated\nactuated: [j1, j2]\ninertials:\n"
            f"  - {{links: {links}, mass: {float(mass)!r}, com: {[float(c) for c in com]}, inertia_com: {{{values}}}}}\n")


@pytest.fixture
def arm(tmp_path):
    (tmp_path / "assets").mkdir()
    write_box_stl(tmp_path / "assets" / "shell.stl")
    (tmp_path / "arm.xml").write_text(ARM)
    (tmp_path / "arm.yaml").write_text(yaml_text())
    return tmp_path


def test_absent_meshes_given_in_the_yaml_give_mujocos_dynamics_of_the_meshed_file(arm, mujoco_inverse):
    reference = mujoco.MjModel.from_xml_path(str(arm / "arm.xml"))  # the mesh present: MuJoCo's own inertia
    mass, com, inertia = box_inertial()
    fore = mujoco.mj_name2id(reference, mujoco.mjtObj.mjOBJ_BODY, "fore")
    rotation = np.empty(9)
    mujoco.mju_quat2Mat(rotation, reference.body_iquat[fore])
    rotation = rotation.reshape(3, 3)
    assert reference.body_mass[fore] == pytest.approx(mass, rel=1e-12)  # the hand values are MuJoCo's
    np.testing.assert_allclose(reference.body_ipos[fore], com, atol=1e-12)
    np.testing.assert_allclose(rotation @ np.diag(reference.body_inertia[fore]) @ rotation.T, inertia,
                               atol=1e-9 * np.abs(inertia).max())  # 7e-10: MuJoCo's eigen-decomposition (mju_eig3)

    meshed = pardyn.load_robot(arm / "arm.yaml")  # the section with the mesh present: same values, MuJoCo's spec
    shutil.rmtree(arm / "assets")
    with pytest.warns(UserWarning, match="2 mesh geoms skipped"):
        robot = pardyn.load_robot(arm / "arm.yaml")
    plant = mujoco.MjModel.from_xml_string(build_mjcf(robot))
    rng = np.random.default_rng(3)
    for q, qdot, qddot in rng.uniform(-1.5, 1.5, (5, 3, 2)):
        expected = mujoco_inverse(reference, q, qdot, qddot)
        np.testing.assert_allclose(InverseDynamics(robot).torques(q, qdot, qddot), expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(InverseDynamics(meshed).torques(q, qdot, qddot), expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(mujoco_inverse(plant, q, qdot, qddot), expected, rtol=1e-10, atol=1e-12)

    from pardyn.export import build_mechanism

    moving = sum(link.mass for link in build_mechanism(robot).links if link.role == "tree")
    assert moving == pytest.approx(float(reference.body_mass.sum()), rel=1e-12)  # the SDF's links


def test_each_refusal_is_one_line_naming_the_body(arm):
    shutil.rmtree(arm / "assets")
    cases = [
        ("name: arm\nurdf: arm.xml\ntask: actuated\nactuated: [j1, j2]\n",
         "body 'fore' takes its mass from mesh geom 'shell': .*pardyn YAML around this file \\(inertials:\\)"),
        (yaml_text("[fore]"), "body 'pad' takes its mass from mesh geom 'shell'"),
        (yaml_text("[fore, pad, elbow]"), "arm.yaml: inertials\\[0\\].links\\[2\\]: no body 'elbow' in .*arm.xml"),
    ]
    for text, message in cases:
        (arm / "arm.yaml").write_text(text)
        with pytest.raises(DescriptionError, match=message) as error:
            pardyn.load_robot(arm / "arm.yaml")
        assert "\n" not in str(error.value)


def test_a_urdf_links_inertial_is_overridden_against_a_hand_pendulum(tmp_path):
    """One link on a horizontal axis, at rest at q = 0: tau = -m g com_x (gravity -z, axis y), with the YAML's
    mass and com, not the URDF's."""
    (tmp_path / "arm.urdf").write_text(
        '<robot name="arm"><link name="base"/><link name="l1"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/></joint>'
        '</robot>')
    head = "name: arm\nurdf: arm.urdf\ntask: actuated\nactuated: [j1]\n"
    (tmp_path / "arm.yaml").write_text(head + "inertials:\n  - {links: [l1], mass: 2.0, com: [0.3, 0, 0.1], "
                                       "inertia_com: {xx: 0.04, yy: 0.04}}\n")
    robot = pardyn.load_robot(tmp_path / "arm.yaml")
    assert "inertials: ['l1'] take their mass, com and inertia from this YAML, not from arm.urdf" in robot.summary()[
        "notes"]  # what --describe prints
    tau = InverseDynamics(robot).torques(np.zeros(1), np.zeros(1), np.zeros(1))
    np.testing.assert_allclose(tau, [-2.0 * 9.81 * 0.3], rtol=1e-12)
    qddot = InverseDynamics(robot).torques(np.zeros(1), np.zeros(1), np.ones(1)) - tau
    np.testing.assert_allclose(qddot, [0.04 + 2.0 * (0.3**2 + 0.1**2)], rtol=1e-12)  # I_yy + m d^2
    (tmp_path / "arm.yaml").write_text(head + "inertials:\n  - {links: [l2], mass: 2.0}\n")
    with pytest.raises(DescriptionError, match="inertials\\[0\\].links\\[0\\]: no link 'l2' in .*arm.urdf"):
        pardyn.load_robot(tmp_path / "arm.yaml")
