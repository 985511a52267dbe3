"""The vectorized JointState decode equals rosbags' message-by-message deserialization."""

from __future__ import annotations

import numpy as np

from pardyn.bags.reader import _read_joint_state_messages, _read_uniform_joint_states, read_joint_states
from pardyn.bags.writer import typestore_for, write_joint_states


def test_uniform_layout_decodes_like_rosbags(tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(500) * 1e-3 + 12.0  # seconds beyond one second: the nanosecond field is exercised
    names = ["leg1_joint1", "j2", "a_long_joint_name_3"]
    position, velocity, effort = (rng.normal(size=(500, 3)) for _ in range(3))
    bag = write_joint_states(tmp_path / "bag", t, names, position, velocity, effort)
    typestore = typestore_for("kilted")
    fast = _read_uniform_joint_states(bag, "joint_states", typestore)
    slow = _read_joint_state_messages(bag, "joint_states", typestore)
    assert fast is not None
    assert fast[0] == slow[0] and list(fast[1]) == list(slow[1]) and list(fast[2]) == list(slow[2])
    assert fast[3][0] == slow[3][0] == names
    for k in (4, 5, 6):
        np.testing.assert_array_equal(fast[k], np.stack(slow[k]))
    series = read_joint_states(bag)
    np.testing.assert_array_equal(series.position, position)
    np.testing.assert_array_equal(series.effort, effort)


def test_missing_efforts_and_varying_layouts_fall_back(tmp_path):
    t = np.arange(50) * 1e-3
    bag = write_joint_states(tmp_path / "no_effort", t, ["a", "b"], np.ones((50, 2)))
    series = read_joint_states(bag)
    assert np.isnan(series.effort).all() and np.isnan(series.velocity).all()
    np.testing.assert_array_equal(series.position, 1.0)
