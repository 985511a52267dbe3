"""The registry of control laws: one spelling per law, the node's and every experiment's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.control.computed_torque import ComputedTorque, ExtendedComputedTorque
from pardyn.control.feedforward import AugmentedPD
from pardyn.control.laws import LAWS, make_law, needs_model
from pardyn.control.pd import JointPD
from pardyn.control.pfc import PredictiveFunctionalControl
from pardyn.errors import InputError


def test_every_name_builds_its_law(load):
    assert LAWS == ("pd", "augmented_pd", "ctc", "ctc_task", "extended_ctc", "pfc")
    rrr3 = load("rrr3")
    options = {"kp": (100.0,), "kd": (6.0,), "natural_frequency_hz": 5.0, "damping": 0.7}  # each law takes its own
    built = {name: make_law(name, rrr3, options=options) for name in LAWS}
    expected = {"pd": JointPD, "augmented_pd": AugmentedPD, "ctc": ComputedTorque, "ctc_task": ComputedTorque,
                "extended_ctc": ExtendedComputedTorque, "pfc": PredictiveFunctionalControl}
    assert {name: type(law) for name, law in built.items()} == expected
    omega = 2 * math.pi * 5.0  # Kp = w^2, Kd = 2 xi w
    np.testing.assert_allclose(built["ctc"].kp, omega**2, rtol=1e-15)
    np.testing.assert_allclose(built["ctc_task"].kd, 1.4 * omega, rtol=1e-15)
    assert built["extended_ctc"].joints == tuple(rrr3.measured_names)
    np.testing.assert_array_equal(built["pd"].kp, [100.0, 100.0, 100.0])
    assert [needs_model(name) for name in LAWS] == [False, True, True, True, True, True]


def test_errors_name_what_is_wrong(load):
    robot = load("five_bar")
    with pytest.raises(InputError, match=r"unknown control law 'ctc_extended', expected one of \['pd'"):
        make_law("ctc_extended", robot)
    with pytest.raises(InputError, match="the PD law needs gains"):
        make_law("pd", robot)
    with pytest.raises(InputError, match="ctc_kp and ctc_kd: give both or neither"):
        make_law("ctc", robot, options={"ctc_kp": (100.0,)})
    law = make_law("ctc", robot, options={"ctc_kp": (100.0,), "ctc_kd": (20.0,)}, limits=(3.0,))
    np.testing.assert_array_equal(law.kd, [20.0, 20.0])
    np.testing.assert_array_equal(law.limits, [3.0, 3.0])
