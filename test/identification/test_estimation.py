"""OLS, WLS, standard deviations, essential parameters, payload systems (Briot et al. eqs. 44-49).

References, none of them the code under test:

* synthetic linear models ``Y = W chi + noise`` with known ``chi`` and noise;
* Monte-Carlo spreads of the estimates over repeated noise draws (eq. 47's
  prediction must match them, eq. 46 must be unbiased);
* ``numpy.linalg.lstsq``, ``numpy.linalg.inv`` of the normal matrix and the
  closed-form weighted least squares ``(W^T D W)^-1 W^T D Y``;
* ``numpy.linalg.cond`` (SVD) for the condition number.
"""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.errors import InputError
from pardyn.identification.base_parameters import base_parameters
from pardyn.identification.least_squares import (
    LinearSystem,
    condition_number,
    essential_parameters,
    ols,
    payload_system,
    stack_systems,
    wls,
)


def columns(rng: np.random.Generator, rows: int, scales) -> np.ndarray:
    return rng.standard_normal((rows, len(scales))) * np.asarray(scales)


def test_ols_recovers_parameters():
    rng = np.random.default_rng(0)
    w = columns(rng, 2000, [1.0, 5.0, 0.2, 3.0, 1.0, 10.0])
    chi = np.array([1.5, -0.3, 4.0, 0.8, -2.0, 0.05])
    y = w @ chi + 0.1 * rng.standard_normal(2000)
    est = ols(w, y, names=list("abcdef"))
    np.testing.assert_allclose(est.chi, np.linalg.lstsq(w, y, rcond=None)[0], rtol=1e-10)
    assert np.all(np.abs(est.chi - chi) < 4 * est.std)
    assert est.sigma_rho == pytest.approx(0.1, rel=0.05)
    residual = y - w @ est.chi
    assert est.sigma_rho**2 == pytest.approx(residual @ residual / (2000 - 6), rel=1e-10)  # eq. (46)
    np.testing.assert_allclose(est.covariance, est.sigma_rho**2 * np.linalg.inv(w.T @ w), rtol=1e-8)  # eq. (47)
    np.testing.assert_allclose(est.relative_std, 100 * est.std / np.abs(est.chi))
    np.testing.assert_allclose(est.prediction, w @ est.chi)
    assert est.relative_error == pytest.approx(np.linalg.norm(residual) / np.linalg.norm(y))
    assert est.condition_number == pytest.approx(np.linalg.cond(w), rel=1e-8)
    assert est.names == tuple("abcdef") and "relative error" in est.table()


def test_standard_deviations_match_monte_carlo():
    rng = np.random.default_rng(1)
    w = columns(rng, 300, [1.0, 2.0, 0.5, 4.0])
    chi = np.array([1.0, -1.0, 2.0, 0.5])
    sigma = 0.5
    estimates, predicted, variances = [], [], []
    for _ in range(200):
        est = ols(w, w @ chi + sigma * rng.standard_normal(300))
        estimates.append(est.chi)
        predicted.append(est.std)
        variances.append(est.sigma_rho**2)
    spread = np.std(estimates, axis=0, ddof=1)
    np.testing.assert_allclose(spread, np.mean(predicted, axis=0), rtol=0.15)  # eq. (47)
    np.testing.assert_allclose(np.mean(estimates, axis=0), chi, atol=4 * spread.max() / np.sqrt(200))
    assert np.mean(variances) == pytest.approx(sigma**2, rel=0.03)  # eq. (46) is unbiased


def block_data(rng, sigmas=(0.02, 1.0), rows=500):
    w = columns(rng, rows * len(sigmas), [1.0, 2.0, 0.5])
    chi = np.array([1.0, -2.0, 3.0])
    noise = np.concatenate([s * rng.standard_normal(rows) for s in sigmas])
    return w, chi, w @ chi + noise, (rows,) * len(sigmas)


def test_wls_beats_ols_with_unequal_block_noise():
    rng = np.random.default_rng(2)
    w, chi, _, sizes = block_data(rng)
    errors_ols, errors_wls, wls_est, wls_std = [], [], [], []
    for _ in range(150):
        y = w @ chi + np.concatenate([0.02 * rng.standard_normal(500), rng.standard_normal(500)])
        a = ols(w, y, block_sizes=sizes)
        b = wls(w, y, block_sizes=sizes)
        errors_ols.append(np.sum((a.chi - chi) ** 2))
        errors_wls.append(np.sum((b.chi - chi) ** 2))
        wls_est.append(b.chi)
        wls_std.append(b.std)
    assert np.mean(errors_wls) < 0.05 * np.mean(errors_ols)  # theory: ~ (0.02 / 1)^2 * 2
    # eq. (47) on the weighted system predicts the WLS spread
    np.testing.assert_allclose(np.std(wls_est, axis=0, ddof=1), np.mean(wls_std, axis=0), rtol=0.15)


