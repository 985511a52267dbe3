"""The one velocity filter (pardyn.control.differentiator) against its closed-form transfer function.

Reference: ``v_k = a v_{k-1} + (1 - a)(q_k - q_{k-1}) / T``, ``a = exp(-2 pi f_c T)``, has the frequency
response ``H(z) = (1 - a)(1 - z^-1) / (T (1 - a z^-1))`` at ``z = exp(j w T)``: a sinusoid ``sin(w t)`` comes
out, once the transient is gone, as ``|H| sin(w t + arg H)``. The gain and phase are fitted to the output by
least squares on ``sin``/``cos`` (not read from the filter), for both hosts of the filter: the laws' and the
in-process loop's fixed-period differentiator, and the ROS joint-state readings (periods from the stamps).
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

from pardyn.control.differentiator import SMALL, FilteredDifferentiator
from pardyn.control.joint_state import JointStateFilter

T = 1e-3  # s


def response(cutoff_hz: float, f_hz: float) -> complex:
    a = 0.0 if math.isinf(cutoff_hz) else math.exp(-2 * math.pi * cutoff_hz * T)
    z = cmath.exp(2j * math.pi * f_hz * T)
    return (1 - a) * (1 - 1 / z) / (T * (1 - a / z))


def fitted_gain_phase(t: np.ndarray, v: np.ndarray, w: float) -> tuple[float, float]:
    """``(A, phi)`` of ``v ~ A sin(w t + phi)`` by least squares."""
    (s, c), *_ = np.linalg.lstsq(np.column_stack([np.sin(w * t), np.cos(w * t)]), v, rcond=None)
    return math.hypot(s, c), math.atan2(c, s)


def differentiator_output(cutoff_hz: float, q: np.ndarray) -> np.ndarray:
    filter_ = FilteredDifferentiator(1, period_s=T, cutoff_hz=cutoff_hz)
    return np.array([filter_.update([value])[0] for value in q])


def wide_differentiator_output(cutoff_hz: float, q: np.ndarray) -> np.ndarray:
    """The numpy path: more signals than SMALL (the same sinusoid in each), the first one's output."""
    filter_ = FilteredDifferentiator(SMALL + 1, period_s=T, cutoff_hz=cutoff_hz)
    return np.array([filter_.update(np.full(SMALL + 1, value))[0] for value in q])


def joint_state_output(cutoff_hz: float, q: np.ndarray) -> np.ndarray:
    filter_ = JointStateFilter(cutoff_hz)
    return np.array([filter_.update(["j"], [value], [], k * 1_000_000, 0).velocities[0] for k, value in enumerate(q)])


@pytest.mark.parametrize("host", [differentiator_output, wide_differentiator_output, joint_state_output])
@pytest.mark.parametrize("cutoff_hz, f_hz", [(50.0, 5.0), (50.0, 50.0), (20.0, 120.0)])
def test_a_filtered_sinusoid_has_the_closed_form_gain_and_phase(host, cutoff_hz, f_hz):
    w = 2 * math.pi * f_hz
    t = np.arange(2000) * T
    v = host(cutoff_hz, np.sin(w * t))
    steady = t > 0.5  # a^500 < 1e-27 for f_c >= 20 Hz
    gain, phase = fitted_gain_phase(t[steady], v[steady], w)
    expected = response(cutoff_hz, f_hz)
    assert gain == pytest.approx(abs(expected), rel=1e-9)
    assert phase == pytest.approx(cmath.phase(expected), abs=1e-9)
    assert gain / w < 1.0 if f_hz >= cutoff_hz else abs(gain / w - 1) < 0.02  # a low-pass differentiator


def test_the_raw_difference_and_joints_that_come_and_go():
    raw = FilteredDifferentiator(2, period_s=T, cutoff_hz=math.inf)
    raw.update([0.0, 1.0])
    np.testing.assert_allclose(raw.update([0.002, 0.999]), [2.0, -1.0], rtol=1e-12)  # (q_k - q_{k-1}) / T
    filter_ = FilteredDifferentiator(2, period_s=T, cutoff_hz=50.0)
    filter_.update([0.0, np.nan])  # the second joint not read yet: unknown, at rest
    assert filter_.known().tolist() == [True, False]
    held = filter_.update([1e-3, 5.0]).copy()  # its first reading: at rest
    assert held[1] == 0.0 and filter_.known().all()
    assert filter_.update([np.nan, 5.0])[0] == held[0]  # a missing reading keeps the estimate


def test_the_float_path_of_a_few_signals_gives_the_bits_of_the_numpy_path():
    """A 6-joint reading runs on Python floats (SMALL), a wide one on numpy: the same operations in the same order,
    so the same bits, at a fixed period and at the periods of stamps that jitter."""
    rng = np.random.default_rng(3)
    positions = np.cumsum(rng.normal(0.0, 1e-3, (300, 6)), axis=0)
    periods = T * (1.0 + 0.2 * rng.random(300))
    few = FilteredDifferentiator(6, period_s=T, cutoff_hz=50.0)
    wide = FilteredDifferentiator(SMALL + 6, period_s=T, cutoff_hz=50.0)
    for k, (q, period) in enumerate(zip(positions, periods)):
        given = None if k % 3 else float(period)
        fast = few.update(list(q), period_s=given).copy()
        slow = wide.update(np.concatenate([q, np.zeros(SMALL)]), period_s=given)[:6]
        assert fast.tobytes() == slow.tobytes(), k
