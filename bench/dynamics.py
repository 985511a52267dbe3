#!/usr/bin/env python3
"""Closed-loop dynamics timings, as ratios to pinocchio's tree algorithms timed in the same run.

Run with ``make bench`` (or ``.venv/bin/python bench/dynamics.py``). For dualv,
rrr3, the Delta, the hexapod (3D point closures) and Gepetto's ``robot_delta`` (loaded unedited from
``../shared/datasets/`` when that folder is present) it prints microseconds per sample and the ratio to one
``pinocchio.rnea`` on the same tree, for:

* pinocchio RNEA and ABA on the open tree (the floor: one recursive pass);
* pinocchio ``constraintDynamics`` with the loops as ``RigidConstraintModel``s
  (its own closed-loop forward dynamics, proximal KKT solver);
* pardyn's closed-loop forward dynamics (:class:`pardyn.dynamics.forward.ForwardDynamics`,
  accuracy: against ``constraintDynamics``) and one RK4 step of :func:`pardyn.dynamics.forward.simulate` (4 evaluations + projection,
  timed over 50-step simulations);
* pardyn's closed-loop inverse dynamics (one state, and per state of a 100-state batch, as the
  identification's validation runs it), its ratio to ``constraintDynamics`` too, and its accuracy:
  ``constraintDynamics`` fed with the computed torques must give back the accelerations
  (independent), and the distance to the previous implementation (kept below as a reference);
* pardyn's closed-loop regressor (one state, and per state of the identification's batched
  ``Regressor.equations``), accuracy: ``Y chi`` against ``W^T`` (RNEA + drive terms), and the
  distance to the previous implementation;
* for actuation-redundant robots the eq. (50) projection (one state, the closed configuration given),
  accuracy against ``P = I - J (J^T J)^-1 J^T``, and the DualV controller per message (PD + the
  projection, whose closure solve comes first: ``robot.solve_forward``).

Accuracies are max relative errors over the 100 states. BLAS runs with one thread
(``threadpool_limits``), as the identification pipeline does: on small matrices OpenBLAS's
threads only contend for the two cores (10-25x slower products measured under load).

A small rotor inertia (1e-3) is put on every joint: without it the massless
platform-joint bodies make ABA and constraintDynamics return NaN (it does not
change their cost). Samples cycle over 100 random closed states near home.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pinocchio as pin

import pardyn
from threadpoolctl import threadpool_limits

from pardyn.control import JointReference, saturate
from pardyn.control.pd import JointPD
from pardyn.control.redundancy import InternalStressProjection
from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.inverse import InverseDynamics, minimum_norm_torques, null_space_projector
from pardyn.dynamics.parameters import parameters_from_model
from pardyn.dynamics.regressor import Regressor

STATES = 100


def per_call(function: Callable[[int], object], repeat: int) -> float:
    """Best of 7 rounds of the time per call (microseconds): the round least disturbed by the other
    processes of a shared machine (the anchors are timed the same way, so the ratios stay fair)."""
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for k in range(repeat):
            function(k % STATES)
        rounds.append((time.perf_counter() - start) / repeat * 1e6)
    return float(np.min(rounds))


def loop_constraints(robot: pardyn.Robot):
    """The robot's closures as pinocchio constraints (planar -> 6D, 2D -> 3D)."""
    model = robot.model
    constraints = []
    for closure in robot.description.closures:
        frame_a, frame_b = (model.frames[model.getFrameId(name)] for name in closure.frames)
        kind = pin.ContactType.CONTACT_6D if closure.type in ("planar", "6D") else pin.ContactType.CONTACT_3D
        constraints.append(pin.RigidConstraintModel(
            kind, model, frame_a.parentJoint, frame_a.placement, frame_b.parentJoint, frame_b.placement,
            pin.ReferenceFrame.LOCAL))
    return (pin.StdVec_RigidConstraintModel(constraints),
            pin.StdVec_RigidConstraintData([c.createData() for c in constraints]))


def reference_torques(inverse: InverseDynamics, q, qdot, qddot) -> np.ndarray:
    """The previous implementation of ``InverseDynamics.torques`` (before the one-pass path), kept as a reference."""
    velocity_map = inverse.robot.differential.task_velocity_map(q)
    jacobian = velocity_map[inverse.actuated_indices]
    return minimum_norm_torques(jacobian, velocity_map.T @ inverse.tree_torques(q, qdot, qddot))


