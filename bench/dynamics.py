#!/usr/bin/env python3
"""Closed-loop dynamics timings, as ratios to pinocchio's tree algorithms timed in the same run.

Run with ``make bench`` (or ``.venv/bin/python bench/dynamics.py``). For dualv,
rrr3, the Delta, the hexapod (3D point closures) and Gepetto's ``robot_delta`` (loaded unedited from
``../shared/datasets/`` when that folder is present) it prints microseconds per sample and the ratio to one
``pinocchio.rnea`` on the same tree, for:

* pinocchio RNEA and ABA on the open tree (the floor: one recursive pass);
* pinocchio ``constraintDynamics`` with the loops as ``RigidConstraintModel``s
  (its own closed-loop forward dynamics, proximal KKT solver);
* pardyn's closed-loop forward dynamics (:class:`pardyn.dynamics.forward.ForwardDynamics`)
  and one RK4 step of :func:`pardyn.dynamics.forward.simulate` (4 evaluations + projection,
  timed over 50-step simulations);
* pardyn's closed-loop inverse dynamics and regressor, if :mod:`pardyn.dynamics`
  provides them (else "not available").

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
from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.parameters import parameters_from_model

STATES = 100


def per_call(function: Callable[[int], object], repeat: int) -> float:
    """Median over 5 rounds of the time per call (microseconds)."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for k in range(repeat):
            function(k % STATES)
        rounds.append((time.perf_counter() - start) / repeat * 1e6)
    return float(np.median(rounds))


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


def closed_loop_rows(robot: pardyn.Robot, q, qdot, qddot) -> list[tuple[str, float | None]]:
    """Timings of the other dynamics modules of pardyn, or None when not importable."""
    rows: list[tuple[str, float | None]] = []
    try:
        from pardyn.dynamics.inverse import InverseDynamics  # noqa: PLC0415
    except ImportError:
        rows.append(("pardyn closed-loop inverse dynamics", None))
    else:
        inverse = InverseDynamics(robot)
        rows.append(("pardyn closed-loop inverse dynamics",
                     per_call(lambda k: inverse.torques(q[k], qdot[k], qddot[k]), 1000)))
    try:
        from pardyn.dynamics.regressor import Regressor  # noqa: PLC0415
    except ImportError:
        rows.append(("pardyn closed-loop regressor", None))
    else:
        regressor = Regressor(robot)
        rows.append(("pardyn closed-loop regressor",
                     per_call(lambda k: regressor.matrix(q[k], qdot[k], qddot[k]), 300)))
    return rows


GEPETTO_DELTA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "gepetto_parallel_robots" / "robot_delta" / "robot.yaml"


CENTER_OFFSET = {"robot_delta": np.array([0.0, 0.5])}
"""Task offsets (rad) from home of the sampled states: Gepetto's robot_delta assembles (from its
neutral configuration) next to a singular curve (closure-Jacobian condition numbers up to 1e6)."""


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'robot':11s} {'operation':40s} {'us/sample':>10s} {'x rnea':>8s}")
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

        reference = per_call(lambda k: pin.rnea(model, data, q[k], qdot[k], qddot[k]), 3000)
        rows: list[tuple[str, float | None]] = [
            ("pinocchio rnea (tree)", reference),
            ("pinocchio aba (tree)", per_call(lambda k: pin.aba(model, data, q[k], qdot[k], tau[k]), 3000)),
            ("pinocchio constraintDynamics (closed)", per_call(
                lambda k: pin.constraintDynamics(model, data, q[k], qdot[k], tau[k], constraints,
                                                 constraint_datas, settings), 3000)),
            ("pardyn forward dynamics (closed)", per_call(
                lambda k: dynamics.accelerations(q[k], qdot[k], tau_a[k]), 2000)),
            ("pardyn RK4 step + projection", per_call(
                lambda k: simulate(dynamics, lambda t, qq, vv: tau_a[k], q[k], qdot[k], duration=0.05, dt=1e-3),
                4) / 50.0),
        ]
        rows += closed_loop_rows(robot, q, qdot, qddot)
        for label, micros in rows:
            if micros is None:
                print(f"{name:11s} {label:40s} {'not available':>19s}")
            else:
                print(f"{name:11s} {label:40s} {micros:10.1f} {micros / reference:8.1f}")


if __name__ == "__main__":
    main()
