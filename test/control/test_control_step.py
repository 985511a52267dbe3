"""The control step both hosts share (pardyn.control.step) against the platform wrench of eq. (50).

Independent reference: the inverse Jacobian ``W = d q_a / d x`` (n_a, 3) of the DualV at the true
configuration by central finite differences of the inverse kinematics; the platform wrench of actuator
torques ``tau`` is ``W^T tau`` (the virtual power ``tau . qdot_a = (W^T tau) . xdot``). Eq. (50)
(Briot et al. 2015) keeps that wrench and removes the rest: ``tau* = W (W^T W)^-1 W^T tau``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pardyn
from pardyn.control import JointReference
from pardyn.control.pd import JointPD
from pardyn.control.redundancy import InternalStressProjection
from pardyn.control.step import ControlStep

ROOT = Path(__file__).resolve().parents[2]
ENCODER_STEP = 2 * np.pi / 2**14  # rad: a 14-bit encoder on every joint


@pytest.fixture(scope="module")
def dualv_sensed(tmp_path_factory):
    """The DualV with its four elbows (``leg{i}_joint2``) sensed: actuation-redundant and passive sensors."""
    text = (ROOT / "config" / "robots" / "dualv.yaml").read_text()
    text = text.replace("package://pardyn/urdf/dualv.urdf", str(ROOT / "urdf" / "dualv.urdf"))
    text = text.replace("sensed: []", "sensed: [leg1_joint2, leg2_joint2, leg3_joint2, leg4_joint2]")
    path = tmp_path_factory.mktemp("dualv") / "dualv_sensed.yaml"
    path.write_text(text)
    return pardyn.load_robot(path)


def pd(robot, limit: float = 100.0) -> JointPD:
    return JointPD(400.0, 20.0, limits=[limit] * len(robot.actuated_names), joints=tuple(robot.actuated_names))


def inverse_jacobian(robot, pose: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """``W = d q_a / d x`` (n_a, 3) by central differences of the inverse kinematics."""
    q = robot.solve_inverse(pose).q
    columns = []
    for i in range(len(pose)):
        step = np.zeros(len(pose))
        step[i] = h
        plus, minus = (robot.solve_inverse(pose + sign * step, start=q).q for sign in (1.0, -1.0))
        columns.append((plus - minus)[robot.actuated_indices] / (2 * h))
    return np.array(columns).T


def poses(robot, count: int, seed: int = 0):
    """``count`` reachable platform poses (x, y, phi) and their closed configurations."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        pose = rng.uniform([-0.1, -0.1, -0.3], [0.1, 0.1, 0.3])
        try:
            found.append((pose, robot.solve_inverse(pose).q))
        except pardyn.PardynError:
            continue
    return found


def test_exact_readings_give_the_minimum_norm_torques_of_the_same_platform_wrench(dualv_sensed):
    robot = dualv_sensed
    law = pd(robot)
    step = ControlStep(robot, law)
    assert step.projection is not None and step.reads_sensed and step.compiled is None
    for pose, q in poses(robot, 3):
        actuated, sensed = q[robot.actuated_indices], q[robot.sensed_indices]
        reference = JointReference.hold(actuated + [0.05, -0.04, 0.03, 0.02])
        tau_law = law.torques(actuated, np.zeros(4), reference)
        tau = step(actuated, np.zeros(4), reference, sensed=sensed)
        w = inverse_jacobian(robot, pose)
        np.testing.assert_allclose(w.T @ tau, w.T @ tau_law, atol=1e-6 * np.abs(w.T @ tau_law).max())
        np.testing.assert_allclose(tau, w @ np.linalg.solve(w.T @ w, w.T @ tau_law), atol=1e-6 * np.abs(tau).max())
        assert np.linalg.norm(tau) < np.linalg.norm(tau_law)  # the internal stress is gone
        # a model simulated with exact encoders gives the configuration: the same torques without the fit
        np.testing.assert_allclose(step(actuated, np.zeros(4), reference, configuration=q), tau,
                                   atol=1e-9 * np.abs(tau).max())


def test_the_step_fits_the_sensed_joints_and_keeps_the_platform_wrench_closer(dualv_sensed):
    """Eq. (50) at the configuration fitted to every encoder (actuated + sensed elbows) keeps the law's platform
    wrench at the true configuration closer than at the fit of the actuated encoders alone: the fit's covariance
    shrinks with every reading added (Gauss-Markov). ``control/compiled.py`` used to project at the
    actuated-only fit; the in-process loop passed the sensed joints."""
    robot = dualv_sensed
    law = pd(robot, limit=1e6)
    rng = np.random.default_rng(1)
    errors = {"step": [], "actuated only": []}
    for pose, q in poses(robot, 30):
        w = inverse_jacobian(robot, pose)
        actuated, sensed = (np.round(q[index] / ENCODER_STEP) * ENCODER_STEP
                            for index in (robot.actuated_indices, robot.sensed_indices))
        reference = JointReference.hold(actuated + rng.normal(scale=0.05, size=4))
        tau_law = law.torques(actuated, np.zeros(4), reference)
        step = ControlStep(robot, law)
        step.projection.q = q.copy()  # the same warm start for both fits
        alone = InternalStressProjection(robot, method="newton")
        alone.q = q.copy()
        for label, tau in (("step", step(actuated, np.zeros(4), reference, sensed=sensed)),
                           ("actuated only", alone(actuated, tau_law))):
            errors[label].append(np.linalg.norm(w.T @ (tau - tau_law)) / np.linalg.norm(w.T @ tau_law))
    rms = {label: float(np.sqrt(np.mean(np.square(values)))) for label, values in errors.items()}
    # [measured: step 5.1e-5, actuated only 8.2e-5 (relative wrench error, RMS over 30 poses)]
    assert rms["step"] < 0.9 * rms["actuated only"], rms
    assert rms["step"] < 1e-4, rms


def test_without_sensed_joints_the_step_projects_at_the_actuated_fit_or_not_at_all():
    dualv, five_bar = pardyn.load_robot("dualv"), pardyn.load_robot("five_bar")
    step = ControlStep(dualv, pd(dualv))
    assert not step.reads_sensed and step.projection is not None and step.projection.method == "analytic"
    assert ControlStep(dualv, pd(dualv), project_internal_stress=False).projection is None
    assert ControlStep(five_bar, pd(five_bar)).projection is None  # not redundant: eq. (50) is the identity
