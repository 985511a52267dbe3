"""The exported mechanism moves like pardyn's robot: libsdformat's read-back simulated by pinocchio.

From what libsdformat resolves (links, inertials, tree joints, loop welds) this builds a
pinocchio model (free links on free-flyer joints, ball and universal joints as such) with
the welds as 6-D rigid constraints, and compares pinocchio's ``constraintDynamics`` at
home with pardyn's closed-loop forward dynamics for the same actuator torques: every
joint of the robot the SDF keeps must get the same acceleration. The session's export uses
tiny placeholder masses (conftest), so that what is compared is the mechanism (free
platform, guides, pins, rods, couplers, rotor disks, completed planar inertias), not the
placeholders.
"""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics.forward import ForwardDynamics
from pardyn.resources import list_robots

def _se3(pose: dict) -> pin.SE3:
    w, x, y, z = pose["quaternion"]
    return pin.SE3(pin.Quaternion(w, x, y, z).normalized().matrix(), np.array(pose["position"]))


def _frame_with_z(axis: np.ndarray) -> np.ndarray:
    z = axis / np.linalg.norm(axis)
    x = np.cross(np.eye(3)[int(np.argmin(np.abs(z)))], z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def pinocchio_from_sdf(sdf: dict, gravity: np.ndarray) -> tuple[pin.Model, list]:
    """A pinocchio model of the SDF tree (joint frames at the joints, link axes) and its welds as constraints."""
    links = {link["name"]: link for link in sdf["links"]}
    tree = [joint for joint in sdf["joints"] if joint["type"] != "fixed"]
    welds = [joint for joint in sdf["joints"] if joint["type"] == "fixed"]
    parent_joint = {joint["child_link"]: joint for joint in tree}
    assert len(parent_joint) == len(tree), "a link with two parent joints in the tree"
    model = pin.Model()
    model.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
    placed: dict[str, tuple[int, pin.SE3]] = {"world": (0, pin.SE3.Identity())}

    def add(name: str) -> tuple[int, pin.SE3]:
        if name in placed:
            return placed[name]
        link = links[name]
        link_pose = _se3(link["pose"])
        joint = parent_joint.get(name)
        if joint is None:  # free body (a child of the world in ``children``)
            parent_id, parent_pose, joint_pose = 0, pin.SE3.Identity(), link_pose
            joint_model, joint_name = pin.JointModelFreeFlyer(), f"{name}_free"
        else:
            parent_id, parent_pose = add(joint["parent_link"])
            position = _se3(joint["pose"]).translation
            if joint["type"] in ("revolute", "prismatic"):  # joint frame with z along the axis: RZ, PZ
                joint_pose = pin.SE3(_frame_with_z(np.array(joint["axis"]["xyz"])), position)
                joint_model = pin.JointModelRZ() if joint["type"] == "revolute" else pin.JointModelPZ()
            else:
                joint_pose = pin.SE3(link_pose.rotation, position)
                local = [joint_pose.rotation.T @ np.array(joint[key]["xyz"]) for key in ("axis", "axis2") if joint[key]]
                joint_model = pin.JointModelSpherical() if joint["type"] == "ball" else \
                    pin.JointModelUniversal(local[0], local[1])
            joint_name = joint["name"]
        joint_id = model.addJoint(parent_id, joint_model, parent_pose.inverse() * joint_pose, joint_name)
        inertial = _se3(link["inertial_pose"])
        moment = inertial.rotation @ np.array(link["moi"]).reshape(3, 3) @ inertial.rotation.T
        inertia = pin.Inertia(link["mass"], inertial.translation, moment)
        model.appendBodyToJoint(joint_id, (joint_pose.inverse() * link_pose).act(inertia), pin.SE3.Identity())
        placed[name] = (joint_id, joint_pose)
        return placed[name]

    # depth first: pinocchio's algorithms (CRBA) need every subtree's joints contiguous
    children: dict[str, list[str]] = {}
    for name in links:
        parent = parent_joint[name]["parent_link"] if name in parent_joint else "world"
        children.setdefault(parent, []).append(name)

    def visit(name: str) -> None:
        for child in children.get(name, []):
            add(child)
            visit(child)

    visit("world")
    assert set(placed) == {"world", *links}
    constraints = []
    for weld in welds:
        pose = _se3(weld["pose"])
        parent_id, parent_pose = placed[weld["parent_link"]]
        child_id, child_pose = placed[weld["child_link"]]
        constraints.append(pin.RigidConstraintModel(
            pin.ContactType.CONTACT_6D, model, parent_id, parent_pose.inverse() * pose,
            child_id, child_pose.inverse() * pose, pin.ReferenceFrame.LOCAL))
    return model, constraints


@pytest.mark.parametrize("name", list_robots())
def test_accelerations_match_pardyns_forward_dynamics(name, exported, libsdformat):
    _, paths = exported[name]
    summary = json.loads(paths["summary"].read_text())
    sdf = libsdformat[paths["model"]]
    assert sdf["errors"] == []
    (model_sdf,) = sdf["models"]
    robot = pardyn.load_robot(name)
    params = robot.nominal_parameters
    # what SDF cannot hold is left out of the reference too (wu3r/wu3n counterweights)
    left_out = {f"{p}_{d.joint}": 0.0 for d in params.drives for p in ("ia", "offset")
                if d.joint not in summary["rotor_disks_kg_m2"]}
    params = params.with_values(left_out)
    tau = np.linspace(0.5, -0.7, len(robot.actuated_names)) * (10.0 if name == "ur5e" else 1.0)
    reference = ForwardDynamics(robot, params).accelerations(robot.home, np.zeros(robot.nv), tau)

    model, constraints = pinocchio_from_sdf(model_sdf, params.gravity)
    data = model.createData()
    datas = pin.StdVec_RigidConstraintData([c.createData() for c in constraints])
    constraints = pin.StdVec_RigidConstraintModel(constraints)
    effort = np.zeros(model.nv)
    for name_a, value in zip(robot.actuated_names, tau):
        effort[model.joints[model.getJointId(name_a)].idx_v] = value
    q0, v0 = pin.neutral(model), np.zeros(model.nv)
    if constraints:
        pin.initConstraintDynamics(model, data, constraints, datas)
        settings = pin.ProximalSettings(1e-13, 1e-13, 1e-10, 500)  # absolute, relative accuracy, mu, max_iter
        acceleration = pin.constraintDynamics(model, data, q0, v0, effort, constraints, datas, settings)
    else:
        acceleration = pin.aba(model, data, q0, v0, effort)
    compared = 0
    scale = np.abs(reference).max()
    for index, joint_name in enumerate(robot.joint_names):
        if not model.existJointName(joint_name):
            assert joint_name in summary["dropped_virtual_joints"]
            continue
        got = acceleration[model.joints[model.getJointId(joint_name)].idx_v]
        assert got == pytest.approx(reference[index], abs=1e-5 * scale), joint_name
        compared += 1
    assert compared >= len(robot.measured_names)
