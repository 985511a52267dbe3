"""Loop timing recorders against hand-built sequences."""

from __future__ import annotations

import numpy as np

from pardyn.control.timing import DurationLog, RealTimeRate, StepLatency


def test_duration_log_keeps_the_last_values_in_order_and_gives_their_percentiles():
    log = DurationLog(capacity=4)
    assert log.describe() == "no samples" and np.isnan(log.percentiles()).all()
    for value in (1.0, 2.0, 3.0):
        log.add(value)
    np.testing.assert_array_equal(log.values, [1.0, 2.0, 3.0])
    for value in (4.0, 5.0, 6.0):  # wraps: 1 and 2 are gone
        log.add(value)
    np.testing.assert_array_equal(log.values, [3.0, 4.0, 5.0, 6.0])
    assert log.count == 6
    # percentiles of 3, 4, 5, 6 by linear interpolation: p50 = 4.5, p99 = 3 + 0.99 * 3 = 5.97
    np.testing.assert_allclose(log.percentiles((50.0, 99.0)), [4.5, 5.97])
    assert log.describe("ms") == "p50 4.5e+03 p99 5.97e+03 max 6e+03 ms (6 samples)"


def test_step_latency_pairs_each_command_with_its_state_and_counts_fresh_periods():
    timing = StepLatency(window=8)
    timing.sent(0, 10.0)
    timing.sent(1, 10.001)
    timing.answered(0, 10.0004)    # 0.4 ms after state 0
    timing.answered(0, 10.0009)    # a repeat: ignored
    timing.answered(7, 10.0010)    # never sent: ignored
    timing.applied(0, 0)           # the period after state 0 ran on its answer: fresh
    timing.answered(1, 10.0025)    # 1.5 ms: too late for the next tick
    timing.applied(1, 0)           # the period after state 1 ran on the answer to state 0: stale
    timing.applied(2, None)        # no command at all: stale
    timing.sent(9, 11.0)           # slot 1 again (window 8): the old state 1 is forgotten
    timing.answered(1, 11.0001)
    np.testing.assert_allclose(timing.latency.values, [0.0004, 0.0015], atol=1e-12)
    assert (timing.fresh, timing.stale) == (1, 2)
    assert abs(timing.fresh_share - 1.0 / 3.0) < 1e-15
    assert "33.33 % of periods" in timing.describe()


def test_step_latency_tags_wrap_at_the_modulus():
    timing = StepLatency(window=16)
    step = 2**32 + 5  # tag 5 on the wire (uint32)
    timing.sent(step, 1.0)
    timing.answered(5, 1.0003)
    timing.applied(step, 5)
    np.testing.assert_allclose(timing.latency.values, [0.0003], atol=1e-12)
    assert timing.fresh == 1


def test_real_time_rate_reports_the_windows_a_loop_runs_behind():
    """A hand clock: 1000 periods in 1 s keep a 1 kHz rate; 600 in 1 s (a period's work of ~1.7 ms) do not."""
    rate = RealTimeRate(1000.0, window_s=1.0, share=0.95)
    assert rate.tick(0.0) is None  # the first tick starts the window
    reports = [rate.tick(k * 1e-3) for k in range(1, 1001)]
    assert reports == [None] * 1000 and rate.windows == 1 and rate.slow_windows == 0
    late = [rate.tick(1.0 + k / 600.0) for k in range(1, 601)]
    assert late[:-1] == [None] * 599 and abs(late[-1] - 600.0) < 1e-6
    assert (rate.windows, rate.slow_windows) == (2, 1)
    assert all(rate.tick(2.0 + k / 960.0) is None for k in range(1, 1001))  # 960 Hz: within 95 %
    assert (rate.windows, rate.slow_windows) == (3, 1)
