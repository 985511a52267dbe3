"""CLOE and maximum likelihood (position output error) against independent references.

* A hand-built closed loop: two joints ``m_j q_j'' + f q_j' = tau_j`` (the viscous friction ``f``
  shared) under a PD law tracking sines, integrated by RK4 in the test. Noise-free positions from
  the true ``(m_1, m_2, f)`` are reproduced only by the truth: both estimators must return it to
  1e-8 from a start 30 % off, with the sensitivity by Broyden's updates (fewer simulations) as by
  forward differences at every step. With position noise 30 times larger on one joint than on the other,
  Gauss-Markov says that weighting by the inverse noise covariance (maximum likelihood) estimates the
  shared ``f`` with a smaller spread than weighting alike (CLOE): checked over 12 noise draws.
* The five-bar in closed loop with its controller (pardyn's closed-loop forward dynamics with the
  nominal parameters): noise-free positions, start 5 % off, truth to 1e-8; and ``pardyn identify
  --estimator cloe`` on a MuJoCo run (the plant's as-built parameters as the truth).
"""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.errors import InputError
from pardyn.identification.estimators import EstimatorContext, SimulatedSystem, estimate
from pardyn.identification.estimators._output_error import OutputErrorOptions
from pardyn.identification.least_squares import LinearSystem

TRUTH = np.array([1.5, 0.4, 0.8])  # m_1 (kg), m_2 (kg), f (N s/m)
KP, KD, DT, STEPS = np.array([40.0, 25.0]), np.array([6.0, 4.0]), 0.005, 400


