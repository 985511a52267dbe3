"""CLOE and maximum likelihood (position output error) against independent references.

* A hand-built closed loop: two joints ``m_j q_j'' + f q_j' = tau_j`` (the viscous friction ``f``
  shared) under a PD law tracking sines, integrated by RK4 in the test. Noise-free positions from
  the true ``(m_1, m_2, f)`` are reproduced only by the truth: both estimators must return it to
  1e-8 from a start 30 % off, with the sensitivity by Broyden's updates (fewer simulations) as by
  forward differences at every step. With position noise 30 times larger on one joint than on the other,
  Gauss-Markov says that weighting by the inverse noise covariance (maximum likelihood) estimates the
  shared ``f`` with a smaller spread than weighting alike (CLOE): checked over 12 noise draws.
* The linearised sensitivity (eq. L1): on the hand-built loop from the test's own sensitivity equations (the
  estimator's use of it: truth to 1e-8, fewer simulations than secant); on the five-bar's model in closed loop
  with its controller (pardyn's closed-loop forward dynamics, :func:`position_sensitivity`) against forward
  differences of the full simulation (every base column within 1 %), and CLOE with it from a start 5 % off
  returning the truth to 1e-8 (one simulation a step, never one without its sensitivity). The pipeline's ML on a
  MuJoCo run is in ``test_estimators.py``.
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
    """Broyden's updates (secant) and forward differences at every step both return the truth to 1e-8; the
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


def _sensitivity(chi: np.ndarray) -> np.ndarray:
    """The hand-built loop's position sensitivity (STEPS, 2, 3) from its own linearised equations, by RK4 beside
    the run: differentiating ``m_j a_j + f v_j = Kp (r - q_j) - Kd v_j`` by ``(m_1, m_2, f)``,

        m_j S''_j + (f + Kd_j) S'_j + Kp_j S_j = -d(m_j a_j + f v_j)/d chi = -[a_j e_j + v_j e_3]   (exact here)."""
    q, v, a, _ = _closed_loop(chi)
    mass, friction = chi[:2], chi[2]
    out, x = [], np.zeros((4, 3))  # S (2, 3), S' (2, 3)

    def forcing(k):  # -Y_j at sample k, the states linear between samples (RK4's midpoints)
        if k == int(k):
            aa, vv = a[int(k)], v[int(k)]
        else:
            aa, vv = 0.5 * (a[int(k)] + a[int(k) + 1]), 0.5 * (v[int(k)] + v[int(k) + 1])
        return -np.column_stack([[aa[0], 0.0], [0.0, aa[1]], vv])

    def derivative(k, x):
        s, sv = x[:2], x[2:]
        return np.vstack([sv, (forcing(k) - (friction + KD)[:, None] * sv - KP[:, None] * s) / mass[:, None]])

    for k in range(STEPS):
        out.append(x[:2].copy())
        if k + 1 < STEPS:
            k1 = derivative(k, x)
            k2 = derivative(k + 0.5, x + DT / 2 * k1)
            k3 = derivative(k + 0.5, x + DT / 2 * k2)
            k4 = derivative(k + 1, x + DT * k3)
            x = x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.array(out)


def test_linearised_sensitivity_reaches_the_truth_in_fewer_simulations_than_the_secant_one():
    """The linearised closed loop (one run gives the positions and their sensitivity) returns the truth to 1e-8
    from a start 30 % off, as the secant sensitivity does, in fewer simulations (it takes no differences)."""
    q, v, a, tau = _closed_loop(TRUTH)
    runs = {}
    for sensitivity in ("linearised", "secant"):
        count = []

        def counted(chi):
            count.append(1)
            return _simulate(chi)

        def linearised(chi):
            count.append(1)
            return _closed_loop(chi)[0], lambda: _sensitivity(chi)

        result = estimate("cloe", _system(q, v, a, tau), OutputErrorOptions(tolerance=1e-12, iterations=30,
                                                                             sensitivity=sensitivity),
                          EstimatorContext(simulate=counted, simulate_linearised=linearised, positions=q,
                                           start=TRUTH * [1.3, 0.7, 1.3]))
        np.testing.assert_allclose(result.estimate.chi, TRUTH, rtol=1e-8)
        runs[sensitivity] = len(count)
    assert runs["linearised"] < runs["secant"], runs
    # the default, without a linearised loop in the context: the secant one, said in one line
    said = []
    result = estimate("ml", _system(q, v, a, tau), OutputErrorOptions(tolerance=1e-12, iterations=30),
                      EstimatorContext(simulate=_simulate, positions=q, start=TRUTH * 1.1, progress=said.append))
    np.testing.assert_allclose(result.estimate.chi, TRUTH, rtol=1e-8)
    assert said[0] == "ml: the simulation gives no linearised closed loop: secant sensitivity", said