def test_wls_weights_and_closed_form():
    rng = np.random.default_rng(3)
    w, chi, y, sizes = block_data(rng)
    est = wls(w, y, block_sizes=sizes, names=["a", "b", "c"])
    # eq. (48): sigma_j from an OLS on block j alone, numpy's lstsq as reference
    ref = []
    for s in (slice(0, 500), slice(500, 1000)):
        sol = np.linalg.lstsq(w[s], y[s], rcond=None)[0]
        ref.append(np.linalg.norm(y[s] - w[s] @ sol) / np.sqrt(500 - 3))
    np.testing.assert_allclose(est.block_sigmas, ref, rtol=1e-10)
    np.testing.assert_allclose(est.block_sigmas, [0.02, 1.0], rtol=0.1)
    d = np.repeat(1 / np.asarray(ref) ** 2, 500)
    closed = np.linalg.solve(w.T @ (d[:, None] * w), w.T @ (d * y))
    np.testing.assert_allclose(est.chi, closed, rtol=1e-9)
    assert est.sigma_rho == pytest.approx(1.0, rel=0.1)  # normalized errors
    # relative errors are those of the unweighted system
    assert est.block_relative_errors[1] == pytest.approx(
        np.linalg.norm(y[500:] - w[500:] @ est.chi) / np.linalg.norm(y[500:])
    )
    # "global" block deviations: residual of the global OLS on each block
    glob = wls(w, y, block_sizes=sizes, block_sigma="global")
    first = np.linalg.lstsq(w, y, rcond=None)[0]
    expected = [np.linalg.norm(y[s] - w[s] @ first) / np.sqrt(500 - 3 * 500 / 1000)
                for s in (slice(0, 500), slice(500, 1000))]
    np.testing.assert_allclose(glob.block_sigmas, expected, rtol=1e-10)


def test_wls_block_with_rank_deficient_observation_matrix():
    rng = np.random.default_rng(4)
    w, chi, y, sizes = block_data(rng)
    w[:500, 2] = 0.0  # parameter c acts on the second block only
    y = w @ chi + np.concatenate([0.02 * rng.standard_normal(500), rng.standard_normal(500)])
    est = wls(w, y, block_sizes=sizes)
    sol = np.linalg.lstsq(w[:500, :2], y[:500], rcond=None)[0]
    assert est.block_sigmas[0] == pytest.approx(np.linalg.norm(y[:500] - w[:500, :2] @ sol) / np.sqrt(500 - 2), rel=1e-9)


def test_wls_on_noise_free_data_is_ols():
    rng = np.random.default_rng(5)
    w, chi, _, sizes = block_data(rng)
    est = wls(w, w @ chi, block_sizes=sizes)
    np.testing.assert_array_equal(est.block_sigmas, [1.0, 1.0])
    np.testing.assert_allclose(est.chi, chi, rtol=1e-12)


def essential_data(rng, rows=1000):
    w = columns(rng, rows, [1.0] * 7)
    chi = np.array([1.0, 1.1, 0.9, 1.0, 0.05, 0.0, 0.0])  # a small real effect, two without any
    return w, chi, w @ chi + 0.1 * rng.standard_normal(rows)


def test_essential_parameters_remove_useless_ones():
    w, chi, y = essential_data(np.random.default_rng(6))
    names = ["a", "b", "c", "d", "small", "none1", "none2"]
    # the paper's rule alone (no fit tolerance), WLS, r_sigma = 10
    result = essential_parameters(w, y, names=names, block_sizes=(500, 500), fit_tolerance=np.inf)
    assert result.stopped_by == "ratio"
    assert {r.name for r in result.removed[:2]} == {"none1", "none2"}
    assert [r.name for r in result.removed] == [result.removed[0].name, result.removed[1].name, "small"]
    assert all(r.ratio >= 10 for r in result.removed)
    np.testing.assert_array_equal(result.kept, [0, 1, 2, 3])
    assert result.ratio < 10
    rel = result.estimate.relative_std
    assert result.ratio == pytest.approx(rel.max() / rel.min())
    assert result.estimate.names == ("a", "b", "c", "d")
    np.testing.assert_allclose(result.estimate.chi, chi[:4], atol=4 * result.estimate.std.max() + 0.01)
    # the final estimate is the WLS of the kept columns
    np.testing.assert_allclose(result.estimate.chi, wls(w[:, :4], y, block_sizes=(500, 500)).chi, rtol=1e-12)


