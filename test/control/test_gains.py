"""Gain helpers (pardyn.control.gains) against the closed forms of a second-order system."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal

from pardyn.control.gains import ctc_gains, gains_from_step_response
from pardyn.errors import InputError


def test_ctc_gains_are_the_second_order_coefficients():
    kp, kd = ctc_gains(5.0, 0.7)
    omega = 2 * math.pi * 5.0
    assert kp == pytest.approx(omega**2, rel=1e-15) and kd == pytest.approx(1.4 * omega, rel=1e-15)
    with pytest.raises(InputError, match="damping"):
        ctc_gains(5.0, 0.0)


def test_gains_give_the_papers_step_response():
    frequency, damping = gains_from_step_response(overshoot=0.10, peak_time_s=0.1)
    omega = 2 * math.pi * frequency
    t = np.linspace(0.0, 0.5, 50001)
    _, y = signal.step(signal.lti([omega**2], [1.0, 2 * damping * omega, omega**2]), T=t)
    assert y.max() - 1.0 == pytest.approx(0.10, abs=1e-4)
    assert t[np.argmax(y)] == pytest.approx(0.1, abs=1e-4)
