"""Joint-state readings of real drivers (issue 20, items 14-15): velocity estimates and stamp checks.

References: the closed-form response of the filter to a ramp, v_k = v0 (1 - a^k), and its
frequency response (1 - a)(1 - z^-1) / (T (1 - a z^-1)) at z = exp(j w T) on a sinusoid.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

from pardyn.control.joint_state import JointStateFilter

PERIOD_NS = 1_000_000


def test_a_ramp_is_estimated_as_the_closed_form_step_response():
    cutoff = 20.0
    estimator = JointStateFilter(cutoff)
    a = math.exp(-2 * math.pi * cutoff * 1e-3)
    v0 = 0.7  # rad/s
    for k in range(200):
        state = estimator.update(["j"], [v0 * k * 1e-3], [], k * PERIOD_NS, k * PERIOD_NS)
        expected = 0.0 if k == 0 else v0 * (1.0 - a**k)
        assert state.velocities[0] == pytest.approx(expected, rel=1e-9, abs=1e-12), k
        assert state.estimated_missing == ("j",) and state.stamp == "new"


def test_a_sinusoid_is_estimated_with_the_filters_frequency_response():
    cutoff, f = 30.0, 3.0
    T = 1e-3
    a = math.exp(-2 * math.pi * cutoff * T)
    w = 2 * math.pi * f
    z = cmath.exp(1j * w * T)
    gain = (1 - a) * (1 - 1 / z) / (T * (1 - a / z))  # estimate / position, per unit complex exponential
    estimator = JointStateFilter(cutoff)
    errors = []
    for k in range(3000):
        t = k * T
        # NaN velocity on joint "b" (a broadcaster without a velocity interface), a true reading on "a"
        state = estimator.update(["a", "b"], [0.0, math.sin(w * t)], [1.0, math.nan], k * PERIOD_NS, 0)
        assert state.estimated_nan == ("b",) and state.velocities[0] == 1.0
        if k > 1000:  # transient gone (a^1000 ~ 1e-82)
            expected = (gain * cmath.exp(1j * w * t)).imag
            errors.append(abs(state.velocities[1] - expected))
    assert max(errors) < 1e-9
    # and the estimate is close to the true derivative at a low frequency: |gain / (j w)| - 1 small
    assert abs(abs(gain) / w - 1) < 0.01


def test_stamps_resend_repeated_backwards():
    estimator = JointStateFilter(50.0)
    first = estimator.update(["j"], [0.0], [0.0], 5 * PERIOD_NS, 100)
    assert first.stamp == "new" and first.time_ns == 5 * PERIOD_NS
    assert estimator.update(["j"], [0.0], [0.0], 5 * PERIOD_NS, 200).stamp == "resend"  # same stamp, same q
    repeated = estimator.update(["j"], [0.05], [], 5 * PERIOD_NS, 100 + 2 * PERIOD_NS)  # same stamp, new q
    assert repeated.stamp == "repeated" and repeated.time_ns == 7 * PERIOD_NS  # reception interval 2 ms
    assert repeated.velocities[0] > 0.0  # the motion is seen: 0.05 rad in 2 ms
    zero = estimator.update(["j"], [0.10], [], 0, 100 + 3 * PERIOD_NS)  # a zero stamp after real ones
    assert zero.stamp == "backwards" and zero.time_ns == 8 * PERIOD_NS
    assert estimator.update(["j"], [0.10], [], 9 * PERIOD_NS, 0).stamp == "new"


def test_the_cutoff_must_be_positive():
    with pytest.raises(ValueError, match="cut-off"):
        JointStateFilter(0.0)
    assert np.isnan(JointStateFilter(1.0).velocity("unknown"))
