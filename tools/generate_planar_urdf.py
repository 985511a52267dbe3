#!/usr/bin/env python3
"""Write the URDF trees of the planar parallel robots into ``urdf/``.

Run ``python tools/generate_planar_urdf.py`` after changing a geometry or a
nominal inertia below; the URDF files are committed, this script is how they
were made. Every robot lies in the xy plane, joint axes along +z, angles CCW.

Tree of a leg ``i`` (``leg{i}_joint{j}``, j = 1 at the base)::

    base_link --joint1 (at A_i)--> leg{i}_link1 --joint2 (at B_i)--> leg{i}_link2
              [--joint3 (at C_i)--> leg{i}_link3]   # platform joint, massless body

with empty marker links ``leg{i}_A``, ``leg{i}_B``, ``leg{i}_tip`` (frames for
closures and working modes). The platform is a virtual serial chain of its task
coordinates: ``platform_x`` (prismatic x) -> ``platform_y`` (prismatic y)
[-> ``platform_phi`` (revolute z)] carrying the body ``platform``, with marker
links ``platform_c{i}`` where leg ``i`` attaches.

Inertials and drive friction come from the ``dynamics:`` section of
``config/robots/<name>.yaml`` (the nominal values, one source of truth read by
:mod:`pardyn.dynamics.parameters` too): each listed link gets its mass, centre
of mass (link frame) and inertia about the centre of mass (the URDF
convention); each drive joint with friction gets ``<dynamics damping="fv"
friction="fs"/>`` (pinocchio reads them into ``model.damping`` /
``model.friction``; URDF has no field for the rotor inertia ``ia`` nor the
offset, they stay in the YAML). Link frames sit at the joints, x along the link.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this tree's pardyn (its YAML parser)


@dataclass
class Body:
    mass: float = 0.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    # Inertia about the centre of mass, link axes (kg m^2). In-plane links are
    # slender rods: ixx, iyy do not enter planar dynamics but keep the inertia
    # physical for other tools.
    ixx: float = 0.0
    ixy: float = 0.0
    ixz: float = 0.0
    iyy: float = 0.0
    iyz: float = 0.0
    izz: float = 0.0


@dataclass
class Drive:
    damping: float = 0.0  # fv, N m s/rad
    friction: float = 0.0  # fs, N m


@dataclass
class Nominal:
    """The ``dynamics:`` section of a robot YAML: bodies by link, drives by joint."""

    bodies: dict[str, Body]
    drives: dict[str, Drive]

    def body(self, link: str) -> Body | None:
        return self.bodies.get(link)

    def drive(self, joint: str) -> Drive | None:
        return self.drives.get(joint)


def read_nominal(name: str) -> Nominal:
    """Nominal bodies and drives of ``config/robots/<name>.yaml`` (its ``dynamics:`` section, typed and
    checked by :func:`pardyn.description.dynamics.parse_dynamics`, the parser the robot loads with)."""
    from pardyn.description.dynamics import parse_dynamics  # noqa: PLC0415
    from pardyn.description.fields import YamlFields  # noqa: PLC0415

    path = ROOT / "config" / "robots" / f"{name}.yaml"
    raw = yaml.safe_load(path.read_text()) or {}
    if raw.get("dynamics") is None:
        return Nominal({}, {})
    section = parse_dynamics(YamlFields(path), raw["dynamics"], task_joints=tuple((raw.get("task") or {}).values()),
                             actuated=tuple(raw.get("actuated") or ()))
    bodies = {}
    for item in section.bodies:
        (ixx, ixy, ixz), (_, iyy, iyz), (_, _, izz) = item.inertia_com.tolist()
        body = Body(mass=item.mass, com=tuple(item.com.tolist()), ixx=ixx, ixy=ixy, ixz=ixz, iyy=iyy, iyz=iyz, izz=izz)
        bodies.update(dict.fromkeys(item.links, body))
    drives = {}
    for item in section.drives:
        drives.update(dict.fromkeys(item.joints, Drive(damping=item.fv, friction=item.fs)))
    return Nominal(bodies=bodies, drives=drives)


@dataclass
class Leg:
    base: tuple[float, float]
    lengths: tuple[float, ...]  # A->B, B->C (m)
    platform_joint: bool  # add joint3 (revolute at C)
    extra: dict[str, str] = field(default_factory=dict)  # link fixed at the parent's origin -> parent link


@dataclass
class Attachment:
    xy: tuple[float, float]  # in the platform frame (m)
    yaw: float  # rad


@dataclass
class PlanarRobot:
    name: str
    comment: str
    legs: list[Leg]
    rotation: bool  # platform_phi exists
    attachments: list[Attachment]
    payload: bool = False  # a link "payload" fixed to the platform at P (eq. 38)
    nominal: Nominal = field(default_factory=lambda: Nominal({}, {}))


def _inertial(body: Body) -> str:
    return (
        f'    <inertial>\n      <origin xyz="{body.com[0]:.17g} {body.com[1]:.17g} {body.com[2]:.17g}" rpy="0 0 0"/>\n'
        f'      <mass value="{body.mass:.17g}"/>\n'
        f'      <inertia ixx="{body.ixx:.17g}" ixy="{body.ixy:.17g}" ixz="{body.ixz:.17g}" '
        f'iyy="{body.iyy:.17g}" iyz="{body.iyz:.17g}" izz="{body.izz:.17g}"/>\n'
        "    </inertial>\n"
    )


def _link(name: str, body: Body | None = None) -> str:
    if body is None or body.mass == 0.0:
        return f'  <link name="{name}"/>\n'
    return f'  <link name="{name}">\n{_inertial(body)}  </link>\n'


def _joint(name: str, kind: str, parent: str, child: str, xyz=(0.0, 0.0, 0.0), yaw=0.0, axis="0 0 1",
           drive: Drive | None = None, roll: float = 0.0, limit: tuple[float, float] = (1000.0, 100.0),
           prismatic_limit: tuple[float, float] = (10000.0, 100.0)) -> str:
    """A URDF joint; ``roll``/``yaw`` (rad) of its origin, ``limit`` = (effort N m, velocity rad/s) of a
    revolute, ``prismatic_limit`` = (effort N, velocity m/s) of a prismatic joint."""
    text = (
        f'  <joint name="{name}" type="{kind}">\n'
        f'    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
        f'    <origin xyz="{xyz[0]:.17g} {xyz[1]:.17g} {xyz[2]:.17g}" rpy="{roll:.17g} 0 {yaw:.17g}"/>\n'
    )
    if kind == "revolute":
        text += (f'    <axis xyz="{axis}"/>\n    <limit lower="-6.2831853" upper="6.2831853" '
                 f'effort="{limit[0]:.17g}" velocity="{limit[1]:.17g}"/>\n')
    elif kind == "prismatic":
        effort, velocity = prismatic_limit
        text += (f'    <axis xyz="{axis}"/>\n    <limit lower="-5" upper="5" effort="{effort:.17g}" '
                 f'velocity="{velocity:.17g}"/>\n')
    if drive is not None and (drive.damping or drive.friction):
        text += f'    <dynamics damping="{drive.damping:.17g}" friction="{drive.friction:.17g}"/>\n'
    return text + "  </joint>\n"


def _translation_chain(prefix: str, axes: str = "xy") -> tuple[list[str], str]:
    """Massless prismatic joints ``<prefix>_<a>`` from ``base_link`` along each axis of ``axes``.

    The first task coordinates of a virtual chain (the platform's or nacelle's
    position); returns the URDF parts and the last link, the parent of what follows.
    """
    parts, parent = [], "base_link"
    for a in axes:
        link = f"{prefix}_{a}_link"
        parts.append(_link(link))
        parts.append(_joint(f"{prefix}_{a}", "prismatic", parent, link, axis={"x": "1 0 0", "y": "0 1 0", "z": "0 0 1"}[a]))
        parent = link
    return parts, parent


def _orientation_chain(parent: str, nominal: Nominal, child: str = "platform") -> list[str]:
    """Revolutes ``platform_yaw`` (z) -> ``platform_pitch`` (y) -> ``platform_roll`` (x) below ``parent``.

    The rotations of a spatial platform's virtual chain, R = Rz(yaw) Ry(pitch) Rx(roll) (the URDF
    rpy convention; gimbal lock at pitch = +-90 deg); the last link is ``child`` (with its body).
    """
    parts = []
    for name, axis, link in (("yaw", "0 0 1", "platform_yaw_link"), ("pitch", "0 1 0", "platform_pitch_link"),
                             ("roll", "1 0 0", child)):
        parts.append(_link(link, nominal.body(link)))
        parts.append(_joint(f"platform_{name}", "revolute", parent, link, axis=axis))
        parent = link
    return parts


def urdf(robot: PlanarRobot) -> str:
    nominal = robot.nominal
    out = [f'<?xml version="1.0"?>\n<!-- {robot.comment}\n     Generated by tools/generate_planar_urdf.py: edit that script, not this file. -->\n',
           f'<robot name="{robot.name}">\n', _link("base_link")]
    for i, leg in enumerate(robot.legs, start=1):
        out.append(_link(f"leg{i}_A"))
        out.append(_joint(f"leg{i}_A_marker", "fixed", "base_link", f"leg{i}_A", (*leg.base, 0.0)))
        out.append(_link(f"leg{i}_link1", nominal.body(f"leg{i}_link1")))
        out.append(_joint(f"leg{i}_joint1", "revolute", "base_link", f"leg{i}_link1", (*leg.base, 0.0),
                          drive=nominal.drive(f"leg{i}_joint1")))
        out.append(_link(f"leg{i}_link2", nominal.body(f"leg{i}_link2")))
        out.append(_joint(f"leg{i}_joint2", "revolute", f"leg{i}_link1", f"leg{i}_link2", (leg.lengths[0], 0.0, 0.0),
                          drive=nominal.drive(f"leg{i}_joint2")))
        out.append(_link(f"leg{i}_B"))
        out.append(_joint(f"leg{i}_B_marker", "fixed", f"leg{i}_link2", f"leg{i}_B"))
        tip_parent = f"leg{i}_link2"
        tip_offset = (leg.lengths[1], 0.0, 0.0)
        if leg.platform_joint:
            out.append(_link(f"leg{i}_link3", nominal.body(f"leg{i}_link3")))
            out.append(_joint(f"leg{i}_joint3", "revolute", f"leg{i}_link2", f"leg{i}_link3", tip_offset,
                              drive=nominal.drive(f"leg{i}_joint3")))
            tip_parent, tip_offset = f"leg{i}_link3", (0.0, 0.0, 0.0)
        out.append(_link(f"leg{i}_tip"))
        out.append(_joint(f"leg{i}_tip_marker", "fixed", tip_parent, f"leg{i}_tip", tip_offset))
        for name, parent in leg.extra.items():
            out.append(_link(name, nominal.body(name)))
            out.append(_joint(f"{name}_fixed", "fixed", parent, name))
    chain, last = _translation_chain("platform")
    out.extend(chain)
    out.append(_link("platform", nominal.body("platform")))
    out.append(_joint("platform_phi", "revolute", last, "platform") if robot.rotation
               else _joint("platform_fixed", "fixed", last, "platform"))
    for i, attachment in enumerate(robot.attachments, start=1):
        out.append(_link(f"platform_c{i}"))
        out.append(_joint(f"platform_c{i}_marker", "fixed", "platform", f"platform_c{i}", (*attachment.xy, 0.0), attachment.yaw))
    if robot.payload:
        out.append(_link("payload", nominal.body("payload")))
        out.append(_joint("payload_fixed", "fixed", "platform", "payload"))
    out.append("</robot>\n")
    return "".join(out)


def five_bar() -> PlanarRobot:
    # Our own design (no paper gives one): base joints 0.2 m apart, proximal
    # 0.2 m, distal 0.25 m, an end-effector body at the distal tips' junction.
    legs = [Leg(base=(x, 0.0), lengths=(0.2, 0.25), platform_joint=False) for x in (-0.1, 0.1)]
    return PlanarRobot(
        name="five_bar",
        comment="Planar 5R five-bar (pardyn's own dimensions, see config/robots/five_bar.yaml).",
        legs=legs, rotation=False, attachments=[], nominal=read_nominal("five_bar"),
    )


def dualv() -> PlanarRobot:
    # Briot et al. 2015, Table 1: A_i at radius 0.41 m, angles gamma_i; 0.28 m links.
    gammas = [15.52, 164.48, -164.48, -15.52]
    legs = [
        Leg(base=(0.41 * math.cos(math.radians(g)), 0.41 * math.sin(math.radians(g))), lengths=(0.28, 0.28),
            platform_joint=True)
        for g in gammas
    ]
    r_p = 0.1  # half platform length (not in the paper)
    # Legs 1, 2 attach at (0, r_p) in the platform frame and leg frame angle
    # phi + pi (eq. 53, k_bar = 1); legs 3, 4 at (0, -r_p) with angle phi.
    attachments = [Attachment((0.0, r_p), math.pi)] * 2 + [Attachment((0.0, -r_p), 0.0)] * 2
    return PlanarRobot(
        name="dualv",
        comment="DualV actuation-redundant planar parallel robot (Briot, Krut, Gautier 2015, Table 1).",
        legs=legs, rotation=True, attachments=attachments, payload=True, nominal=read_nominal("dualv"),
    )


def rrr3() -> PlanarRobot:
    # Zubizarreta et al. 2010, section 4.8.
    bases = [(-0.15, -0.84), (0.69, -0.17), (-0.66, 0.21)]
    d = 0.1732
    legs = [
        Leg(base=base, lengths=(0.5, 0.4), platform_joint=True,
            extra={f"leg{i}_sensor": f"leg{i}_link2"})  # encoder housing at B_i
        for i, base in enumerate(bases, start=1)
    ]
    # C_i = P - d (cos(theta + phi_i), sin(theta + phi_i)), phi_i = (4(i-1)+1) pi / 6 (eq. 28);
    # attachment frames keep the platform's orientation.
    attachments = []
    for i in range(1, 4):
        phi_i = (4 * (i - 1) + 1) * math.pi / 6
        attachments.append(Attachment((-d * math.cos(phi_i), -d * math.sin(phi_i)), 0.0))
    return PlanarRobot(
        name="rrr3",
        comment="3-RRR planar parallel robot (Zubizarreta et al. 2010, section 4.8).",
        legs=legs, rotation=True, attachments=attachments, payload=True, nominal=read_nominal("rrr3"),
    )


# Wu, Wang, Wang, Li 2009 (Mechatronics 19, 2009), Table 1, in m.
WU_GEOMETRY = {"d": 1.2, "l": 1.2, "l5": 0.25, "l6": 0.25}
WU_STRUT_LENGTH = 1.2  # nominal strut length (m), not in the paper: each strut part is half of it


def wu_urdf(name: str, struts: tuple[int, ...]) -> str:
    """The tree of ``wu3r`` (struts 1, 2) or ``wu3n`` (strut 2 only: E_1B_1 removed, no mass left).

    Column ``i`` stands at ``x = -d/2`` (i = 1) or ``+d/2`` (i = 2)::

        base_link --slider{i}_joint (prismatic y, q_i = height of E_i)--> slider{i}   # frame at E_i
          slider{i} --link{i}_joint (revolute at D_i = E_i + (0, l5))--> link{i}     # D_iA_1, x along it
          slider{i} --strut{i}_joint1 (revolute at E_i)--> strut{i}_upper          # part hinged at E_i
            strut{i}_upper --strut{i}_joint (prismatic x, l_i = |E_iB|)--> strut{i}_lower  # frame at B

    The platform is the virtual chain ``platform_x``, ``platform_y`` (A_1) and
    ``platform_alpha`` (revolute about -z: the paper's alpha turns clockwise,
    B = A_1 - l6 (sin alpha, cos alpha), eq. 20c), marker ``platform_B`` at
    ``(0, -l6)``. Inertials come from ``config/robots/<name>.yaml``.
    """
    g = WU_GEOMETRY
    nominal = read_nominal(name)
    comment = (f"Wu et al. 2009 3-DOF planar machine, {'redundant (4 actuators)' if len(struts) == 2 else 'non-redundant (strut E_1B_1 removed)'};"
               " see config/robots/" + name + ".yaml.")
    out = [f'<?xml version="1.0"?>\n<!-- {comment}\n     Generated by tools/generate_planar_urdf.py: edit that script, not this file. -->\n',
           f'<robot name="{name}">\n', _link("base_link")]
    for i, x_column in ((1, -g["d"] / 2), (2, g["d"] / 2)):
        slider = f"slider{i}"
        out.append(_link(slider, nominal.body(slider)))
        out.append(_joint(f"{slider}_joint", "prismatic", "base_link", slider, (x_column, 0.0, 0.0), axis="0 1 0",
                          drive=nominal.drive(f"{slider}_joint")))
        out.append(_link(f"{slider}_D"))
        out.append(_joint(f"{slider}_D_marker", "fixed", slider, f"{slider}_D", (0.0, g["l5"], 0.0)))
        out.append(_link(f"link{i}", nominal.body(f"link{i}")))
        out.append(_joint(f"link{i}_joint", "revolute", slider, f"link{i}", (0.0, g["l5"], 0.0)))
        out.append(_link(f"link{i}_tip"))
        out.append(_joint(f"link{i}_tip_marker", "fixed", f"link{i}", f"link{i}_tip", (g["l"], 0.0, 0.0)))
        if i not in struts:
            continue
        upper, lower = f"strut{i}_upper", f"strut{i}_lower"
        out.append(_link(upper, nominal.body(upper)))
        out.append(_joint(f"strut{i}_joint1", "revolute", slider, upper))
        out.append(_link(lower, nominal.body(lower)))
        out.append(_joint(f"strut{i}_joint", "prismatic", upper, lower, axis="1 0 0", drive=nominal.drive(f"strut{i}_joint")))
        out.append(_link(f"strut{i}_tip"))
        out.append(_joint(f"strut{i}_tip_marker", "fixed", lower, f"strut{i}_tip"))
        out.append(_link(f"strut{i}_axis"))  # a point on the strut axis, E_i -> B side (working mode)
        out.append(_joint(f"strut{i}_axis_marker", "fixed", upper, f"strut{i}_axis", (0.1, 0.0, 0.0)))
    chain, last = _translation_chain("platform")
    out.extend(chain)
    out.append(_link("platform", nominal.body("platform")))
    out.append(_joint("platform_alpha", "revolute", last, "platform", axis="0 0 -1"))
    out.append(_link("platform_B"))
    out.append(_joint("platform_B_marker", "fixed", "platform", "platform_B", (0.0, -g["l6"], 0.0)))
    out.append("</robot>\n")
    return "".join(out)


def main() -> None:
    for robot in (five_bar(), dualv(), rrr3()):
        path = ROOT / "urdf" / f"{robot.name}.urdf"
        path.write_text(urdf(robot))
        print(f"wrote {path.relative_to(ROOT)}")
    for name, struts in (("wu3r", (1, 2)), ("wu3n", (2,))):
        path = ROOT / "urdf" / f"{name}.urdf"
        path.write_text(wu_urdf(name, struts))
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
