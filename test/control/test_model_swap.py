"""ModelSwap: a law's model replaced without a torque jump (hand-built constant laws)."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.control import ControlLaw, JointReference
from pardyn.control.model_swap import ModelSwap
from pardyn.errors import InputError


class Constant(ControlLaw):
    def __init__(self, value):
        self.value = np.asarray(value, dtype=float)
        self.limits = np.full(2, 100.0)

    def unsaturated(self, position, velocity, reference):
        return self.value


def test_swap_blends_linearly_then_hands_over():
    law = ModelSwap(Constant([0.0, 10.0]), blend_periods=4)
    hold = JointReference.hold(np.zeros(2))
    assert np.allclose(law.torques(np.zeros(2), np.zeros(2), hold), [0.0, 10.0])
    law.swap(Constant([4.0, 2.0]))
    with pytest.raises(InputError, match="already under way"):
        law.swap(Constant([0.0, 0.0]))
    outputs = [law.torques(np.zeros(2), np.zeros(2), hold) for _ in range(6)]
    np.testing.assert_allclose(outputs[:4], [[1, 8], [2, 6], [3, 4], [4, 2]])  # steps of (new - old) / 4
    np.testing.assert_allclose(outputs[4:], [[4, 2], [4, 2]])
    assert not law.blending and law.swaps == 1