def reference_regressor(regressor: Regressor, q, qdot, qddot) -> np.ndarray:
    """The previous implementation of ``Regressor.matrix`` (``W^T Y_t`` with ``Y_t`` formed), kept as a reference."""
    velocity_map = regressor.robot.differential.task_velocity_map(q)
    observation = velocity_map.T @ regressor.tree(q, qdot, qddot)
    return observation if regressor.projection == "platform" else regressor._left(velocity_map[None])[0] @ observation


def relative(error: np.ndarray, scale: np.ndarray) -> float:
    return float(np.max(np.abs(error)) / max(np.max(np.abs(scale)), 1e-300))


Row = tuple[str, float, str]


def closed_loop_rows(robot: pardyn.Robot, model, q, qdot, qddot, solve_constrained) -> list[Row]:
    """Inverse dynamics, regressor and eq. (50) projection: (label, microseconds, accuracy text)."""
    params = parameters_from_model(robot, model)  # the same model as the anchors
    friction = ForwardDynamics(robot, params).friction
    inverse = InverseDynamics(robot, params)
    states = [np.array(a) for a in (q, qdot, qddot)]
    torques = [inverse.torques(q[k], qdot[k], qddot[k]) for k in range(STATES)]
    previous = [reference_torques(inverse, q[k], qdot[k], qddot[k]) for k in range(STATES)]
    full = np.zeros(model.nv)
    back = []
    for k in range(STATES):  # constraintDynamics with the torques found: the accelerations back
        full[:] = 0.0
        full[robot.actuated_indices] = torques[k]
        back.append(solve_constrained(q[k], qdot[k], full - friction(qdot[k])))
    accuracy = (f"constraintDynamics {relative(np.array(back) - states[2], states[2]):.0e}, "
                f"previous {relative(np.array(torques) - np.array(previous), np.array(previous)):.0e}")
    batch_error = relative(inverse.torques_batch(*states) - np.array(torques), np.array(torques))
    rows: list[Row] = [
        ("pardyn closed-loop inverse dynamics", per_call(lambda k: inverse.torques(q[k], qdot[k], qddot[k]), 1000),
         accuracy),
        ("  same, batch of 100 (per state)", per_call(lambda k: inverse.torques_batch(*states), 20) / STATES,
         f"single state {batch_error:.0e}"),
    ]
    regressor = Regressor(robot, params)
    chi = params.vector()
    observation = np.array([regressor.matrix(q[k], qdot[k], qddot[k]) for k in range(STATES)])
    previous = np.array([reference_regressor(regressor, q[k], qdot[k], qddot[k]) for k in range(STATES)])
    maps = [robot.differential.task_velocity_map(q[k]) for k in range(STATES)]
    forces = np.array([maps[k].T @ inverse.tree_torques(q[k], qdot[k], qddot[k]) for k in range(STATES)])
    if regressor.projection != "platform":
        forces = np.array([regressor._left(maps[k][None])[0] @ forces[k] for k in range(STATES)])
    batch = regressor.matrix(*states)
    rows += [
        ("pardyn closed-loop regressor", per_call(lambda k: regressor.matrix(q[k], qdot[k], qddot[k]), 300),
         f"Y chi vs W^T RNEA {relative(observation @ chi - forces, forces):.0e}, "
         f"previous {relative(observation - previous, previous):.0e}"),
        ("  same, batch of 100 (per state)", per_call(lambda k: regressor.matrix(*states), 10) / STATES,
         f"single state {relative(batch - observation, observation):.0e}"),
    ]
    if len(robot.actuated_indices) > len(robot.task_names):
        projection = InternalStressProjection(robot)
        rng = np.random.default_rng(1)
        tau = rng.normal(0.0, 20.0, (STATES, len(robot.actuated_indices)))
        projected = np.array([projection.project_at(q[k], tau[k]) for k in range(STATES)])
        expected = np.array([tau[k] - null_space_projector(maps[k][robot.actuated_indices]) @ tau[k]
                             for k in range(STATES)])
        rows.append(("pardyn eq. 50 projection (q given)", per_call(lambda k: projection.project_at(q[k], tau[k]), 1000),
                     f"vs (I - P) tau {relative(projected - expected, expected):.0e}"))
        actuated = [q[k][robot.actuated_indices] for k in range(STATES)]
        law = JointPD.for_robot(robot, 100.0, 5.0)
        references = [JointReference.hold(a + 0.01) for a in actuated]
        still = np.zeros(len(robot.actuated_indices))
        rows.append(("  closure solve (robot.solve_forward)", per_call(
            lambda k: robot.solve_forward(actuated[k], start=q[k], method=projection.method), 300), "(kinematics)"))
        rows.append(("  PD law", per_call(lambda k: law.torques(actuated[k], still, references[k]), 1000), ""))

        def message(k: int) -> np.ndarray:
            projection.q = q[(k + STATES - 1) % STATES]  # warm start: another nearby state
            return saturate(projection(actuated[k], law.torques(actuated[k], still, references[k])), law.limits)

        rows.append(("controller per message (PD + eq. 50)", per_call(message, 300), "law + closure solve + projection"))
    return rows


