"""Command checks and the safe command (issue 20, items 1 and 16)."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.control.safety import CommandRejected, SafeCommand, check_command, joint_label, label_joint_names

NAMES = ["leg1_joint1", "leg2_joint1", "leg3_joint1", "leg4_joint1"]
LIMITS = np.array([127.0] * 4)


def reason(data, **options):
    with pytest.raises(CommandRejected) as raised:
        check_command(data, NAMES, LIMITS, **options)
    return raised.value.reason, str(raised.value)


def test_a_runaway_command_is_refused_not_saturated():
    why, text = reason([1e9, 0.0, 0.0, 0.0])
    assert why == "implausible" and "leg1_joint1 1e+09" in text and "10x" in text
    # within 10x of the limit: accepted (the receiver saturates it)
    np.testing.assert_array_equal(check_command([1270.0, -5.0, 0.0, 1.0], NAMES, LIMITS), [1270.0, -5.0, 0.0, 1.0])


def test_every_reason_is_named():
    assert reason([1.0, 2.0])[0] == "length"
    assert reason([1.0, float("nan"), 0.0, 0.0])[0] == "non_finite"
    label = joint_label(list(reversed(NAMES)))
    why, text = reason([0.0] * 4, label=label)
    assert why == "joint_names" and "leg4_joint1" in text and "robot.actuated_names" in text


def test_layout_labels_name_joints_only_when_they_split_into_one_name_per_value():
    assert label_joint_names(joint_label(NAMES), 4) == NAMES
    assert label_joint_names("joints", 4) is None and label_joint_names("", 4) is None
    assert label_joint_names("a,b", 4) is None
    np.testing.assert_array_equal(check_command([1.0] * 4, NAMES, LIMITS, label="joints"), [1.0] * 4)
    np.testing.assert_array_equal(check_command([1.0] * 4, NAMES, LIMITS, label=joint_label(NAMES)), [1.0] * 4)


def test_safe_commands():
    zero = SafeCommand("zero", LIMITS, 5.0)
    np.testing.assert_array_equal(zero(np.array([1.0, 2.0, 3.0, 4.0])), np.zeros(4))
    damping = SafeCommand("damping", LIMITS, 5.0)
    np.testing.assert_array_equal(damping(np.array([1.0, -2.0, 100.0, 0.0])), [-5.0, 10.0, -127.0, 0.0])
    np.testing.assert_array_equal(damping(None), np.zeros(4))
    with pytest.raises(Exception, match="unknown kind"):
        SafeCommand("brake", LIMITS)
