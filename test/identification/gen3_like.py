"""A 7-joint arm with a Kinova Gen3's layout, written here (issue 40's reproduction).

Kinematics of the Gen3's published description as far as identification cares (alternating
joint axes, links of 0.13-0.21 m, home at zero: the arm straight up, a singular pose where
joints 1, 3, 5 and 7 are aligned); masses and centres of mass of its size (rounded values of
ours, diagonal inertias at the centre of mass). Joints 1, 3, 5, 7 continuous, 2, 4, 6 limited,
as on the arm.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

JOINTS = [f"joint_{k}" for k in range(1, 8)]
LINKS = ["base_link", "shoulder_link", "half_arm_1_link", "half_arm_2_link", "forearm_link",
         "spherical_wrist_1_link", "spherical_wrist_2_link", "bracelet_link"]
# joint origin in its parent link: xyz (m), rpy (rad)
# (the angles written to 4 decimals as the maker's file does: 3.1416 is pi + 7e-6, so columns that the
# structure makes zero or dependent are so only up to ~1e-5 of their scale)
ORIGINS = [((0, 0, 0.1564), (3.1416, 0, 0)), ((0, 0.0054, -0.1284), (1.5708, 0, 0)),
           ((0, -0.2104, -0.0064), (-1.5708, 0, 0)), ((0, 0.0064, -0.2104), (1.5708, 0, 0)),
           ((0, -0.2084, -0.0064), (-1.5708, 0, 0)), ((0, 0.0002, -0.1059), (1.5708, 0, 0)),
           ((0, -0.1059, -0.0002), (-1.5708, 0, 0))]
LIMITS = {1: 2.41, 3: 2.66, 5: 2.23}  # index in JOINTS -> |q| limit (rad); the others continuous
# mass (kg), centre of mass (m), principal moments at the centre of mass (kg m^2)
INERTIALS = [(1.70, (0, 0, 0.05), (0.0050, 0.0050, 0.0040)),
             (1.38, (0, -0.0104, -0.0734), (0.0046, 0.0048, 0.0014)),
             (1.16, (0, -0.0996, -0.0133), (0.0111, 0.0011, 0.0113)),
             (1.16, (0, -0.0066, -0.1179), (0.0109, 0.0111, 0.0010)),
             (0.93, (0, -0.0751, -0.0159), (0.0085, 0.0015, 0.0086)),
             (0.68, (0, -0.0096, -0.0706), (0.0017, 0.0017, 0.0006)),
             (0.68, (0, -0.0448, -0.0099), (0.0016, 0.0004, 0.0017)),
             (0.50, (0, -0.0093, -0.0321), (0.0006, 0.0007, 0.0005))]


def urdf(*, inertias: dict[str, tuple[float, float, float]] | None = None) -> str:
    """The URDF text; ``inertias`` replaces a link's principal moments (a non-physical one, issue 40 item 6)."""
    inertias = inertias or {}
    parts = ['<robot name="gen3_like">']
    for link, (mass, com, moments) in zip(LINKS, INERTIALS):
        xx, yy, zz = inertias.get(link, moments)
        parts.append(f'<link name="{link}"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}"/>'
                     f'<mass value="{mass}"/><inertia ixx="{xx}" iyy="{yy}" izz="{zz}" ixy="0" ixz="0" iyz="0"/>'
                     '</inertial></link>')
    for k, (joint, (xyz, rpy)) in enumerate(zip(JOINTS, ORIGINS)):
        kind = "revolute" if k in LIMITS else "continuous"
        limit = (f'<limit lower="{-LIMITS[k]}" upper="{LIMITS[k]}" effort="39" velocity="1.4"/>' if k in LIMITS
                 else '<limit effort="39" velocity="1.4"/>')
        parts.append(f'<joint name="{joint}" type="{kind}"><parent link="{LINKS[k]}"/><child link="{LINKS[k + 1]}"/>'
                     f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
                     f'<axis xyz="0 0 1"/>{limit}</joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def write_robot(folder: Path, **options) -> Path:
    """``folder/gen3.urdf`` and the smallest description a user writes around it; returns the YAML's path."""
    (folder / "gen3.urdf").write_text(urdf(**options))
    description = folder / "gen3.yaml"
    description.write_text(f"name: gen3_like\nurdf: gen3.urdf\ntask: actuated\nactuated: {JOINTS}\n")
    return description


def sinusoids(duration_s: float, rate_hz: float, amplitude: float, seed: int = 0,
              moving: tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """t, q, qdot, qddot of sinusoids of ``amplitude`` (rad) on every joint (or on ``moving``), from zero,
    each joint at its own frequency (0.2-0.5 Hz) and phase."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(duration_s * rate_hz))) / rate_hz
    omega = 2 * np.pi * rng.uniform(0.2, 0.5, len(JOINTS))
    phase = rng.uniform(0, 2 * np.pi, len(JOINTS))
    scale = np.full(len(JOINTS), amplitude)
    if moving is not None:
        scale[[k for k in range(len(JOINTS)) if k not in moving]] = 0.0
    q = scale * (np.sin(omega * t[:, None] + phase) - np.sin(phase))
    qdot = scale * omega * np.cos(omega * t[:, None] + phase)
    qddot = -scale * omega**2 * np.sin(omega * t[:, None] + phase)
    return t, q, qdot, qddot
