"""The robot's tree written symbolically (CasADi SX) from its pinocchio model.

pinocchio's own CasADi interface is not in the PyPI wheel, so the tree is walked
here: ``model.parents``, ``model.jointPlacements``, ``model.joints`` (one-dof
revolute and prismatic joints about any axis), ``model.frames`` (fixed frames on
a joint), ``model.inertias``. Everything is built from explicit formulas, with no
automatic differentiation of a rotation logarithm::

    oMi = oMi[parent] * jointPlacements[i] * XJ(q_i)          # XJ: Rodrigues rotation or translation
    J_f[:, i] = [a_i x (p_f - o_i); a_i]   (revolute)           # world-aligned (LOCAL_WORLD_ALIGNED)
              = [a_i; 0]                    (prismatic)          # a_i: the joint axis in world axes

for every joint ``i`` supporting frame ``f``. The closure equations then follow
:mod:`pardyn.kinematics.closure` term by term (``e_pos = p_b - p_a``,
``e_rot = log3(R_b R_a^T)``, ``|p_b - p_a| - length``; rows of ``K`` = rows of
``J_b - J_a``, a distance row ``u^T (J_b - J_a)[:3]``).

The inverse dynamics is the recursive Newton-Euler algorithm (Featherstone 2008,
table 5.1) in joint frames, with the ten inertial parameters of every joint
(pinocchio order ``m, m c, I_o`` about the joint origin) as symbolic inputs: the
torques are linear in them, so the regressor is their exact Jacobian.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
import pinocchio as pin

from pardyn.kernels.joints import UnsupportedModel, joint_kind

__all__ = ["SymbolicTree", "UnsupportedModel", "joint_kind"]

def _skew(v):
    return ca.vertcat(
        ca.horzcat(0, -v[2], v[1]),
        ca.horzcat(v[2], 0, -v[0]),
        ca.horzcat(-v[1], v[0], 0),
    )


def _rodrigues(axis: np.ndarray, angle):
    """Rotation (3, 3) of ``angle`` rad about the unit ``axis``: ``I + sin K + (1 - cos) K^2``."""
    k = ca.DM(_np_skew(axis))
    return ca.DM.eye(3) + ca.sin(angle) * k + (1 - ca.cos(angle)) * (k @ k)


def _np_skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def log3(rotation):
    """Rotation vector (3,) of a rotation matrix, as pinocchio's ``log3`` away from a half turn.

    ``theta = atan2(|v|/2, (tr R - 1)/2)`` with ``v = vee(R - R^T)``; ``log3 = v/2 * theta/sin(theta)``,
    the ratio by its Taylor series ``1 + theta^2/6`` below sin(theta) = 1e-6 (closed loops sit at 0).
    """
    v = ca.vertcat(rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0], rotation[1, 0] - rotation[0, 1])
    sine = ca.sqrt(ca.dot(v, v)) / 2
    cosine = (rotation[0, 0] + rotation[1, 1] + rotation[2, 2] - 1) / 2
    theta = ca.atan2(sine, cosine)
    ratio = ca.if_else(sine < 1e-6, 1 + theta * theta / 6, theta / ca.fmax(sine, 1e-300))
    return v / 2 * ratio


@dataclass
class _Joint:
    kind: str
    axis: np.ndarray  # (3,) in the joint frame
    parent: int
    placement: pin.SE3
    index: int  # idx_v


class SymbolicTree:
    """Placements, world Jacobians and RNEA of a pinocchio model, in CasADi SX.

    Args:
        model: a pinocchio model whose joints are all one-dof revolute or prismatic
            (``nq == nv``); UnsupportedModel otherwise.
        q: (nv,) symbol of the configuration.
    """

    def __init__(self, model: pin.Model, q: ca.SX) -> None:
        if model.nq != model.nv:
            raise UnsupportedModel(f"nq = {model.nq} != nv = {model.nv} (continuous or multi-dof joints)")
        self.model = model
        self.q = q
        self.joints: list[_Joint | None] = [None]
        for j in range(1, model.njoints):
            joint = model.joints[j]
            if joint.nv != 1:
                raise UnsupportedModel(f"joint {model.names[j]!r} has {joint.nv} dof")
            kind, axis = joint_kind(joint)
            self.joints.append(_Joint(kind, axis / np.linalg.norm(axis), model.parents[j],
                                      model.jointPlacements[j], joint.idx_v))
        self.rotations = [ca.SX.eye(3)]  # oMi rotation (3, 3) per joint
        self.origins = [ca.SX.zeros(3)]
        self.local = [None]  # liMi (R, p) per joint
        for j in range(1, model.njoints):
            rotation, origin = self._local(j)
            parent = self.joints[j].parent
            self.local.append((rotation, origin))
            self.rotations.append(self.rotations[parent] @ rotation)
            self.origins.append(self.origins[parent] + self.rotations[parent] @ origin)

    def _local(self, j: int):
        joint = self.joints[j]
        placement_rotation = ca.DM(joint.placement.rotation)
        placement_origin = ca.DM(joint.placement.translation)
        angle = self.q[joint.index]
        if joint.kind == "revolute":
            return placement_rotation @ _rodrigues(joint.axis, angle), placement_origin
        return placement_rotation, placement_origin + placement_rotation @ ca.DM(joint.axis) * angle

    # ------------------------------------------------------------------ frames
    def frame_placement(self, frame_id: int):
        """World rotation (3, 3) and position (3,) of a frame."""
        frame = self.model.frames[frame_id]
        joint = frame.parentJoint
        rotation = self.rotations[joint] @ ca.DM(frame.placement.rotation)
        position = self.origins[joint] + self.rotations[joint] @ ca.DM(frame.placement.translation)
        return rotation, position

    def frame_jacobian(self, frame_id: int):
        """World-aligned frame Jacobian (6, nv) (pinocchio's LOCAL_WORLD_ALIGNED)."""
        model = self.model
        _, position = self.frame_placement(frame_id)
        columns = [ca.SX.zeros(6) for _ in range(model.nv)]
        for j in model.supports[model.frames[frame_id].parentJoint]:
            if j == 0:
                continue
            joint = self.joints[j]
            axis = self.rotations[j] @ ca.DM(joint.axis)
            if joint.kind == "revolute":
                columns[joint.index] = ca.vertcat(ca.cross(axis, position - self.origins[j]), axis)
            else:
                columns[joint.index] = ca.vertcat(axis, ca.SX.zeros(3))
        return ca.horzcat(*columns)

    # ---------------------------------------------------------------- dynamics
    def rnea(self, qdot: ca.SX, qddot: ca.SX, inertial: ca.SX, gravity: ca.SX) -> ca.SX:
        """Tree joint efforts (nv,) without drive terms; ``inertial`` (10 (njoints - 1),) pinocchio-ordered
        ``[m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` per joint (about the joint origin), ``gravity`` (3,)."""
        model = self.model
        n = model.njoints
        velocity = [(ca.SX.zeros(3), ca.SX.zeros(3))]  # (linear, angular) in the joint frame
        acceleration = [(-gravity, ca.SX.zeros(3))]
        forces = [None] * n
        for j in range(1, n):
            joint = self.joints[j]
            rotation, origin = self.local[j]
            transpose = rotation.T
            v_parent, w_parent = velocity[joint.parent]
            a_parent, b_parent = acceleration[joint.parent]
            axis = ca.DM(joint.axis)
            qd, qdd = qdot[joint.index], qddot[joint.index]
            # X v: linear R^T (v + w x p), angular R^T w
            v = transpose @ (v_parent + ca.cross(w_parent, origin))
            w = transpose @ w_parent
            a = transpose @ (a_parent + ca.cross(b_parent, origin))
            b = transpose @ b_parent
            if joint.kind == "revolute":
                s_lin, s_ang = ca.DM.zeros(3), axis
            else:
                s_lin, s_ang = axis, ca.DM.zeros(3)
            v = v + s_lin * qd
            w = w + s_ang * qd
            # a += S qdd + v x (S qd): linear w x s_lin + v x s_ang, angular w x s_ang
            a = a + s_lin * qdd + ca.cross(w, s_lin * qd) + ca.cross(v, s_ang * qd)
            b = b + s_ang * qdd + ca.cross(w, s_ang * qd)
            velocity.append((v, w))
            acceleration.append((a, b))
            p = inertial[10 * (j - 1): 10 * j]
            mass, first = p[0], p[1:4]
            inertia = ca.vertcat(ca.horzcat(p[4], p[5], p[7]), ca.horzcat(p[5], p[6], p[8]),
                                 ca.horzcat(p[7], p[8], p[9]))

            def spatial(lin, ang):  # I (lin, ang): (m lin - mc x ang, mc x lin + I ang)
                return mass * lin - ca.cross(first, ang), ca.cross(first, lin) + inertia @ ang

            f_a, n_a = spatial(a, b)
            f_v, n_v = spatial(v, w)
            forces[j] = [f_a + ca.cross(w, f_v), n_a + ca.cross(w, n_v) + ca.cross(v, f_v)]
        torques = [None] * model.nv
        for j in range(n - 1, 0, -1):
            joint = self.joints[j]
            force, moment = forces[j]
            axis = ca.DM(joint.axis)
            torques[joint.index] = ca.dot(axis, moment) if joint.kind == "revolute" else ca.dot(axis, force)
            if joint.parent > 0:
                rotation, origin = self.local[j]
                f_parent = rotation @ force
                forces[joint.parent][0] += f_parent
                forces[joint.parent][1] += rotation @ moment + ca.cross(origin, f_parent)
        return ca.vertcat(*torques)
