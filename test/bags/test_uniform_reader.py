"""The vectorized JointState decode equals rosbags' message-by-message deserialization."""

from __future__ import annotations

import numpy as np

from pardyn.bags.cdr import typestore_for
from pardyn.bags.joint_states import (
    _read_joint_state_messages,
    _read_uniform_joint_states,
    read_joint_states,
    write_joint_states,
)


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


def test_bag_errors_survive_pickling():
    """Worker processes send their errors back by pickle: a BagError must come back whole."""
    import pickle

    from pardyn.bags import BagError, BagIncompleteError
    from pardyn.errors import SingularityError

    error = pickle.loads(pickle.dumps(BagError("stamps not increasing", bag="/b", kind="stamps", topic="/js", t_s=1.5)))
    assert (str(error), error.kind, error.topic, error.t_s) == ("/b: topic /js: stamps not increasing", "stamps", "/js", 1.5)
    incomplete = pickle.loads(pickle.dumps(BagIncompleteError("not closed", bag="/b")))
    assert isinstance(incomplete, BagIncompleteError) and incomplete.kind == "incomplete"
    singular = pickle.loads(pickle.dumps(SingularityError("parallel", kind="parallel", condition=1e9)))
    assert (singular.kind, singular.condition, str(singular)) == ("parallel", 1e9, "parallel")


def test_exact_retransmissions_are_dropped_on_request_but_a_changed_repeat_is_an_error(tmp_path):
    import pytest

    from pardyn.bags import BagError

    t = np.array([0.0, 0.0, 0.0, 0.001, 0.002])  # state 0 sent three times, as the lockstep sim does
    position = np.array([[1.0], [1.0], [1.0], [2.0], [3.0]])
    bag = write_joint_states(tmp_path / "resent", t, ["a"], position, effort=position)
    with pytest.raises(BagError, match="duplicated stamp"):
        read_joint_states(bag)
    series = read_joint_states(bag, drop_resent=True)
    np.testing.assert_array_equal(series.t, [0.0, 0.001, 0.002])
    np.testing.assert_array_equal(series.position[:, 0], [1.0, 2.0, 3.0])
    changed = write_joint_states(tmp_path / "changed", t, ["a"], position + np.array([[0], [0.5], [0], [0], [0]]))
    with pytest.raises(BagError, match="duplicated stamp"):
        read_joint_states(changed, drop_resent=True)
