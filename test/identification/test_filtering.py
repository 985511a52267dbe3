"""Derivative estimation, parallel filtering and decimation (Briot et al. Sect. 4.1, UR5e Sects. 4.1-4.2).

References, none of them the code under test:

* analytic positions, velocities and accelerations of a sum of sinusoids,
  sampled at 1 kHz, with white noise and the quantization of a 2**17
  counts/rev encoder;
* a causal (one-pass) Butterworth filter, whose lag the cross-correlation
  test must detect, showing that test can see a lag;
* ``scipy.signal.sosfiltfilt`` (odd padding) followed by slicing, for the
  block-recursive decimation filter;
* exact linear relations ``Y = W chi`` and constant signals (unit DC gain);
* an analytic slow signal plus a 120 Hz ripple.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from pardyn.errors import InputError
from pardyn.identification.filtering import (
    check_uniform_sampling,
    cutoff_from_bandwidth,
    decimate,
    decimation_cutoff_hz,
    estimate_derivatives,
    savgol_weights,
    stack_equations,
)

RATE = 1000.0  # Hz
COUNTS_PER_REV = 2**17
AMPLITUDES = np.array([0.5, 0.3, 0.2, 0.1])  # rad
FREQUENCIES = np.array([0.3, 0.7, 1.3, 2.1])  # Hz
PHASES = np.array([0.1, 1.2, 2.3, -0.7])  # rad


def sinusoids(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Analytic q, qdot, qddot of the test trajectory, (samples,)."""
    w = 2 * np.pi * FREQUENCIES
    arg = np.outer(t, w) + PHASES
    q = np.sin(arg) @ AMPLITUDES
    qd = np.cos(arg) @ (AMPLITUDES * w)
    qdd = -np.sin(arg) @ (AMPLITUDES * w**2)
    return q, qd, qdd


