"""Compiled kernels (pardyn.kernels) against independent references: pinocchio's frame Jacobians and
RNEA, pinocchio's constrained dynamics, and a C program built from ``pardyn export c``."""

from __future__ import annotations

import pickle
import subprocess

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.errors import InputError
from pardyn.kernels import library as kernel_library
from pardyn.kernels.codegen import parameter_vector

SPATIAL = ("delta", "hexapod", "h4", "wu3r")  # 3D/6D closures, distance closures, an unaligned revolute axis


@pytest.mark.parametrize("name", SPATIAL)
def test_closure_and_tree_torques_match_pinocchio(load, name):
    """phi and K (pinocchio's LOCAL_WORLD_ALIGNED frame Jacobians), tree torques (pinocchio's RNEA with the
    drive terms), joint regressors (pinocchio's) at random configurations off the closed manifold."""
    python, compiled = load(name), load(name, "compiled")
    rng = np.random.default_rng(3)
    inverse = InverseDynamics(python)
    params = parameter_vector(compiled, compiled.nominal_parameters)
    for _ in range(3):
        q = python.home + rng.normal(0.0, 0.05, python.nv)
        qdot, qddot = rng.normal(0.0, 1.0, python.nv), rng.normal(0.0, 2.0, python.nv)
        phi, jacobian = compiled.kernels.closure(q)
        expected_phi, expected_jacobian = python.closures.residual_and_jacobian(q)
        np.testing.assert_allclose(phi, expected_phi, atol=1e-14)
        np.testing.assert_allclose(jacobian, expected_jacobian, atol=1e-13)
        expected = inverse.tree_torques(q, qdot, qddot)  # pinocchio's rnea + fv qdot + fs sign + offset
        np.testing.assert_allclose(compiled.kernels.tree_torques(q, qdot, qddot, params), expected,
                                   rtol=1e-12, atol=1e-11)
        regressor = pin.computeJointTorqueRegressor(inverse.model, inverse.data, q, qdot, qddot)
        gravity = compiled.nominal_parameters.gravity
        np.testing.assert_allclose(compiled.kernels.joint_regressors(q[None], qdot[None], qddot[None], gravity)[0],
                                   regressor, atol=1e-11)


