"""Closed-loop kinematics and dynamics of Gepetto's robots against pinocchio's constraint machinery.

The reference is built the way Gepetto's ``example_parallel_robots/loader_tools.py``
builds it: the unedited URDF, one ``RigidConstraintModel`` per ``closed_loop``
frame pair (CONTACT_6D / CONTACT_3D, LOCAL reference frame, each frame's
placement in its parent joint), ``constraintDynamics``. Pardyn's answers
live on its own tree (loop-cut placeholder half-joints locked, see
``pardyn.kinematics.structure``): they are embedded into the full tree with the
locked joints at their locked values, and pinocchio's accelerations are
compared after removing their component along the internal motions of the
full tree.

The placeholders are massless for pardyn (the dataset's README). With exactly
massless placeholders the full tree's constraint dynamics is singular and
``constraintDynamics`` returns NaN (measured); the reference gives them a
sphere of ``PLACEHOLDER_MASS_KG`` instead: the difference to the massless
limit shrinks linearly with that mass (measured: 1e-7, 1e-9, 1e-11 relative for
1e-6, 1e-8, 1e-10 kg on ``5bar_linkage``; 4e-4, 4e-6, 4e-8 on ``robot_delta``,
whose links weigh grams).

Reads ``../shared/datasets/gepetto_parallel_robots`` in place.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.dynamics.forward import ForwardDynamics

ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "gepetto_parallel_robots"
pytestmark = pytest.mark.skipif(not ROOT.is_dir(), reason=f"shared datasets absent: {ROOT} not found")

ALL = ["5bar_linkage", "5bar_linkage_iso3d", "robot_delta", "cassie_like", "digit_like"]
PLACEHOLDER_MASS_KG = 1e-14
LOCKED_OR_NONE = ["5bar_linkage", "5bar_linkage_iso3d", "robot_delta"]  # no internal motion with inertia


class Reference:
    """Pinocchio's full tree and rigid constraints from Gepetto's files."""

    def __init__(self, name: str, robot: pardyn.Robot) -> None:
        folder = ROOT / name
        self.model = pin.buildModelFromUrdf(str(folder / "robot.urdf"))
        for link in robot.description.massless_links:  # nearly massless placeholders (module docstring)
            joint = self.model.frames[self.model.getFrameId(link)].parentJoint
            self.model.inertias[joint] = pin.Inertia.FromSphere(PLACEHOLDER_MASS_KG, 0.01)
        self.data = self.model.createData()
        raw = yaml.safe_load((folder / "robot.yaml").read_text())
        self.constraints = []
        for (a, b), kind in zip(raw["closed_loop"], raw["type"]):
            frame_a, frame_b = (self.model.frames[self.model.getFrameId(n)] for n in (a, b))
            self.constraints.append(pin.RigidConstraintModel(
                pin.ContactType.CONTACT_6D if kind == "6d" else pin.ContactType.CONTACT_3D,
                self.model, frame_a.parentJoint, frame_a.placement, frame_b.parentJoint, frame_b.placement,
                pin.ReferenceFrame.LOCAL,
            ))
        self.constraints = pin.StdVec_RigidConstraintModel(self.constraints)
        self.constraint_datas = pin.StdVec_RigidConstraintData([c.createData() for c in self.constraints])
        self.names = list(self.model.names[1:])
        self.robot = robot
        self.kept = [self.names.index(n) for n in robot.joint_names]
        self.locked = [self.names.index(n) for n in robot.locked_joints]
        self.locked_values = np.array(list(robot.locked_joints.values()))
        self.motors = [self.names.index(n) for n in robot.actuated_names]

    def embed(self, x: np.ndarray, locked: np.ndarray | float) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.kept] = x
        out[self.locked] = locked
        return out

    def residual(self, q: np.ndarray) -> float:
        pin.forwardKinematics(self.model, self.data, q)
        worst = 0.0
        for c in self.constraints:
            placement_a = self.data.oMi[c.joint1_id] * c.joint1_placement
            placement_b = self.data.oMi[c.joint2_id] * c.joint2_placement
            relative = placement_a.actInv(placement_b)
            error = pin.log6(relative).vector if c.type == pin.ContactType.CONTACT_6D else relative.translation
            worst = max(worst, float(np.abs(error).max()))
        return worst

    def internal_motions(self, q: np.ndarray) -> np.ndarray:
        """Null space of [constraint Jacobian; motor selection] on the full tree (nv, k)."""
        pin.computeAllTerms(self.model, self.data, q, np.zeros(self.model.nv))
        pin.initConstraintDynamics(self.model, self.data, self.constraints, self.constraint_datas)
        jacobian = pin.getConstraintsJacobian(self.model, self.data, self.constraints, self.constraint_datas)
        selection = np.eye(self.model.nv)[self.motors]
        _, s, vt = np.linalg.svd(np.vstack([jacobian, selection]))
        return vt[int(np.sum(s > 1e-9 * s[0])):].T

    def accelerations(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
        settings = pin.ProximalSettings(1e-14, 1e-12, 100)
        pin.initConstraintDynamics(self.model, self.data, self.constraints, self.constraint_datas)
        acceleration = pin.constraintDynamics(
            self.model, self.data, q, v, tau, self.constraints, self.constraint_datas, settings
        ).copy()
        assert np.all(np.isfinite(acceleration)), "pinocchio's constraintDynamics returned non-finite values"
        return acceleration

    def comparable(self, q: np.ndarray, acceleration: np.ndarray) -> np.ndarray:
        """The acceleration with its internal-motion component chosen so that the locked joints do not move."""
        motions = self.internal_motions(q)
        if not self.locked or motions.shape[1] == 0:
            return acceleration[self.kept]
        shift = np.linalg.lstsq(motions[self.locked], acceleration[self.locked], rcond=None)[0]
        return (acceleration - motions @ shift)[self.kept]


@pytest.fixture(scope="module")
def robots():
    return {name: pardyn.load_robot(ROOT / name / "robot.yaml") for name in ALL}


def _motor_samples(robot: pardyn.Robot, count: int, rng: np.random.Generator, spread: float = 0.15):
    """Closed configurations from random motor angles near home (warm-started walk)."""
    q = robot.home
    samples = []
    while len(samples) < count:
        target = robot.home[robot.actuated_indices] + rng.uniform(-spread, spread, len(robot.actuated_indices))
        try:
            solution = robot.solve_forward(target, start=q)
        except pardyn.PardynError:
            continue
        samples.append((target, solution.q))
    return samples


@pytest.mark.parametrize("name", ALL)
def test_forward_kinematics_closes_pinocchio_constraints(name, robots):
    robot = robots[name]
    reference = Reference(name, robot)
    rng = np.random.default_rng(1)
    frames = [f.name for f in reference.model.frames if f.type == pin.FrameType.BODY]
    data = robot.model.createData()
    worst_residual = worst_position = 0.0
    for motors, q in _motor_samples(robot, 100, rng):
        q_full = reference.embed(q, reference.locked_values)
        assert np.allclose(q_full[reference.motors], motors, atol=1e-12)
        worst_residual = max(worst_residual, reference.residual(q_full))
        pin.framesForwardKinematics(robot.model, data, q)
        pin.framesForwardKinematics(reference.model, reference.data, q_full)
        for frame in frames:  # the effector and every other body: the same place on both trees
            ours = data.oMf[robot.model.getFrameId(frame)].translation
            theirs = reference.data.oMf[reference.model.getFrameId(frame)].translation
            worst_position = max(worst_position, float(np.abs(ours - theirs).max()))
    assert worst_residual < 1e-10
    assert worst_position < 1e-9


def _state(robot: pardyn.Robot, rng: np.random.Generator):
    (_, q), = _motor_samples(robot, 1, rng)
    velocity_map = robot.differential.task_velocity_map(q)
    qdot = velocity_map @ rng.uniform(-1.0, 1.0, velocity_map.shape[1])
    return q, qdot


@pytest.mark.parametrize("name", ALL)
def test_forward_dynamics_matches_constraint_dynamics(name, robots):
    robot = robots[name]
    reference = Reference(name, robot)
    forward = ForwardDynamics(robot, robot.nominal_parameters)  # the URDF inertias, placeholders massless
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(10):
        q, qdot = _state(robot, rng)
        tau = rng.uniform(-2.0, 2.0, len(robot.actuated_names))
        ours = forward.accelerations(q, qdot, tau)
        effort = np.zeros(reference.model.nv)
        effort[reference.motors] = tau
        theirs = reference.accelerations(reference.embed(q, reference.locked_values), reference.embed(qdot, 0.0), effort)
        theirs = reference.comparable(reference.embed(q, reference.locked_values), theirs)
        worst = max(worst, float(np.abs(ours - theirs).max() / np.abs(theirs).max()))
    assert worst < 1e-8


@pytest.mark.parametrize("name", LOCKED_OR_NONE)
def test_inverse_dynamics_torques_reproduce_the_motion(name, robots):
    robot = robots[name]
    reference = Reference(name, robot)
    inverse = InverseDynamics(robot)
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(10):
        q, qdot = _state(robot, rng)
        task_velocity = np.linalg.lstsq(robot.differential.task_velocity_map(q), qdot, rcond=None)[0]
        task_acceleration = rng.uniform(-3.0, 3.0, len(robot.task_names))
        _, _, qddot = robot.differential.task_states(q, task_velocity, task_acceleration)
        tau = inverse.torques_from_task(q, task_velocity, task_acceleration)
        effort = np.zeros(reference.model.nv)
        effort[reference.motors] = tau
        q_full = reference.embed(q, reference.locked_values)
        theirs = reference.accelerations(q_full, reference.embed(qdot, 0.0), effort)
        theirs = reference.comparable(q_full, theirs)
        worst = max(worst, float(np.abs(qddot - theirs).max() / np.abs(qddot).max()))
    assert worst < 1e-8
