"""Helpers shared by the nodes (pardyn.nodes.common)."""

from __future__ import annotations

from pardyn.nodes.common import ReportThrottle


def test_report_throttle_reports_once_per_period_per_kind():
    now = [0.0]
    throttle = ReportThrottle(1.0, clock=lambda: now[0])
    assert throttle("names") == 0
    assert throttle("names") is None
    assert throttle("non_finite") == 0  # another kind is reported at once
    now[0] = 0.5
    assert throttle("names") is None
    now[0] = 1.01
    assert throttle("names") == 2  # two reports suppressed since the last one
    assert throttle("names") is None
