"""The closed forms' singularities raise SingularityError with its kind and condition (they raised TypeError).

mypy (make lint) found the three raises without the keyword-only ``kind``/``condition`` SingularityError requires:
a caller catching SingularityError (or PardynError: the solvers' fallbacks, the CLI's one-line errors) got a
TypeError traceback instead.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.errors import SingularityError
from pardyn.kinematics.analytic.wu import WuGeometry, pivotal_motion

WU = WuGeometry(columns=np.array([-0.6, 0.6]), l5=0.25, l=1.2, l6=0.25, struts=(1, 2))  # Wu et al. Table 1 (m)


def test_wu_link_out_of_reach_is_a_serial_singularity():
    with pytest.raises(SingularityError, match="link 1 out of reach") as raised:
        pivotal_motion(WU, np.array([5.0, 2.5, 0.0]))  # |x - c_1| = 5.6 m > l = 1.2 m
    assert (raised.value.kind, raised.value.condition) == ("serial", math.inf)


def test_wu_strut_of_zero_length_is_a_singularity():
    # B on slider E_1: |E_1 A_1| = l, |A_1 B| = l6, E_1 straight below D_1 by l5, so by the law of cosines
    # cos(alpha) = (l6^2 + l5^2 - l^2) / (2 l5 l6) (a longer platform than Table 1's, so that B reaches E_1)
    geometry = WuGeometry(columns=WU.columns, l5=0.25, l=1.2, l6=1.3, struts=(1, 2))
    alpha = math.acos((geometry.l6**2 + geometry.l5**2 - geometry.l**2) / (2 * geometry.l5 * geometry.l6))
    pose = np.array([geometry.columns[0] + geometry.l6 * math.sin(alpha), 3.0, alpha])
    with pytest.raises(SingularityError, match="strut 1 has zero length") as raised:
        pivotal_motion(geometry, pose)
    assert raised.value.kind == "serial"


def test_h4_parallel_forearms_are_a_parallel_singularity(load, monkeypatch):
    """All four forearms vertical (parallel): J_x's x and y columns of eq. (11) vanish."""
    closed = load("h4").analytic
    task = closed.robot.home[closed.robot.task_indices]
    monkeypatch.setattr(closed, "arm_points", lambda actuated: closed.nacelle_points(task) + [0.0, 0.0, 0.3])
    with pytest.raises(SingularityError, match="singular") as raised:
        closed.jacobian(task, np.zeros(4))
    assert raised.value.kind == "parallel"
    assert raised.value.condition > 1e12
