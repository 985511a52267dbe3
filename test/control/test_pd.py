"""The joint PD law and the actuator torque limits, against hand computations and the URDF text."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from pardyn.control import JointReference, actuator_limits, saturate
from pardyn.control.pd import JointPD
from pardyn.errors import InputError


def test_pd_torques_match_a_hand_computation_and_saturate_per_actuator():
    pd = JointPD([10.0, 20.0], [1.0, 2.0], limits=[5.0, 100.0])
    reference = JointReference(np.array([0.3, 0.1]), np.array([0.0, 1.0]), np.zeros(2))
    # tau_1 = 10 (0.3 - 0.1) + 1 (0 - 0.5) = 1.5 ; tau_2 = 20 (0.1 + 0.2) + 2 (1 - 0) = 8
    np.testing.assert_allclose(pd.torques([0.1, -0.2], [0.5, 0.0], reference), [1.5, 8.0], rtol=0, atol=1e-15)
    # tau_1 = 10 (1.0 - 0.1) - 0.5 = 8.5 > 5: clipped; tau_2 = 20 (-5.0 + 0.2) + 2 = -94 within 100
    far = JointReference(np.array([1.0, -5.0]), np.array([0.0, 1.0]), np.zeros(2))
    np.testing.assert_allclose(pd.torques([0.1, -0.2], [0.5, 0.0], far), [5.0, -94.0], rtol=0, atol=1e-13)
    # and symmetrically below -limit
    np.testing.assert_allclose(pd.torques([0.1, -0.2], [0.5, 0.0], JointReference.hold([-1.0, -10.0])),
                               [-5.0, -100.0], rtol=0, atol=0)


def test_pd_with_one_gain_for_all_and_a_held_setpoint():
    pd = JointPD(4.0, 0.5, limits=[10.0, 10.0, 10.0])
    tau = pd.torques([0.0, 0.1, 0.2], [1.0, 0.0, -2.0], JointReference.hold([0.5, 0.5, 0.5]))
    np.testing.assert_allclose(tau, [4 * 0.5 - 0.5, 4 * 0.4, 4 * 0.3 + 1.0], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(pd.kp, [4.0] * 3)


@pytest.mark.parametrize(
    ("kp", "kd", "limits", "text"),
    [
        ([1.0, -1.0], [0.0, 0.0], [1.0, 1.0], "PD gains kp: must be >= 0"),
        ([1.0, 1.0, 1.0], [0.0, 0.0], [1.0, 1.0], "PD gains kp: expected 2 values, got 3"),
        ([1.0, 1.0], [0.0, math.nan], [1.0, 1.0], "PD gains kd: non-finite values at indices [1]"),
        ([1.0, 1.0], [0.0, 0.0], [1.0, 0.0], "PD limits: expected positive finite torque limits"),
    ],
)
def test_pd_rejects_bad_gains_and_limits(kp, kd, limits, text):
    with pytest.raises(InputError, match=re.escape(text)):
        JointPD(kp, kd, limits=limits)


def test_pd_rejects_non_finite_or_missized_measurements():
    pd = JointPD(1.0, 1.0, limits=[1.0, 1.0])
    with pytest.raises(InputError, match=re.escape("measured positions: non-finite values at indices [1]")):
        pd.torques([0.0, math.inf], [0.0, 0.0], JointReference.hold([0.0, 0.0]))
    with pytest.raises(InputError, match=re.escape("measured velocities: expected 2 values, got 3")):
        pd.torques([0.0, 0.0], [0.0, 0.0, 0.0], JointReference.hold([0.0, 0.0]))
    with pytest.raises(InputError, match=re.escape("reference positions: expected 2 values, got 1")):
        pd.torques([0.0, 0.0], [0.0, 0.0], JointReference.hold([0.0]))


def test_saturate_is_a_per_actuator_clip():
    np.testing.assert_array_equal(saturate(np.array([3.0, -3.0, 0.5]), np.array([1.0, 2.0, 1.0])), [1.0, -2.0, 0.5])


def _urdf_effort_limits(path, names):
    """``<limit effort>`` of the named joints, read from the URDF text (not through pinocchio)."""
    root = ElementTree.parse(path).getroot()
    efforts = {
        j.get("name"): float(j.find("limit").get("effort")) for j in root.iter("joint") if j.find("limit") is not None
    }
    return [efforts[name] for name in names]


@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar"])
def test_actuator_limits_default_to_the_urdf_effort_limits(load, name):
    robot = load(name)
    from pardyn.resources import resolve_path, share_directory

    urdf = resolve_path(f"package://pardyn/urdf/{name}.urdf", relative_to=share_directory())
    expected = _urdf_effort_limits(urdf, robot.actuated_names)
    np.testing.assert_array_equal(actuator_limits(robot), expected)
    np.testing.assert_array_equal(actuator_limits(robot, []), expected)


def test_actuator_limit_overrides_and_their_errors(load):
    robot = load("dualv")
    np.testing.assert_array_equal(actuator_limits(robot, [2.5]), [2.5] * 4)
    np.testing.assert_array_equal(actuator_limits(robot, [1.0, 2.0, 3.0, 4.0]), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(InputError, match=re.escape("expected 1 or 4 values")):
        actuator_limits(robot, [1.0, 2.0])
    with pytest.raises(InputError, match=re.escape("the limits of ['leg3_joint1'] must be positive")):
        actuator_limits(robot, [1.0, 2.0, -3.0, 4.0])
