"""ModelSwap: a law's model replaced without a torque jump (hand-built constant laws)."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.control import ControlLaw, JointReference
from pardyn.control.model_swap import ModelSwap, swap_model
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


def test_swap_model_wraps_once_and_refuses_without_building_while_blending():
    hold = JointReference.hold(np.zeros(2))
    built = []

    def build(value):
        def make():
            built.append(value)
            return Constant(value)
        return make

    law = swap_model(Constant([0.0, 0.0]), build([2.0, 2.0]), blend_periods=2)
    assert isinstance(law, ModelSwap) and law.blending and law.blend_periods == 2
    with pytest.raises(InputError, match=r"under way \(0 of 2 periods"):
        swap_model(law, build([9.0, 9.0]))
    assert built == [[2.0, 2.0]]  # the refused request built nothing
    outputs = [law.torques(np.zeros(2), np.zeros(2), hold) for _ in range(3)]
    np.testing.assert_allclose(outputs, [[1, 1], [2, 2], [2, 2]])
    again = swap_model(law, build([0.0, 4.0]), blend_periods=50)  # the same wrapper, its own blend length
    assert again is law and law.blend_periods == 2
    np.testing.assert_allclose(law.torques(np.zeros(2), np.zeros(2), hold), [1.0, 3.0])


def test_swap_model_leaves_the_law_unchanged_when_the_new_one_fails():
    law = ModelSwap(Constant([1.0, 1.0]), blend_periods=3)

    def broken():
        raise InputError("bad parameters file")

    with pytest.raises(InputError, match="bad parameters file"):
        swap_model(law, broken)
    assert not law.blending
    np.testing.assert_allclose(law.torques(np.zeros(2), np.zeros(2), JointReference.hold(np.zeros(2))), [1.0, 1.0])
