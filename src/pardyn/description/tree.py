"""What every translation of the pinocchio tree needs: joint kinds and axes, link names, planar inertias.

Shared by the MuJoCo plant (:mod:`pardyn.plants.mujoco_plant`) and the SDF export
(:mod:`pardyn.export`), which both write one simulator body per pinocchio joint.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pardyn.errors import DescriptionError

__all__ = ["joint_axis", "link_names", "plane_normals", "physical_inertia", "satisfies_triangle"]

_AXIS_JOINTS = {
    "RX": ("revolute", (1.0, 0.0, 0.0)),
    "RY": ("revolute", (0.0, 1.0, 0.0)),
    "RZ": ("revolute", (0.0, 0.0, 1.0)),
    "PX": ("prismatic", (1.0, 0.0, 0.0)),
    "PY": ("prismatic", (0.0, 1.0, 0.0)),
    "PZ": ("prismatic", (0.0, 0.0, 1.0)),
}


def joint_axis(model: pin.Model, joint_id: int) -> tuple[str, np.ndarray]:
    """(``revolute`` | ``prismatic``, unit axis (3,) in the joint frame) of a one-dof pinocchio joint."""
    joint = model.joints[joint_id]
    short = joint.shortname()
    suffix = short.removeprefix("JointModel")
    if suffix in _AXIS_JOINTS:
        kind, axis = _AXIS_JOINTS[suffix]
        return kind, np.array(axis)
    if suffix in ("RevoluteUnaligned", "PrismaticUnaligned"):
        axis = np.asarray(joint.extract().axis, dtype=float)
        return ("revolute" if suffix.startswith("Revolute") else "prismatic"), axis / np.linalg.norm(axis)
    raise DescriptionError(
        f"joint {model.names[joint_id]!r}: pinocchio type {short} is not a revolute or prismatic joint "
        "(the only joints pardyn translates to simulators)"
    )


def link_names(model: pin.Model) -> list[str]:
    """The link (body) name of each pinocchio joint (index 0: ``world``): the URDF child link when known."""
    names = ["world"]
    used: set[str] = set()
    for joint_id in range(1, model.njoints):
        name = model.names[joint_id]
        for frame in model.frames:
            if (
                frame.type == pin.FrameType.BODY
                and frame.parentJoint == joint_id
                and model.frames[frame.parentFrame].type == pin.FrameType.JOINT
                and model.frames[frame.parentFrame].parentJoint == joint_id
            ):
                name = frame.name
                break
        if name in used:
            name = f"{name}_{model.names[joint_id]}"
        used.add(name)
        names.append(name)
    return names


def plane_normals(model: pin.Model) -> list[np.ndarray | None]:
    """For a planar tree (all revolute axes parallel in the world), the common axis in each joint frame.

    Such a tree's bodies only rotate about that axis ``n``, so their inertia about
    the axes normal to ``n`` never enters the dynamics. ``None`` entries when the
    tree is not planar.
    """
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    axes = []
    for joint_id in range(1, model.njoints):
        kind, axis = joint_axis(model, joint_id)
        if kind == "revolute":
            axes.append(data.oMi[joint_id].rotation @ axis)
    if not axes or any(np.linalg.norm(np.cross(axes[0], a)) > 1e-9 for a in axes):
        return [None] * model.njoints
    return [data.oMi[j].rotation.T @ axes[0] for j in range(model.njoints)]


def satisfies_triangle(inertia: np.ndarray) -> bool:
    """Principal moments ``A + B >= C`` (a rigid body's inertia about its centre of mass)."""
    a, b, c = np.linalg.eigvalsh(inertia)
    return bool(a + b >= c * (1.0 + 1e-9))


def nearest_physical_inertia(inertia: np.ndarray) -> np.ndarray:
    """The rotational inertia (3, 3) nearest to ``inertia`` (Frobenius norm) whose principal moments satisfy
    ``A + B >= C``: in the principal axes, ``(A, B, C)`` projected on the plane ``A + B = C``
    (``A, B`` raised and ``C`` lowered by ``(C - A - B) / 3`` each), a hair inside; the axes are kept."""
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    a, b, c = moments
    shift = (c - a - b) / 3.0 * (1.0 + 1e-9)
    return axes @ np.diag([a + shift, b + shift, c - shift]) @ axes.T


def physical_inertia(inertia: np.ndarray, normal: np.ndarray | None, body: str, *,
                     nearest: bool = False) -> np.ndarray:
    """Make a rotational inertia (3, 3) satisfy the triangle inequality ``A + B >= C``.

    The planar robots' YAML gives e.g. the platform ``xx = yy = 1e-4``,
    ``zz = 0.0206`` kg m^2 (only ``zz`` enters planar dynamics), which no rigid body
    has and MuJoCo, libsdformat and Gazebo refuse. For a planar tree with rotation
    axis ``n`` (body frame) the inertia ``I + delta (E - n n^T)`` has the same
    angular momentum ``I omega`` for every ``omega`` along ``n``, hence the same
    dynamics: ``delta`` is raised until the inequality holds. For non-planar trees
    (``normal`` None) the inertia is rejected -- or, ``nearest`` (a simulated plant: a maker's URDF whose
    ``shoulder_link`` has ``0.000419 + 0.005017 < 0.015117``), replaced by :func:`nearest_physical_inertia`
    with one warning naming the body and the change (the dynamics then differ from the description's).
    """
    if satisfies_triangle(inertia):
        return inertia
    if normal is None:
        a, b, c = np.linalg.eigvalsh(inertia)
        if a + b >= c * (1.0 - 1e-9):  # a thin plate (A + B = C) up to rounding: the simulator judges
            return inertia
        if nearest:
            corrected = nearest_physical_inertia(inertia)
            import warnings  # noqa: PLC0415

            warnings.warn(
                f"body {body!r}: principal moments {[float(f'{m:.4g}') for m in (a, b, c)]} kg m^2 violate "
                f"A + B >= C (no rigid body has them); the plant simulates the nearest physical inertia, "
                f"{[float(f'{m:.4g}') for m in np.linalg.eigvalsh(corrected)]} kg m^2 (each moment moved by "
                f"{(c - a - b) / 3:.3g}, {100 * np.linalg.norm(corrected - inertia) / np.linalg.norm(inertia):.3g} % "
                "of the inertia)", stacklevel=3)
            return corrected
        raise DescriptionError(
            f"body {body!r}: inertia {np.diag(inertia).tolist()} (principal moments "
            f"{np.linalg.eigvalsh(inertia).tolist()}) violates A + B >= C, which simulators refuse; "
            "give physical inertias"
        )
    a, b, c = np.linalg.eigvalsh(inertia)
    delta = 0.5 * (c - a - b) + 1e-9 * c
    normal_part = np.eye(3) - np.outer(normal, normal)
    while not satisfies_triangle(inertia + delta * normal_part):
        delta *= 2.0
    return inertia + delta * normal_part