GEPETTO_DELTA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "gepetto_parallel_robots" / "robot_delta" / "robot.yaml"


CENTER_OFFSET = {"robot_delta": np.array([0.0, 0.5])}
"""Task offsets (rad) from home of the sampled states: Gepetto's robot_delta assembles (from its
neutral configuration) next to a singular curve (closure-Jacobian condition numbers up to 1e6)."""


def main() -> None:
    with threadpool_limits(limits=1, user_api="blas"):
        run()


def run() -> None:
    rng = np.random.default_rng(0)
    print(f"{'robot':11s} {'operation':40s} {'us/sample':>10s} {'x rnea':>8s} {'x cD':>6s}  accuracy (max relative error)")
    robots: list[str | Path] = ["dualv", "rrr3", "delta", "hexapod"]
    if GEPETTO_DELTA.is_file():
        robots.append(GEPETTO_DELTA)
    else:
        print(f"robot_delta: skipped, {GEPETTO_DELTA} not found (the shared datasets are absent)")
    for source in robots:
        robot = pardyn.load_robot(source)
        name = robot.name
        model = robot.model.copy()
        data = model.createData()
        model.armature[:] = 1e-3
        if name == "rrr3":
            model.gravity = pin.Motion(np.array([0.0, -9.81, 0.0]), np.zeros(3))
        n, n_a = len(robot.task_names), len(robot.actuated_indices)
        dynamics = ForwardDynamics(robot, parameters_from_model(robot, model))
        center = robot.task_values(robot.home) + CENTER_OFFSET.get(name, 0.0)
        q, qdot = [], []
        for _ in range(STATES):
            config = robot.solve_inverse(center + rng.uniform(-0.03, 0.03, n)).q
            q.append(config)
            qdot.append(robot.differential.velocities_from_task(config, rng.uniform(-0.5, 0.5, n)))
        tau_a = [rng.normal(0.0, 2.0, n_a) for _ in range(STATES)]
        tau = [np.zeros(model.nv) for _ in range(STATES)]
        for full, part in zip(tau, tau_a):
            full[robot.actuated_indices] = part
        qddot = [dynamics.accelerations(q[k], qdot[k], tau_a[k]) for k in range(STATES)]
        constraints, constraint_datas = loop_constraints(robot)
        pin.initConstraintDynamics(model, data, constraints, constraint_datas)
        settings = pin.ProximalSettings(1e-12, 1e-12, 1e-12, 50)

        def solve_constrained(q_k, qdot_k, tau_k):
            return pin.constraintDynamics(model, data, q_k, qdot_k, tau_k, constraints, constraint_datas,
                                          settings).copy()

        reference = per_call(lambda k: pin.rnea(model, data, q[k], qdot[k], qddot[k]), 3000)
        constrained = per_call(lambda k: pin.constraintDynamics(model, data, q[k], qdot[k], tau[k], constraints,
                                                                constraint_datas, settings), 3000)
        back = [solve_constrained(q[k], qdot[k], tau[k] - dynamics.friction(qdot[k])) for k in range(STATES)]
        forward_error = relative(np.array(back) - np.array(qddot), np.array(back))
        rows: list[Row] = [
            ("pinocchio rnea (tree)", reference, ""),
            ("pinocchio aba (tree)", per_call(lambda k: pin.aba(model, data, q[k], qdot[k], tau[k]), 3000), ""),
            ("pinocchio constraintDynamics (closed)", constrained, ""),
            ("pardyn forward dynamics (closed)", per_call(
                lambda k: dynamics.accelerations(q[k], qdot[k], tau_a[k]), 2000),
             f"constraintDynamics {forward_error:.0e}"),
            ("pardyn RK4 step + projection", per_call(
                lambda k: simulate(dynamics, lambda t, qq, vv: tau_a[k], q[k], qdot[k], duration=0.05, dt=1e-3),
                4) / 50.0, "(test/dynamics: energy, constraintDynamics)"),
        ]
        rows += closed_loop_rows(robot, model, q, qdot, qddot, solve_constrained)
        for label, micros, accuracy in rows:
            print(f"{name:11s} {label:40s} {micros:10.1f} {micros / reference:8.1f} {micros / constrained:6.2f}  {accuracy}")


if __name__ == "__main__":
    main()