def _closed_loop(chi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """RK4 of the two PD-controlled joints; returns q, qdot, qddot, tau (STEPS, 2)."""
    mass, friction = chi[:2], chi[2]

    def reference(t):
        return np.array([0.5 * np.sin(2.0 * t), 0.3 * np.sin(3.1 * t + 0.4)])

    def torque(t, q, v):
        return KP * (reference(t) - q) - KD * v

    def derivative(t, x):
        q, v = x[:2], x[2:]
        return np.concatenate([v, (torque(t, q, v) - friction * v) / mass])

    x, out = np.zeros(4), []
    for k in range(STEPS):
        t = k * DT
        tau = torque(t, x[:2], x[2:])
        out.append((x[:2].copy(), x[2:].copy(), (tau - friction * x[2:]) / mass, tau))
        k1 = derivative(t, x)
        k2 = derivative(t + DT / 2, x + DT / 2 * k1)
        k3 = derivative(t + DT / 2, x + DT / 2 * k2)
        k4 = derivative(t + DT, x + DT * k3)
        x = x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    q, v, a, tau = (np.array(column) for column in zip(*out))
    return q, v, a, tau


def _system(q, v, a, tau) -> LinearSystem:
    """``tau_j = m_j a_j + f v_j``, the joints' equations block after block."""
    zero = np.zeros(len(q))
    w = np.vstack([np.column_stack([a[:, 0], zero, v[:, 0]]), np.column_stack([zero, a[:, 1], v[:, 1]])])
    return LinearSystem(w, np.concatenate([tau[:, 0], tau[:, 1]]), (len(q), len(q)), ("m1", "m2", "f"))


def _simulate(chi):
    q, v, a, tau = _closed_loop(chi)
    system = _system(q, v, a, tau)
    return SimulatedSystem(system.W, system.Y, system.block_sizes, system.names, positions=q)


@pytest.mark.parametrize("name", ["cloe", "ml"])
def test_noise_free_closed_loop_positions_give_the_truth(name):
    q, v, a, tau = _closed_loop(TRUTH)
    result = estimate(name, _system(q, v, a, tau), OutputErrorOptions(start="nominal", tolerance=1e-12, iterations=30),
                      EstimatorContext(simulate=_simulate, positions=q, start=TRUTH * [1.3, 0.7, 1.3]))
    np.testing.assert_allclose(result.estimate.chi, TRUTH, rtol=1e-8)
    assert result.estimator == name and result.iterations >= 2 and result.output_errors[-1] < 1e-6


def test_secant_sensitivity_reaches_the_truth_with_fewer_simulations():
    """Broyden's updates (default) and forward differences at every step both return the truth to 1e-8; the
    updates take the differences (3 simulations here) once, so they cost fewer simulations."""
    q, v, a, tau = _closed_loop(TRUTH)
    runs = {}
    for sensitivity in ("secant", "differences"):
        count = []

        def counted(chi):
            count.append(1)
            return _simulate(chi)

        result = estimate("cloe", _system(q, v, a, tau), OutputErrorOptions(tolerance=1e-12, iterations=30,
                                                                             sensitivity=sensitivity),
                          EstimatorContext(simulate=counted, positions=q, start=TRUTH * [1.3, 0.7, 1.3]))
        np.testing.assert_allclose(result.estimate.chi, TRUTH, rtol=1e-8)
        runs[sensitivity] = (len(count), result.iterations)
    assert runs["secant"][0] < runs["differences"][0], runs


def test_maximum_likelihood_weighs_the_noisier_joint_down():
    q, v, a, tau = _closed_loop(TRUTH)
    system = _system(q, v, a, tau)
    spread = {"cloe": [], "ml": []}
    for seed in range(12):
        noisy = q + np.random.default_rng(seed).standard_normal(q.shape) * [1e-4, 3e-3]
        for name in spread:
            chi = estimate(name, system, OutputErrorOptions(tolerance=1e-9, iterations=20, sensitivity="differences"),
                           EstimatorContext(simulate=_simulate, positions=noisy, start=TRUTH * 1.1)).estimate.chi
            spread[name].append(chi[2] - TRUTH[2])
    rms = {name: float(np.sqrt(np.mean(np.square(errors)))) for name, errors in spread.items()}
    assert rms["ml"] < 0.5 * rms["cloe"], rms


def test_output_error_estimators_refuse_data_without_positions():
    q, v, a, tau = _closed_loop(TRUTH)
    with pytest.raises(InputError, match="cloe estimator fits the measured positions: the data gives none"):
        estimate("cloe", _system(q, v, a, tau), context=EstimatorContext(simulate=_simulate, start=TRUTH))

    def torques_only(chi):
        return _system(*_closed_loop(chi))

    with pytest.raises(InputError, match="gives no positions"):
        estimate("ml", _system(q, v, a, tau), context=EstimatorContext(simulate=torques_only, positions=q, start=TRUTH))


def test_a_model_that_cannot_be_simulated_is_a_rejected_step_or_the_end_of_the_iteration():
    """Levenberg-Marquardt refuses a candidate whose model cannot be simulated (its cost infinite: the damping
    grows, the step is retried, one progress line) and still reaches the truth to 1e-8; DIDIM, whose iterate
    cannot be simulated after its first step, ends at that step's estimate, not converged."""
    from pardyn.identification.model_simulation import ModelSimulationError  # noqa: PLC0415

    q, v, a, tau = _closed_loop(TRUTH)
    calls, said = [], []

    def failing_once(chi):  # the start, 3 differences, then the first candidate: "singular"
        calls.append(1)
        if len(calls) == 5:
            raise ModelSimulationError("the reduced mass matrix W^T M W is singular (forced)")
        return _simulate(chi)

    result = estimate("cloe", _system(q, v, a, tau), OutputErrorOptions(tolerance=1e-12, iterations=30),
                      EstimatorContext(simulate=failing_once, positions=q, start=TRUTH * [1.3, 0.7, 1.3],
                                       progress=said.append))
    np.testing.assert_allclose(result.estimate.chi, TRUTH, rtol=1e-8)
    assert any(line.startswith("cloe: step rejected") and "singular (forced)" in line for line in said), said

    def second_fails(chi):
        calls.append(1)
        if len(calls) > 1:
            raise ModelSimulationError("diverged (forced)")
        return _simulate(chi)

    calls.clear()
    result = estimate("didim", _system(q, v, a, tau), context=EstimatorContext(
        simulate=second_fails, positions=q, start=TRUTH * [1.3, 0.7, 1.3], progress=said.append))
    assert result.iterations == 1 and not result.converged
    assert said[-1] == "didim iteration 2: stopped, diverged (forced)"
