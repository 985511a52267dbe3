"""A law's answer in one compiled call (pardyn.control.compiled) against the Python path it replaces.

The reference is the pure Python path of a robot loaded with ``kernels="python"`` (pinocchio + numpy:
its own Newton solver, KKT projection and inverse dynamics), fed the same states one after the other
(warm starts carried along on both sides); saturation is reached in some of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.control import JointReference, actuator_limits
from pardyn.control.compiled import compile_law, python_answer
from pardyn.control.computed_torque import ComputedTorque
from pardyn.control.feedforward import AugmentedPD
from pardyn.control.pd import JointPD
from pardyn.control.redundancy import InternalStressProjection
from pardyn.errors import ConvergenceError, InputError


def _states(robot, count: int, seed: int):
    """(q_a, qdot_a, reference): readings of poses along a path near home (with 1e-4 rad of encoder
    inconsistency between redundant drives), every third reference far enough to saturate a PD."""
    rng = np.random.default_rng(seed)
    home = robot.home[robot.actuated_indices]
    n_a, n = home.size, len(robot.task_names)
    start = robot.task_values(robot.home)
    for k in range(count):
        pose = robot.solve_inverse(start + 0.01 * np.sin(0.3 * k + np.arange(n))).q
        position = pose[robot.actuated_indices] + rng.normal(0.0, 1e-4, n_a)
        velocity = rng.normal(0.0, 0.5, n_a)
        offset = 3.0 if k % 3 == 2 else 0.02
        reference = JointReference(home + rng.uniform(-offset, offset, n_a), rng.normal(0.0, 0.3, n_a),
                                   rng.normal(0.0, 2.0, n_a))
        yield position, velocity, reference


def _pd_pair(load, name: str):
    python, compiled = load(name), load(name, "compiled")
    laws = [JointPD(80.0, 5.0, limits=0.5 * actuator_limits(robot), joints=tuple(robot.actuated_names))
            for robot in (python, compiled)]
    redundant = len(python.actuated_names) > len(python.task_names)
    # the forward problem the kernels replace: Newton, checked every call (the default with kernels)
    projections = [InternalStressProjection(robot, method="newton") if redundant else None
                   for robot in (python, compiled)]
    return python, compiled, laws, projections


@pytest.mark.parametrize("name", ("dualv", "five_bar"))
def test_pd_and_eq50_in_one_call_equal_the_python_path(load, name):
    """DualV: PD + eq. (50) (the warm-started forward problem, the projection, both saturations); five-bar
    (not redundant): the PD alone."""
    python, compiled, (law_py, law_c), (projection_py, projection_c) = _pd_pair(load, name)
    step, note = compile_law(law_c, compiled, projection_c)
    assert step is not None and step.kind == "pd", note
    assert note == ("control law JointPD compiled: "
                    + ("PD + eq. (50)" if name == "dualv" else "PD") + " in one kernel call per state")
    saturated = 0
    for position, velocity, reference in _states(python, 30, seed=1):
        expected = python_answer(law_py, projection_py, position, velocity, reference)
        got = step(position, velocity, reference)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        saturated += int(np.any(np.abs(expected) == law_py.limits))
        if projection_py is not None:
            np.testing.assert_allclose(projection_c.q, projection_py.q, atol=1e-12)
    assert saturated >= 5 and step.fallbacks == 0
    if projection_py is not None:  # eq. (50) did something: J^T tau kept, a smaller norm
        tau = law_py.torques(position, velocity, reference)
        assert np.linalg.norm(projection_py.project_at(projection_py.q, tau)) < np.linalg.norm(tau) - 1e-6


@pytest.mark.parametrize("name", ("dualv", "five_bar"))
def test_actuated_computed_torque_in_one_call_equals_the_python_path(load, name):
    """Forward problem, eqs. (21)/(24) and the minimum-norm inverse dynamics (19)/(26) of eq. (35)."""
    python, compiled = load(name), load(name, "compiled")
    law_py, law_c = (ComputedTorque(robot, kp=400.0, kd=40.0) for robot in (python, compiled))
    step, note = compile_law(law_c, compiled)
    assert step is not None and step.kind == "ctc", note
    for position, velocity, reference in _states(python, 20, seed=2):
        expected = law_py.torques(position, velocity, reference)
        np.testing.assert_allclose(step(position, velocity, reference), expected, rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(law_c.q, law_py.q, atol=1e-12)
    assert step.fallbacks == 0


def test_what_the_kernels_do_not_end_on_is_the_python_paths_answer_or_error(load):
    """A NaN reading, a wrong count, readings out of reach: the Python path decides (the same typed
    error), and the warm start stays in step with it."""
    python, compiled, (law_py, law_c), (projection_py, projection_c) = _pd_pair(load, "dualv")
    step, _ = compile_law(law_c, compiled, projection_c)
    home = compiled.home[compiled.actuated_indices]
    hold = JointReference.hold(home)
    with pytest.raises(InputError, match="measured positions: non-finite"):
        step(home + np.array([np.nan, 0.0, 0.0, 0.0]), np.zeros(4), hold)
    with pytest.raises(InputError, match="measured velocities: expected 4 values, got 3"):
        step(home, np.zeros(3), hold)
    assert step.fallbacks == 2
    far = home + np.array([1.5, 1.0, -1.0, 0.5])  # out of reach: continuation from home fails on both paths
    with pytest.raises(ConvergenceError) as python_error:
        python_answer(law_py, projection_py, far, np.zeros(4), hold)
    with pytest.raises(ConvergenceError) as compiled_error:
        step(far, np.zeros(4), hold)
    assert str(compiled_error.value) == str(python_error.value) and step.fallbacks == 3
    near = home + np.array([0.02, -0.01, 0.015, -0.02])  # the next state is compiled again
    np.testing.assert_allclose(step(near, np.ones(4), hold), python_answer(law_py, projection_py, near, np.ones(4), hold),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(projection_c.q, projection_py.q, atol=1e-12)
    assert step.fallbacks == 3


def test_laws_and_robots_the_kernels_do_not_write_stay_on_python_and_say_why(load):
    python, compiled = load("dualv"), load("dualv", "compiled")
    law = JointPD(80.0, 5.0, limits=actuator_limits(python), joints=tuple(python.actuated_names))
    step, note = compile_law(law, python, InternalStressProjection(python))
    assert step is None
    assert note == "control law JointPD on the Python path: the robot has no compiled kernels"
    step, note = compile_law(AugmentedPD(compiled), compiled, InternalStressProjection(compiled))
    assert step is None
    assert note == ("control law AugmentedPD on the Python path: AugmentedPD has no compiled form (compiled: "
                    "pd (+ eq. 50), ctc (actuated space))")
    step, note = compile_law(law, compiled, InternalStressProjection(compiled, method="analytic"))
    assert step is None and "'analytic', not the kernels' Newton" in note
