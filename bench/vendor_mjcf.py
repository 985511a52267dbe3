#!/usr/bin/env python3
"""A vendor's MJCF, unedited, against MuJoCo's own model of it (the figures of README "A vendor's MJCF gripper").

    python bench/vendor_mjcf.py gripper.yaml        # a pardyn YAML whose urdf: names the vendor's MJCF
    python bench/vendor_mjcf.py 2f85_v4.xml         # or the MJCF itself when it loads alone

Prints, over the actuated range: MuJoCo's equality residuals (``efc_pos``) at pardyn's configurations; pardyn's
velocity map against the null space of MuJoCo's equality Jacobian (``efc_J``) and the locked joints; pardyn's
inverse dynamics against ``mj_inverse`` of the tree (constraints off) mapped through that null space (virtual
work; accelerations from central differences of pardyn's forward solutions, step 1e-4); then pardyn's MuJoCo
plant against the vendor's model under the same constant torque on the first actuated joint (vendor actuators
switched off, its soft equalities and limits as written). Mesh geoms are taken out of MuJoCo's reference when
their files are absent (pardyn does the same, and refuses when a moving body takes its mass from one).
Without an argument it says what it needs and exits (``make bench`` has no vendor file).
"""

from __future__ import annotations

import sys
import warnings

import mujoco
import numpy as np

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.plants.mujoco_plant import MujocoPlant


def vendor_model(path: str) -> mujoco.MjModel:
    try:
        return mujoco.MjModel.from_xml_path(path)
    except ValueError:  # meshes absent
        spec = mujoco.MjSpec.from_file(path)
        for geom in [g for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_MESH]:
            spec.delete(geom)
        for mesh in list(spec.meshes):
            spec.delete(mesh)
        return spec.compile()


def equality_jacobian(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    jacobian = np.zeros((data.nefc, model.nv))
    if mujoco.mj_isSparse(model):
        mujoco.mju_sparse2dense(jacobian, data.efc_J, data.efc_J_rownnz, data.efc_J_rowadr, data.efc_J_colind)
    else:
        jacobian[:] = data.efc_J[: data.nefc * model.nv].reshape(data.nefc, model.nv)
    return jacobian[data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("bench/vendor_mjcf.py: give a pardyn YAML around a vendor MJCF (or the MJCF); nothing to do without one")
        return 0
    warnings.simplefilter("ignore")
    robot = pardyn.load_robot(argv[1])
    source = robot.description.urdf
    model, closed = vendor_model(str(source)), vendor_model(str(source))
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT  # the tree's inverse dynamics
    data, closed_data = mujoco.MjData(model), mujoco.MjData(closed)
    dof = {model.joint(j).name: int(model.jnt_dofadr[j]) for j in range(model.njnt)}
    mine = [dof[name] for name in robot.joint_names]
    locked = np.eye(model.nv)[[dof[name] for name in robot.locked_joints]]
    actuated = [dof[name] for name in robot.actuated_names]
    dynamics = InverseDynamics(robot)
    lower = robot.model.lowerPositionLimit[robot.actuated_indices]
    upper = robot.model.upperPositionLimit[robot.actuated_indices]
    worst = {"equality": 0.0, "map": 0.0, "torque": 0.0}
    rng = np.random.default_rng(0)
    q = robot.home
    for fraction in np.linspace(0.1, 0.9, 9):
        a = lower + fraction * (upper - lower)
        q = robot.solve_forward(a, start=q).q
        closed_data.qpos[:] = 0.0
        for name, value in robot.locked_joints.items():
            closed_data.qpos[dof[name]] = value
        closed_data.qpos[mine] = q
        mujoco.mj_forward(closed, closed_data)
        equality = closed_data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        worst["equality"] = max(worst["equality"], float(np.abs(closed_data.efc_pos[equality]).max()))
        vt = np.linalg.svd(np.vstack([equality_jacobian(closed, closed_data), locked]))[2]
        null = vt[-len(robot.actuated_names):].T  # (nv, n_a): the loop's motions (mobility = n_a)
        velocity_map = null @ np.linalg.inv(null[actuated])  # dq/dq_a
        step = 1e-4
        columns = []
        a_dot, a_ddot = rng.uniform(-1.0, 1.0, len(a)), rng.uniform(-2.0, 2.0, len(a))
        for k in range(len(a)):
            e = np.eye(len(a))[k] * step
            plus, minus = robot.solve_forward(a + e, start=q).q, robot.solve_forward(a - e, start=q).q
            columns.append((plus - minus) / (2 * step))
        slope = np.array(columns).T  # (nv, n_a)
        direction = robot.solve_forward(a + step * a_dot, start=q).q, robot.solve_forward(a - step * a_dot, start=q).q
        curvature = (direction[0] - 2 * q + direction[1]) / step**2
        worst["map"] = max(worst["map"], float(np.abs(slope - velocity_map[mine]).max()))
        qdot, qddot = slope @ a_dot, slope @ a_ddot + curvature
        data.qpos[:], data.qvel[:], data.qacc[:] = closed_data.qpos, 0.0, 0.0
        data.qvel[mine], data.qacc[mine] = qdot, qddot
        mujoco.mj_inverse(model, data)
        expected = velocity_map.T @ data.qfrc_inverse
        got = dynamics.torques(q, qdot, qddot)
        worst["torque"] = max(worst["torque"], float(np.linalg.norm(got - expected) / np.linalg.norm(expected)))
    print(f"{robot.name} ({source.name}): {robot.model.nv} joints, {len(robot.locked_joints)} locked, "
          f"{robot.structure.rank} closure rows")
    print(f"  MuJoCo's equality residual at pardyn's configurations: max {worst['equality']:.1e}")
    print(f"  velocity map against MuJoCo's constraint null space:   max {worst['map']:.1e}")
    print(f"  inverse dynamics against mj_inverse through the loop:   relative {worst['torque']:.1e}")

    plant = MujocoPlant(robot)
    vendor = vendor_model(str(source))
    vendor.actuator_gainprm[:], vendor.actuator_biasprm[:] = 0.0, 0.0
    vendor.opt.timestep = 1e-4
    state = mujoco.MjData(vendor)
    for name, value in robot.locked_joints.items():
        state.qpos[dof[name]] = value
    state.qpos[mine] = robot.home
    torque = np.zeros(len(robot.actuated_names))
    torque[0] = 0.3  # N m (N): a gripper's driver, for a few tenths of a second
    first = robot.actuated_indices[0]
    for k in range(1, 6):
        sample = plant.step(torque, 0.05)
        for _ in range(500):
            state.qfrc_applied[:] = 0.0
            state.qfrc_applied[actuated[0]] = torque[0]
            mujoco.mj_step(vendor, state)
        residual = np.abs(robot.closures.residual(sample.q)).max()
        print(f"  t = {0.05 * k:.2f} s under {torque[0]:g} N m (N): plant {sample.q[first]:.5f}, vendor's model "
              f"{state.qpos[actuated[0]]:.5f} rad (m); plant closure residual {residual:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
