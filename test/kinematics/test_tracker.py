"""ClosureTracker: warm-started forward kinematics of named joint readings (the closure_solver node's core).

The node's answers are checked end to end against the inverse problem and finite
differences in ``test/nodes/test_closure_solver.py``; here, the rejections.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from pardyn import ConvergenceError
from pardyn.kinematics.tracker import ClosureTracker, JointStateError

POSITION_TOL = 1e-9  # m, rad


def test_tracker_rejections_name_the_problem_and_keep_the_warm_start(load):
    dualv = load("dualv")
    tracker = ClosureTracker(dualv)
    names = list(dualv.actuated_names)
    q = dualv.solve_inverse((0.02, 0.0, 0.05)).q
    tracker.update(names, q[dualv.actuated_indices])
    start = tracker.start
    np.testing.assert_allclose(start, q, atol=POSITION_TOL)
    readings = q[dualv.actuated_indices]  # (4,)
    cases = [
        ((names + [names[0]], np.r_[readings, 0.0]), "names", "duplicated joint names ['leg1_joint1']"),
        ((names, readings, [0.0, 0.0]), "lengths", "4 names but 2 velocities"),
        ((names[1:], readings[1:]), "names", "missing actuated joints ['leg1_joint1']"),
    ]
    for arguments, kind, text in cases:
        with pytest.raises(JointStateError, match=re.escape(text)) as caught:
            tracker.update(*arguments)
        assert caught.value.kind == kind
    with pytest.raises(ConvergenceError):
        tracker.update(names, np.zeros(4))  # unreachable, see test/nodes/test_closure_solver.py::test_dualv_drops_bad_input_and_keeps_serving
    np.testing.assert_array_equal(tracker.start, start)
