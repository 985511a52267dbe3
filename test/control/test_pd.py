"""The joint PD law and the actuator torque limits, against hand computations and the URDF text."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import yaml
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


# realistic per-actuator limits in each robot YAML (issue 20, items 1 and 17): N m, N for prismatic drives
PUBLISHED_LIMITS = {
    "dualv": [127.0] * 4,  # ETEL RTMB0140-100 direct drives, "maximal torques of 127 Nm" (Briot et al. 2015, sec. 5.1)
    "ur5e": [150.0, 150.0, 150.0, 28.0, 28.0, 28.0],  # UR5e data sheet: size-3 joints 150 N m, size-1 joints 28 N m
    "h4": [15.0] * 4,  # our assumption, documented in h4.yaml (the paper gives none)
    "hexapod": [500.0] * 6,  # Wolfram SixDOFLeg maxForce (N), documented in hexapod.yaml
}


@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar", "h4", "ur5e", "wu3r", "wu3n", "delta", "hexapod"])
def test_actuator_limits_come_from_the_robot_yaml(load, name):
    robot = load(name)
    from pardyn.resources import robots_directory

    raw = yaml.safe_load((robots_directory() / f"{name}.yaml").read_text())["limits"]["effort"]
    expected = [float(raw[joint]) for joint in robot.actuated_names]
    np.testing.assert_array_equal(actuator_limits(robot), expected)
    np.testing.assert_array_equal(actuator_limits(robot, []), expected)
    if name in PUBLISHED_LIMITS:
        assert expected == PUBLISHED_LIMITS[name]
    assert max(expected) < 1000.0 or name.startswith("wu")  # not the URDFs' placeholder 1000 N m


def test_actuator_limits_fall_back_to_the_urdf_without_a_limits_section(load, tmp_path):
    robot = load("five_bar")
    from pardyn.resources import resolve_path, robots_directory, share_directory

    text = yaml.safe_load((robots_directory() / "five_bar.yaml").read_text())
    text.pop("limits", None)
    text["urdf"] = str(resolve_path(text["urdf"], relative_to=share_directory()))
    path = tmp_path / "five_bar_no_limits.yaml"
    path.write_text(yaml.safe_dump(text))
    bare = load(str(path))
    urdf = resolve_path("package://pardyn/urdf/five_bar.urdf", relative_to=share_directory())
    np.testing.assert_array_equal(actuator_limits(bare), _urdf_effort_limits(urdf, robot.actuated_names))


def test_a_bad_limits_section_names_the_file_and_the_joint(load, tmp_path):
    from pardyn.errors import DescriptionError
    from pardyn.resources import resolve_path, robots_directory, share_directory

    text = yaml.safe_load((robots_directory() / "five_bar.yaml").read_text())
    text["urdf"] = str(resolve_path(text["urdf"], relative_to=share_directory()))
    text["limits"] = {"effort": {"leg1_joint1": 20.0}}
    path = tmp_path / "five_bar_bad_limits.yaml"
    path.write_text(yaml.safe_dump(text))
    with pytest.raises(DescriptionError, match=re.escape("five_bar_bad_limits.yaml: limits.effort")) as raised:
        actuator_limits(load(str(path)))
    assert "leg2_joint1" in str(raised.value)


def test_actuator_limit_overrides_and_their_errors(load):
    robot = load("dualv")
    np.testing.assert_array_equal(actuator_limits(robot, [2.5]), [2.5] * 4)
    np.testing.assert_array_equal(actuator_limits(robot, [1.0, 2.0, 3.0, 4.0]), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(InputError, match=re.escape("expected 1 or 4 values")):
        actuator_limits(robot, [1.0, 2.0])
    with pytest.raises(InputError, match=re.escape("the limits of ['leg3_joint1'] must be positive")):
        actuator_limits(robot, [1.0, 2.0, -3.0, 4.0])