@pytest.fixture(scope="module")
def five_bar_model(load):
    """The five-bar's model (nominal parameters, drives' friction and offsets 0.05: the truth) with the identification runs' PD tracking
    ``1 - cos`` motions for 0.3 s from rest, its structural base parameters (the pipeline's regrouping on 40
    random states)."""
    from pardyn.control import JointReference  # noqa: PLC0415
    from pardyn.dynamics.regressor import Regressor  # noqa: PLC0415
    from pardyn.identification.base_parameters import base_parameters, symmetric_order  # noqa: PLC0415
    from pardyn.identification.model_simulation import ClosedLoopSetup, ModelSimulator  # noqa: PLC0415
    from pardyn.simulation.identification_runs import controller  # noqa: PLC0415

    robot = load("five_bar")
    regressor = Regressor(robot)
    columns = [k for k, n in enumerate(regressor.names) if not n.endswith("_payload")]
    names = [regressor.names[k] for k in columns]
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(40):
        q = robot.solve_forward(robot.home[robot.actuated_indices] + rng.uniform(-0.05, 0.05, 2), start=robot.home).q
        qdot, qddot = robot.differential.states_from(q, robot.actuated_indices, *rng.standard_normal((2, 2)))
        rows.append(regressor.matrix(q, qdot, qddot)[:, columns])
    base = base_parameters(np.concatenate(rows), names=names, order=symmetric_order(names))
    values = robot.nominal_parameters.as_dict()
    truth = base.from_standard(np.array([values[n] for n in base.standard_names]))
    truth[truth == 0.0] = 0.05  # the drives' friction and offsets (nominal 0): 0.05 N m s/rad, N m
    home = robot.home[robot.actuated_indices]
    amplitude, omega = np.array([0.15, -0.12]), 2 * np.pi * np.array([1.0, 1.4])

    def reference(t):  # from rest at home, within the torque limits (1.4 % of them at most)
        return JointReference(home + amplitude * (1.0 - np.cos(omega * t)), amplitude * omega * np.sin(omega * t),
                              amplitude * omega**2 * np.cos(omega * t))

    setup = ClosedLoopSetup(controller(robot), reference)
    simulator = ModelSimulator(robot, robot.nominal_parameters, base)
    times = np.arange(0.0, 0.3, 1e-3)

    def linearised(chi):
        run, sensitivity = simulator.run_linearised(chi, setup, regressor, start_time=0.0, start=robot.home,
                                                    times=times)
        return run.q[:, robot.actuated_indices], sensitivity

    return robot, base, truth, linearised


def test_linearised_sensitivity_matches_forward_differences_of_the_five_bar_simulation(five_bar_model):
    """Eq. (L1) on the five-bar's closed loop (the law's gains alone, the model's own derivatives in q and qdot
    neglected) against forward differences (relative step 1e-6) of the full simulation: every base column within
    1 % (measured: at most 0.39 %; the friction of 0.05 N m (width 0.02 rad/s) needs its slope: 2.8 % without)."""
    robot, base, chi, linearised = five_bar_model
    positions, sensitivity = linearised(chi)
    S = sensitivity()
    assert S.shape == (*positions.shape, chi.size)
    for i in range(chi.size):
        step = 1e-6 * max(abs(chi[i]), 1e-3)
        shifted = chi.copy()
        shifted[i] += step
        differences = (linearised(shifted)[0] - positions) / step
        error = np.linalg.norm(S[:, :, i] - differences) / np.linalg.norm(differences)
        assert error < 1e-2, (base.names[i], error)


def test_cloe_with_the_linearised_sensitivity_returns_the_five_bar_truth(five_bar_model):
    """Noise-free positions of the five-bar's model in closed loop: CLOE from a start 5 % off returns the base
    parameters to 1e-8 with the sensitivity of eq. (L1)."""
    robot, base, truth, linearised = five_bar_model
    measured = linearised(truth)[0]
    metric = np.random.default_rng(1).standard_normal((4 * truth.size, truth.size))  # the stopping rule's W
    system = LinearSystem(metric, metric @ truth, (len(metric),), tuple(base.names))
    start = truth * (1.0 + 0.05 * np.where(np.arange(truth.size) % 2, 1.0, -1.0))
    result = estimate("cloe", system, OutputErrorOptions(tolerance=1e-12, iterations=30),
                      EstimatorContext(simulate=lambda chi: pytest.fail("a run without its sensitivity"),
                                       simulate_linearised=linearised, positions=measured, start=start,
                                       block_sigmas=np.ones(1)))
    np.testing.assert_allclose(result.estimate.chi, truth, rtol=1e-8)
    assert result.iterations <= 12, result.iterations
