#!/usr/bin/env python3
"""Compiled kernels (pardyn.kernels) against the Python path and pinocchio, in the same run.

Run with ``make bench`` (or ``.venv/bin/python bench/kernels.py``). For the DualV, the Delta and the
hexapod it prints microseconds per call (best of 7 rounds, :func:`dynamics.per_call`) and:

* the forward problem with a warm start (``robot.solve_forward``, checks on: branch and conditioning),
  Python and compiled, beside pinocchio's ``computeJointJacobians`` (the issue's anchor); accuracy:
  max |q_compiled - q_python| over 100 states;
* closed-loop inverse dynamics (``InverseDynamics.torques``, minimum norm), Python and compiled, beside
  pinocchio's ``constraintDynamics`` and RNEA; accuracy: max relative error against the Python path;
* the task states ``(W, qdot, qddot)`` of eqs. (9)-(10) (``differential.task_states``), Python and compiled;
* the closed-loop regressor (``Regressor.matrix``: the identification model's observation matrix, eqs. 19, 30;
  in C the velocity map, ``W^T Y_t`` on the joint regressor's nonzeros, the body map and the drive columns), one
  state and per state of a 100-state batch, Python and compiled, beside RNEA; accuracy against the Python path;
* the joint regressors of a 100-state batch (the identification's tree regressor before its body map),
  pinocchio's ``computeJointTorqueRegressor`` per state against one C loop, beside RNEA;
* the eq. (50) projection from the actuated readings (forward solve + projection, the controller's
  model term), Python and compiled (redundant robots);
* generation + compilation at first use (a fresh cache) and loading when cached.

Goals (issue 28): forward <= 30 us (DualV), <= 40 us (Delta, hexapod); inverse dynamics <= 0.5x
constraintDynamics; regressor <= 3x RNEA for one state; generation + compilation <= 10 s, cached <= 0.3 s
(the identification goal, 2 x 60 s of DualV in <= 1.0 s: ``bench/identification.py``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from dynamics import STATES, loop_constraints, per_call  # noqa: E402

import pardyn  # noqa: E402
from pardyn.control.redundancy import InternalStressProjection  # noqa: E402
from pardyn.dynamics import InverseDynamics  # noqa: E402
from pardyn.dynamics.regressor import Regressor  # noqa: E402
from pardyn.kernels.library import load_kernels  # noqa: E402

ROBOTS = ("dualv", "delta", "hexapod")


def build_times(name: str) -> tuple[float, float]:
    """Generation + compilation into a fresh cache, then a cached load (s)."""
    robot = pardyn.load_robot(name)
    with tempfile.TemporaryDirectory() as folder:
        inputs = {"solver": robot.solver, "nominal": robot.nominal_parameters, "cache": Path(folder)}
        first = load_kernels(robot.mechanism, **inputs)
        start = time.perf_counter()
        load_kernels(robot.mechanism, **inputs)
        cached = time.perf_counter() - start
    return first.built_s + first.load_s, cached


def main() -> None:
    with threadpool_limits(1):
        run()


def run() -> None:
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'robot':8s} {'figure':44s} {'python us':>10s} {'compiled us':>12s} {'anchor us':>10s} "
          f"{'compiled/anchor':>15s}  accuracy (compiled vs python)")
    for name in ROBOTS:
        python = pardyn.load_robot(name)
        compiled = pardyn.load_robot(name, kernels="compiled")
        rng = np.random.default_rng(0)
        n = len(python.task_names)
        center = python.task_values(python.home)
        q, qdot, qddot = [], [], []
        for _ in range(STATES):
            config = python.solve_inverse(center + rng.uniform(-0.02, 0.02, n)).q
            _, v, a = python.differential.task_states(config, rng.uniform(-0.3, 0.3, n), rng.uniform(-1, 1, n))
            q.append(config), qdot.append(v), qddot.append(a)
        actuated = [x[python.actuated_indices] for x in q]
        starts = [x + 1e-4 for x in q]  # warm start: the previous period's answer, 0.1 mrad away
        model = python.model.copy()
        python.nominal_parameters.apply(model)
        model.armature[model.armature == 0.0] = 1e-3  # constraintDynamics needs a regular tree (cost unchanged)
        data = model.createData()
        jacobians = per_call(lambda k: pin.computeJointJacobians(model, data, q[k]), 3000)
        rnea = per_call(lambda k: pin.rnea(model, data, q[k], qdot[k], qddot[k]), 3000)
        constraints, constraint_datas = loop_constraints(python)
        pin.initConstraintDynamics(model, data, constraints, constraint_datas)
        settings = pin.ProximalSettings(1e-12, 1e-12, 1e-12, 50)
        tau = np.zeros(model.nv)
        constrained = per_call(lambda k: pin.constraintDynamics(model, data, q[k], qdot[k], tau, constraints,
                                                                constraint_datas, settings), 2000)
        forward = {label: per_call(lambda k, r=robot: r.solve_forward(actuated[k], start=starts[k]), 1000)
                   for label, robot in (("python", python), ("compiled", compiled))}
        error = max(np.abs(compiled.solve_forward(actuated[k], start=starts[k]).q
                           - python.solve_forward(actuated[k], start=starts[k]).q).max() for k in range(STATES))
        print(f"{name:8s} {'forward problem, warm start':44s} {forward['python']:10.1f} {forward['compiled']:12.1f} "
              f"{jacobians:10.2f} {forward['compiled'] / jacobians:14.1f}x  max |dq| {error:.1e} "
              f"(anchor computeJointJacobians; goal <= {30 if name == 'dualv' else 40} us)")
        inverse_python, inverse_compiled = InverseDynamics(python), InverseDynamics(compiled)
        timing = {label: per_call(lambda k, i=inverse: i.torques(q[k], qdot[k], qddot[k]), 2000)
                  for label, inverse in (("python", inverse_python), ("compiled", inverse_compiled))}
        reference = np.array([inverse_python.torques(q[k], qdot[k], qddot[k]) for k in range(STATES)])
        result = np.array([inverse_compiled.torques(q[k], qdot[k], qddot[k]) for k in range(STATES)])
        error = float(np.abs(result - reference).max() / np.abs(reference).max())
        print(f"{name:8s} {'closed-loop inverse dynamics':44s} {timing['python']:10.1f} {timing['compiled']:12.1f} "
              f"{constrained:10.2f} {timing['compiled'] / constrained:14.2f}x  rel {error:.1e} "
              f"(anchor constraintDynamics, goal <= 0.5x; rnea {rnea:.2f} us)")
        xdot = [rng.uniform(-0.3, 0.3, n) for _ in range(STATES)]
        xddot = [rng.uniform(-1, 1, n) for _ in range(STATES)]
        timing = {label: per_call(lambda k, r=robot: r.differential.task_states(q[k], xdot[k], xddot[k]), 2000)
                  for label, robot in (("python", python), ("compiled", compiled))}
        error = max(max(float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-300)) for a, b in zip(
            python.differential.task_states(q[k], xdot[k], xddot[k]),
            compiled.differential.task_states(q[k], xdot[k], xddot[k]))) for k in range(STATES))
        print(f"{name:8s} {'task states (W, qdot, qddot), eqs. 9-10':44s} {timing['python']:10.1f} "
              f"{timing['compiled']:12.1f} {jacobians:10.2f} {timing['compiled'] / jacobians:14.1f}x  rel {error:.1e}")
        batch = [np.array(x) for x in (q, qdot, qddot)]
        regressors = {label: Regressor(robot) for label, robot in (("python", python), ("compiled", compiled))}
        timing = {label: per_call(lambda k, g=g: g.matrix(q[k], qdot[k], qddot[k]), 2000)
                  for label, g in regressors.items()}
        reference = np.array([regressors["python"].matrix(q[k], qdot[k], qddot[k]) for k in range(STATES)])
        result = np.array([regressors["compiled"].matrix(q[k], qdot[k], qddot[k]) for k in range(STATES)])
        error = float(np.abs(result - reference).max() / np.abs(reference).max())
        print(f"{name:8s} {'closed-loop regressor, one state':44s} {timing['python']:10.1f} {timing['compiled']:12.1f} "
              f"{rnea:10.2f} {timing['compiled'] / rnea:14.2f}x  rel {error:.1e} (anchor rnea; goal <= 3x)")
        timing = {label: per_call(lambda k, g=g: g.matrix(*batch), 20) / STATES for label, g in regressors.items()}
        error = float(np.abs(regressors["compiled"].matrix(*batch) - reference).max() / np.abs(reference).max())
        print(f"{name:8s} {'  same, batch of 100 (per state)':44s} {timing['python']:10.2f} {timing['compiled']:12.2f} "
              f"{rnea:10.2f} {timing['compiled'] / rnea:14.2f}x  rel {error:.1e}")
        timing = {label: per_call(lambda k, g=g: g._joint_regressors(*batch), 5) / STATES  # noqa: SLF001
                  for label, g in regressors.items()}
        reference = regressors["python"]._joint_regressors(*batch)  # noqa: SLF001 (pinocchio's, per state)
        error = float(np.abs(regressors["compiled"]._joint_regressors(*batch) - reference).max()  # noqa: SLF001
                      / np.abs(reference).max())
        print(f"{name:8s} {'joint regressors (per state of 100)':44s} {timing['python']:10.2f} {timing['compiled']:12.2f} "
              f"{rnea:10.2f} {timing['compiled'] / rnea:14.2f}x  rel {error:.1e} (anchor rnea; python: "
              "computeJointTorqueRegressor)")
        if len(python.actuated_indices) > n:
            projections = {label: InternalStressProjection(robot) for label, robot in
                           (("python", python), ("compiled", compiled))}
            torques = [rng.normal(0, 1, len(python.actuated_indices)) for _ in range(STATES)]
            timing = {label: per_call(lambda k, p=p: p(actuated[k], torques[k]), 1000)
                      for label, p in projections.items()}
            print(f"{name:8s} {'eq. 50 from readings (forward + projection)':44s} {timing['python']:10.1f} "
                  f"{timing['compiled']:12.1f}")
        first, cached = build_times(name)
        print(f"{name:8s} generation + compilation at first use {first:.2f} s, cached load {cached * 1e3:.1f} ms "
              "(goals <= 10 s, <= 0.3 s)")


if __name__ == "__main__":
    main()