@pytest.mark.parametrize("name", ("delta", "hexapod"))
def test_spatial_solves_and_torques_reproduce_constraint_dynamics(load, name):
    """Forward/inverse problems agree with the Python path, and the compiled torques drive pinocchio's
    constraintDynamics (loops as 3D/6D contacts) to the same joint accelerations."""
    python, compiled = load(name), load(name, "compiled")
    rng = np.random.default_rng(4)
    n = len(python.task_names)
    task = python.task_values(python.home) + rng.uniform(-0.02, 0.02, n)
    reference = python.solve_inverse(task)
    solution = compiled.solve_inverse(task)
    np.testing.assert_allclose(solution.q, reference.q, atol=1e-12)
    for kind in ("serial", "parallel"):
        assert solution.conditioning[kind] == pytest.approx(reference.conditioning[kind], rel=1e-9)
    forward = compiled.solve_forward(solution.q[compiled.actuated_indices], start=solution.q + 1e-4)
    np.testing.assert_allclose(forward.q, reference.q, atol=1e-11)
    assert forward.residual <= 1e-12
    xdot, xddot = rng.normal(0, 0.2, n), rng.normal(0, 1.0, n)
    _, qdot, qddot = python.differential.task_states(solution.q, xdot, xddot)
    torques = InverseDynamics(compiled).torques(solution.q, qdot, qddot)
    np.testing.assert_allclose(torques, InverseDynamics(python).torques(solution.q, qdot, qddot), rtol=1e-10,
                               atol=1e-10)
    # the tree driven by S_a tau_a + K^T lambda: its closed-loop acceleration is qddot (eq. 19 by virtual power)
    model = python.model.copy()
    python.nominal_parameters.apply(model)
    data = model.createData()
    effort = np.zeros(python.nv)
    effort[python.actuated_indices] = torques
    effort -= InverseDynamics(python).friction_torques(qdot)
    mass = pin.crba(model, data, solution.q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    bias = pin.nonLinearEffects(model, data, solution.q, qdot)
    jacobian = python.closures.jacobian(solution.q)
    drift = python.closures.drift(solution.q, qdot)
    m = jacobian.shape[0]
    kkt = np.block([[mass, jacobian.T], [jacobian, np.zeros((m, m))]])
    accel = np.linalg.lstsq(kkt, np.concatenate([effort - bias, -drift]), rcond=None)[0][: python.nv]
    np.testing.assert_allclose(accel, qddot, atol=1e-8)


def test_fallback_is_explicit_and_said_in_one_line(monkeypatch, tmp_path):
    """No compiler: 'auto' runs on the Python path and says why; 'compiled' refuses; 'python' says so."""
    monkeypatch.setenv("PARDYN_KERNEL_CACHE", str(tmp_path))  # nothing cached: a build is needed
    monkeypatch.delenv("PARDYN_KERNELS", raising=False)
    monkeypatch.setattr(kernel_library, "compiler", lambda: None)
    robot = pardyn.load_robot("five_bar", kernels="auto")
    assert robot.kernels is None
    assert robot.kernel_note == ("five_bar: Python kinematics and dynamics (compiled kernels unavailable: "
                                 "no C compiler found (set CC, or install gcc))")
    with pytest.raises(InputError, match="compiled kernels unavailable: no C compiler"):
        pardyn.load_robot("five_bar", kernels="compiled")
    assert "kernels='python'" in pardyn.load_robot("five_bar").kernel_note
    with pytest.raises(InputError, match="kernels must be one of"):
        pardyn.load_robot("five_bar", kernels="fast")


def test_the_environment_chooses_for_robots_loaded_without_a_choice(monkeypatch):
    """``PARDYN_KERNELS`` (``make test-compiled``: every kinematics, dynamics and identification test on the compiled
    path); an explicit ``kernels=`` wins; a bad value names the variable."""
    monkeypatch.setenv("PARDYN_KERNELS", "auto")
    assert pardyn.load_robot("five_bar").kernels is not None
    assert pardyn.load_robot("five_bar", kernels="python").kernels is None
    monkeypatch.setenv("PARDYN_KERNELS", "fast")
    with pytest.raises(InputError, match="environment variable PARDYN_KERNELS must be one of"):
        pardyn.load_robot("five_bar")
    monkeypatch.delenv("PARDYN_KERNELS")
    assert pardyn.load_robot("five_bar").kernels is None


def test_unsupported_robot_falls_back_with_the_reason(load):
    """A task read from a frame is not generated: the reason names the frame."""
    from pardyn.kernels import select_kernels

    robot = load("dualv")
    task = type("Task", (), {"frame": "platform"})()
    original, robot.frame_task = robot.frame_task, task
    try:
        library, note = select_kernels(robot.mechanism, "auto", solver=robot.solver, nominal=robot.nominal_parameters)
    finally:
        robot.frame_task = original
    assert library is None
    assert note == ("dualv: Python kinematics and dynamics (compiled kernels unavailable: task read from frame "
                    "'platform' (joint tasks only))")


def test_cached_kernels_are_reused_and_pickle(load):
    robot = load("five_bar", "compiled")
    again = pardyn.load_robot("five_bar", kernels="compiled")
    assert again.kernels.built_s == 0.0 and again.kernels.folder == robot.kernels.folder
    assert "cached" in again.kernel_note
    copy = pickle.loads(pickle.dumps(again))
    q = robot.home + 0.01
    np.testing.assert_array_equal(copy.kernels.closure(q)[0], robot.kernels.closure(q)[0])



def _fake_compiler(path, body: str) -> str:
    """An executable ``$CC`` that runs ``body`` with ``$out`` the library it is asked to write."""
    path.write_text('#!/bin/sh\nwhile [ "$1" != "-o" ]; do shift; done\nout="$2"\n' + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_a_killed_compile_caches_nothing_and_a_broken_cached_library_is_rebuilt(load, monkeypatch, tmp_path):
    """A compiler killed half-way (a Ctrl-C reaches it in the node's process group) writes part of a library:
    nothing goes into the cache, and the error says it was stopped. A cached library that is not the one its build
    wrote (truncated: a crash before the disk had it) is built again. Before: "cc ... failed: ", and the truncated
    library was loaded: the process died of SIGBUS (this test's first run)."""
    good = load("five_bar", "compiled")  # the session's build: what the fake compiler copies
    robot = good.mechanism
    cache = tmp_path / "cache"
    monkeypatch.setenv("CC", _fake_compiler(tmp_path / "killed_cc", "printf 'half a library' > \"$out\"\nkill -KILL $$"))
    with pytest.raises(kernel_library.CompileError, match="stopped by SIGKILL"):
        kernel_library.load_kernels(robot, solver=good.solver, nominal=good.nominal_parameters, cache=cache)
    assert list(cache.iterdir()) == []  # no library, no staging folder
    folder = cache / good.kernels.folder.name
    folder.mkdir()
    (folder / "libkernels.so").write_bytes((good.kernels.folder / "libkernels.so").read_bytes()[:4096])
    monkeypatch.setenv("CC", _fake_compiler(tmp_path / "copying_cc", f'cp "{good.kernels.folder}/libkernels.so" "$out"'))
    library = kernel_library.load_kernels(robot, solver=good.solver, nominal=good.nominal_parameters, cache=cache)
    assert library.built_s > 0 and library.folder == folder and sorted(p.name for p in cache.iterdir()) == [folder.name]
    q = good.home + 0.01
    np.testing.assert_array_equal(library.closure(q)[0], good.kernels.closure(q)[0])

_PROGRAM = r"""
#include <stdio.h>
#include "pardyn_dualv.h"
int main(void) {
  double values[PARDYN_DUALV_N_ACTUATED], start[PARDYN_DUALV_NV], q[PARDYN_DUALV_NV];
  double qdot[PARDYN_DUALV_NV], qddot[PARDYN_DUALV_NV], stress[PARDYN_DUALV_N_ACTUATED];
  double params[PARDYN_DUALV_N_PARAMS], tau[PARDYN_DUALV_N_ACTUATED], star[PARDYN_DUALV_N_ACTUATED];
  double phi[PARDYN_DUALV_M], jac[PARDYN_DUALV_M * PARDYN_DUALV_NV];
  pardyn_info info;
  for (int i = 0; i < PARDYN_DUALV_N_ACTUATED; ++i) if (scanf("%lf", &values[i]) != 1) return 3;
  for (int i = 0; i < PARDYN_DUALV_NV; ++i) if (scanf("%lf", &start[i]) != 1) return 3;
  for (int i = 0; i < PARDYN_DUALV_NV; ++i) if (scanf("%lf", &qdot[i]) != 1) return 3;
  for (int i = 0; i < PARDYN_DUALV_NV; ++i) if (scanf("%lf", &qddot[i]) != 1) return 3;
  for (int i = 0; i < PARDYN_DUALV_N_ACTUATED; ++i) if (scanf("%lf", &stress[i]) != 1) return 3;
  if (pardyn_dualv_solve(PARDYN_FORWARD, values, start, 1, q, &info)) return 1;
  pardyn_dualv_nominal_parameters(params);
  if (pardyn_dualv_inverse_dynamics(q, qdot, qddot, params, stress, tau)) return 2;
  pardyn_dualv_project(q, tau, star);
  pardyn_dualv_closure(q, phi, jac);
  for (int i = 0; i < PARDYN_DUALV_NV; ++i) printf("%.17g\n", q[i]);
  for (int i = 0; i < PARDYN_DUALV_N_ACTUATED; ++i) printf("%.17g\n", tau[i]);
  for (int i = 0; i < PARDYN_DUALV_N_ACTUATED; ++i) printf("%.17g\n", star[i]);
  for (int i = 0; i < PARDYN_DUALV_M * PARDYN_DUALV_NV; ++i) printf("%.17g\n", jac[i]);
  printf("%.17g\n%.17g\n", info.serial, info.parallel);
  return 0;
}
"""


def test_exported_c_library_called_from_c_matches_the_python_path(load, tmp_path):
    """``pardyn export c``, compiled with the system compiler into a small C program: forward problem
    (redundant: the KKT fit), conditioning, torques with internal stress, eq. (50), K, to 1e-12."""
    from pardyn.cli import main
    from pardyn.control.redundancy import InternalStressProjection

    out = tmp_path / "lib"
    assert main(["export", "c", "--robot", "dualv", "--out", str(out)]) == 0
    for name in ("pardyn_dualv.h", "pardyn_dualv.c", "pardyn_dualv_model.c", "CMakeLists.txt", "example.c"):
        assert (out / name).is_file()
    assert "install(TARGETS pardyn_dualv" in (out / "CMakeLists.txt").read_text()
    (tmp_path / "main.c").write_text(_PROGRAM)
    binary = tmp_path / "main"
    subprocess.run([kernel_library.compiler(), "-O2", "-std=c99", "-I", str(out), str(tmp_path / "main.c"),
                    str(out / "pardyn_dualv.c"), str(out / "pardyn_dualv_model.c"), "-lm", "-o", str(binary)],
                   check=True)
    robot = load("dualv")
    rng = np.random.default_rng(12)
    exact = robot.solve_inverse([0.03, -0.02, 0.08])
    readings = exact.q[robot.actuated_indices] + np.array([0.0, 2e-4, 0.0, -1e-4])  # inconsistent: a fit
    start = exact.q + 1e-3
    qdot, qddot, stress = rng.normal(0, 1, robot.nv), rng.normal(0, 3, robot.nv), np.array([2.0, -1.0, 0.5, 3.0])
    text = "\n".join(f"{v:.17g}" for v in np.concatenate([readings, start, qdot, qddot, stress]))
    result = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True)
    numbers = np.array(result.stdout.split(), dtype=float)
    nv, na, m = robot.nv, 4, robot.closures.size
    q, tau, star = numbers[:nv], numbers[nv:nv + na], numbers[nv + na:nv + 2 * na]
    jacobian = numbers[nv + 2 * na: nv + 2 * na + m * nv].reshape(nv, m).T
    serial, parallel = numbers[-2:]
    reference = robot.solve_forward(readings, start=start)
    np.testing.assert_allclose(q, reference.q, atol=1e-12)
    assert serial == pytest.approx(reference.conditioning["serial"], rel=1e-12)
    assert parallel == pytest.approx(reference.conditioning["parallel"], rel=1e-12)
    # qdot, qddot need not be closed-loop for the algebra: both paths solve the same KKT systems
    expected = InverseDynamics(robot).torques(q, qdot, qddot, internal_stress=stress)
    np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    projected = InternalStressProjection(robot).project_at(q, tau)
    np.testing.assert_allclose(star, projected, rtol=1e-12, atol=1e-12 * np.abs(projected).max())
    np.testing.assert_allclose(jacobian, robot.closures.jacobian(q), atol=1e-12)


def test_series_follows_a_trajectory_and_stops_where_the_python_path_must_take_over(load):
    """The identification's closed-loop states in one C call (``KernelLibrary.series``): along a smooth DualV
    trajectory solved by the Python path (the truth), q, qdot, qddot come back; a reading that closes no loop
    stops the series at that sample (``closed_loop_states`` goes on in Python from there)."""
    from pardyn.kernels import CompiledSolver

    python, compiled = load("dualv"), load("dualv", "compiled")
    step = 1e-3
    t = np.arange(60) * step
    frequencies = np.array([3.0, 4.0, 5.0])
    amplitude = np.array([0.02, -0.015, 0.05])
    poses = python.home[python.task_indices] + amplitude * np.sin(np.outer(t, frequencies))
    velocity = amplitude * frequencies * np.cos(np.outer(t, frequencies))
    acceleration = -amplitude * frequencies**2 * np.sin(np.outer(t, frequencies))
    q_true, qdot_true, qddot_true = (np.empty((len(t), python.nv)) for _ in range(3))
    for k in range(len(t)):
        q_true[k] = python.solve_inverse(poses[k], start=q_true[k - 1] if k else python.home).q
        _, qdot_true[k], qddot_true[k] = python.differential.task_states(q_true[k], velocity[k], acceleration[k])
    measured = python.measured_indices
    arguments = (q_true[:, measured], qdot_true[:, measured], qddot_true[:, measured])
    done, q, qdot, qddot = compiled.kernels.series(CompiledSolver.FORWARD, *arguments, q_true[0] + 1e-4, step, 10)
    assert done == len(t)
    np.testing.assert_allclose(q, q_true, atol=1e-10)
    np.testing.assert_allclose(qdot, qdot_true, atol=1e-10)
    np.testing.assert_allclose(qddot, qddot_true, atol=1e-8)
    broken = arguments[0].copy()
    broken[27] += 1.5  # no five-bar loop closes with these proximal angles
    done, q, _, _ = compiled.kernels.series(CompiledSolver.FORWARD, broken, *arguments[1:], q_true[0], step, 10)
    assert done == 27 and compiled.kernels._info.status != 0  # noqa: SLF001
    np.testing.assert_allclose(q[:27], q_true[:27], atol=1e-10)