def test_essential_parameters_stop_at_the_ratio():
    w, _, y = essential_data(np.random.default_rng(6))
    result = essential_parameters(w, y, method="ols", ratio=30.0, fit_tolerance=np.inf)
    assert sorted(r.index for r in result.removed) == [5, 6]  # %sigma(small) / %sigma(others) ~ 20 < 30
    np.testing.assert_array_equal(result.kept, [0, 1, 2, 3, 4])
    assert 10 < result.ratio < 30
    assert len(essential_parameters(w, y, method="ols", ratio=1.0001, min_parameters=3, fit_tolerance=np.inf).kept) == 3


def test_essential_parameters_keep_a_significant_small_parameter():
    """'small' (0.05, t-statistic ~16 over 1000 rows of noise 0.1) raises the error norm by ~12 %: kept at 5 %."""
    w, chi, y = essential_data(np.random.default_rng(6))
    result = essential_parameters(w, y, block_sizes=(500, 500))
    np.testing.assert_array_equal(result.kept, [0, 1, 2, 3, 4])
    assert result.stopped_by == "fit" and result.ratio >= 10
    base = wls(w, y, block_sizes=(500, 500)).relative_error
    assert result.estimate.relative_error <= 1.05 * base
    # the next removal (the paper's) leaves the tolerance: sqrt(0.1^2 + 0.05^2) / 0.1 ~ 1.12
    assert wls(w[:, :4], y, block_sizes=(500, 500)).relative_error > 1.05 * base


def test_payload_system_separates_payload_from_platform():
    rng = np.random.default_rng(7)
    names = ("m_platform", "zz_platform", "m_payload")
    chi = np.array([2.0, 0.3, 5.37])

    def trajectory(loaded: bool) -> LinearSystem:
        w = columns(rng, 400, [9.81, 1.0, 9.81])
        w[:, 2] = w[:, 0] if loaded else 0.0  # the payload moves exactly like the platform
        return LinearSystem(w, w @ chi + 0.05 * rng.standard_normal(400), (200, 200), names)

    unloaded, loaded = trajectory(False), trajectory(True)
    assert base_parameters(loaded.W, names=names).relations == ("m_platformR = m_platform + 1.0*m_payload",)
    system = payload_system(unloaded, loaded, payload=["m_payload"])
    np.testing.assert_array_equal(system.W[:400, 2], 0.0)  # eq. (49): [[W_a, 0], [W_b, W_l]]
    np.testing.assert_array_equal(system.W[400:], loaded.W)
    assert system.block_sizes == (200, 200, 200, 200) and system.names == names
    assert base_parameters(system.W).n_base == 3
    est = wls(system.W, system.Y, block_sizes=system.block_sizes, names=system.names)
    assert abs(est.chi[2] - 5.37) < 4 * est.std[2]
    # an unloaded system without payload columns gets zero columns inserted
    robot_only = LinearSystem(unloaded.W[:, :2], unloaded.Y, unloaded.block_sizes, names[:2])
    np.testing.assert_array_equal(payload_system(robot_only, loaded, payload=[2]).W, system.W)
    with pytest.raises(InputError, match="not a column"):
        payload_system(unloaded, loaded, payload=["m_tool"])


def test_stack_systems_and_errors():
    rng = np.random.default_rng(8)
    a = LinearSystem(rng.standard_normal((10, 2)), rng.standard_normal(10), (5, 5), ("x", "y"))
    b = LinearSystem(rng.standard_normal((6, 2)), rng.standard_normal(6), (), ("x", "y"))
    both = stack_systems(a, b)
    assert both.block_sizes == (5, 5, 6) and both.rows == 16
    with pytest.raises(InputError, match="other parameters"):
        stack_systems(a, LinearSystem(b.W, b.Y, (), ("x", "z")))
    w = rng.standard_normal((50, 3))
    w[:, 2] = w[:, 0] + 2 * w[:, 1]
    with pytest.raises(InputError, match=r"column 2 \(c\)"):
        ols(w, rng.standard_normal(50), names=["a", "b", "c"])
    with pytest.raises(InputError, match="block sizes"):
        ols(w[:, :2], rng.standard_normal(50), block_sizes=(10, 10))
    with pytest.raises(InputError, match="method"):
        essential_parameters(w[:, :2], rng.standard_normal(50), method="gls")
    assert condition_number(w[:, :2]) == pytest.approx(np.linalg.cond(w[:, :2]), rel=1e-10)