def measured(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Noisy (1e-5 rad white noise) and quantized (2**17 counts/rev) positions."""
    quantum = 2 * np.pi / COUNTS_PER_REV
    q = sinusoids(t)[0] + 1e-5 * rng.standard_normal(t.size)
    return np.round(q / quantum) * quantum


@pytest.fixture(scope="module")
def trajectory():
    t = np.arange(20000) / RATE  # 20 s
    rng = np.random.default_rng(7)
    return t, measured(t, rng), sinusoids(t)


def test_cutoff_rules():
    assert cutoff_from_bandwidth(2.0) == pytest.approx(10.0)  # UR5e: 5 x the dynamics bandwidth
    assert cutoff_from_bandwidth(2.0, factor=10) == pytest.approx(20.0)
    assert decimation_cutoff_hz(1000.0, factor=20) == pytest.approx(20.0)  # 0.8 * 1000 / 40
    with pytest.raises(InputError):
        cutoff_from_bandwidth(-1.0)


def test_derivatives_match_analytic(trajectory):
    t, q_meas, (q, qd, qdd) = trajectory
    est = estimate_derivatives(t, q_meas, cutoff_hz=cutoff_from_bandwidth(3.0))  # 15 Hz
    inner = slice(1000, -1000)  # 1 s away from both ends

    def rel(a, b):
        return np.sqrt(np.mean((a[inner] - b[inner]) ** 2)) / np.sqrt(np.mean(b[inner] ** 2))

    # measured relative RMS errors: position 6.5e-6, velocity 7.8e-5, acceleration 6.4e-4
    assert rel(est.q, q) < 3e-5
    assert rel(est.qdot, qd) < 3e-4
    assert rel(est.qddot, qdd) < 3e-3
    # raw central differences of the quantized signal are far worse (the filter matters)
    raw = np.gradient(q_meas, 1 / RATE)
    assert rel(raw, qd) > 10 * rel(est.qdot, qd)
    # edges: the odd extension keeps velocities usable up to the end points (measured 6.7e-3
    # of the peak velocity in the first 0.2 s); accelerations are not (12 % at the first sample,
    # 0.4 % after 50 ms, < 0.1 % after 100 ms): discard ~1.5 / cutoff seconds at both ends
    edge = slice(0, 200)
    assert np.max(np.abs(est.qdot[edge] - qd[edge])) < 0.02 * np.max(np.abs(qd))
    late = slice(100, 200)
    assert np.max(np.abs(est.qddot[late] - qdd[late])) < 3e-3 * np.max(np.abs(qdd))


def test_derivatives_have_no_lag(trajectory):
    t, q_meas, (_, qd, _) = trajectory
    cutoff = 15.0
    est = estimate_derivatives(t, q_meas, cutoff_hz=cutoff)
    lags = np.arange(-60, 61)
    inner = np.arange(2000, 18000)

    def peak_lag(x: np.ndarray) -> int:
        return int(lags[np.argmax([np.dot(x[inner + lag], qd[inner]) for lag in lags])])

    assert peak_lag(est.qdot) == 0
    # a causal single pass of the same Butterworth filter lags (group delay ~ 20 ms):
    causal = signal.sosfilt(signal.butter(4, cutoff, fs=RATE, output="sos"), q_meas)
    assert peak_lag(np.gradient(causal, 1 / RATE)) > 10


def test_derivatives_of_several_joints_and_errors(trajectory):
    t, q_meas, _ = trajectory
    two = np.column_stack([q_meas, 2 * q_meas])
    est = estimate_derivatives(t, two, cutoff_hz=15.0)
    assert est.qddot.shape == two.shape
    np.testing.assert_allclose(est.qdot[:, 1], 2 * est.qdot[:, 0], rtol=1e-12, atol=1e-12)
    bad_t = t.copy()
    bad_t[1234] += 0.0004
    with pytest.raises(InputError, match=r"sample 1234 at t = 1\.2344"):
        estimate_derivatives(bad_t, q_meas, cutoff_hz=15.0)
    with pytest.raises(InputError, match="Nyquist"):
        estimate_derivatives(t, q_meas, cutoff_hz=600.0)
    with pytest.raises(InputError, match="samples"):
        estimate_derivatives(t, q_meas[:-1], cutoff_hz=15.0)
    assert check_uniform_sampling(t) == pytest.approx(1e-3)


@pytest.mark.parametrize(("samples", "factor", "padlen"), [(1200, 10, 150), (1400, 7, 63), (600, 1, 30)])
def test_decimation_equals_scipy_filtfilt(samples, factor, padlen):
    rng = np.random.default_rng(samples)
    y = np.cumsum(rng.standard_normal((samples, 3)), axis=0)
    w = np.cumsum(rng.standard_normal((samples, 3, 4)), axis=0)
    system = decimate(y, w, factor=factor, padlen=padlen)
    sos = signal.butter(4, 0.8 / factor, output="sos")  # cut-off 0.8 f_m / (2 n_d)
    ref_y = signal.sosfiltfilt(sos, y, axis=0, padtype="odd", padlen=padlen)[::factor]
    ref_w = signal.sosfiltfilt(sos, w, axis=0, padtype="odd", padlen=padlen)[::factor]
    k = ref_y.shape[0]
    assert system.block_sizes == (k, k, k)
    np.testing.assert_allclose(system.Y, ref_y.T.reshape(-1), rtol=0, atol=1e-11 * np.abs(ref_y).max())
    np.testing.assert_allclose(
        system.W, ref_w.transpose(1, 0, 2).reshape(3 * k, 4), rtol=0, atol=1e-11 * np.abs(ref_w).max()
    )


@pytest.mark.parametrize(("samples", "factor"), [(3001, 20), (997, 7), (64, 5)])
def test_decimation_keeps_linear_relation(samples, factor):
    rng = np.random.default_rng(factor)
    t = np.arange(samples) / RATE
    slow = np.sin(np.outer(t, rng.uniform(0.5, 5.0, 12)) + rng.uniform(0, 6, 12)).reshape(samples, 2, 6)
    w = slow + 0.1 * rng.standard_normal((samples, 2, 6))  # noisy columns, high-frequency content
    chi = rng.uniform(-2, 2, 6)
    y = w @ chi
    system = decimate(y, w, factor=factor, names=[f"c{k}" for k in range(6)])
    assert system.rows == 2 * -(-samples // factor)
    assert system.names == tuple(f"c{k}" for k in range(6))
    np.testing.assert_allclose(system.Y, system.W @ chi, rtol=0, atol=1e-10 * np.abs(system.Y).max())


def test_decimation_removes_ripple_and_keeps_slow_signal():
    t = np.arange(10000) / RATE
    slow = np.sin(2 * np.pi * 0.5 * t) + 0.3 * np.sin(2 * np.pi * 1.7 * t)
    ripple = 0.2 * np.sin(2 * np.pi * 120.0 * t)
    y = slow + ripple
    w = np.column_stack([slow, ripple])
    system = decimate(y, w, factor=10)  # cut-off 40 Hz
    kept = t[::10]
    inner = slice(20, -20)
    assert np.max(np.abs(system.Y - (np.sin(2 * np.pi * 0.5 * kept) + 0.3 * np.sin(2 * np.pi * 1.7 * kept)))[inner]) < 1e-4
    # the ripple column (120 Hz, 3 x the cut-off): filtfilt gain 1/(1 + 3^8) ~ 1.5e-4
    assert np.max(np.abs(system.W[:, 1])[inner]) < 1e-3 * 0.2
    # without filtering, plain subsampling would alias the ripple into the data
    assert np.max(np.abs(ripple[::10])) > 0.1


def test_decimation_of_constants_and_block_order():
    samples, rows, params = 503, 3, 2
    y = np.tile(np.array([1.0, -2.0, 3.5]), (samples, 1))
    w = np.broadcast_to(np.arange(rows * params, dtype=float).reshape(1, rows, params), (samples, rows, params))
    system = decimate(y, w, factor=4)
    k = -(-samples // 4)
    np.testing.assert_allclose(system.Y, np.repeat([1.0, -2.0, 3.5], k), rtol=1e-12)
    np.testing.assert_allclose(system.W, np.repeat(np.arange(6.0).reshape(3, 2), k, axis=0), rtol=1e-12, atol=1e-12)


def test_stack_equations_orders_row_by_row():
    rng = np.random.default_rng(3)
    y = rng.standard_normal((4, 3))  # (samples, rows)
    w = rng.standard_normal((4, 3, 2))  # (samples, rows, n_params)
    system = stack_equations(y, w, names=["a", "b"])
    assert system.block_sizes == (4, 4, 4) and system.names == ("a", "b")
    np.testing.assert_array_equal(system.Y[4:8], y[:, 1])  # all samples of row 1, then row 2...
    np.testing.assert_array_equal(system.W[8:], w[:, 2, :])


def test_decimation_errors():
    y = np.zeros((100, 2))
    w = np.zeros((100, 2, 3))
    with pytest.raises(InputError, match="factor"):
        decimate(y, w, factor=0)
    with pytest.raises(InputError, match="disagree"):
        decimate(y, w[:, :1], factor=2)
    with pytest.raises(InputError, match="names"):
        decimate(y, w, factor=2, names=["a"])
    with pytest.raises(InputError, match="samples"):
        decimate(y[:20], w[:20], factor=10)


@pytest.mark.parametrize("length", [5, 13, 61])
def test_savgol_weights_are_scipys_savgol_coeffs(length):
    """The online identifier's Savitzky-Golay weights by numpy (scipy.signal costs it ~1 s to import): scipy's
    coefficients for a dot product, every order, derivative, evaluation position and sample period."""
    for order in range(min(length, 7)):
        for derivative in range(4):
            for position in (None, 0, length // 2 + 1, length - 1):
                for period in (1.0, 1e-3):
                    expected = signal.savgol_coeffs(length, order, deriv=derivative, delta=period, pos=position, use="dot")
                    got = savgol_weights(length, order, derivative=derivative, period=period, position=position)
                    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max(initial=1.0))
