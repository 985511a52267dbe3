"""Messages lost before the bag, from a periodic topic's stamps (issue 34, item 8): hand-derived cases."""

from __future__ import annotations

import numpy as np

from pardyn.bags.gaps import Gap, GapRecord, StampGaps

MS = 1_000_000


def gaps_of(stamps, period_ns=None) -> GapRecord:
    gaps = StampGaps("/joint_states", period_ns)
    for stamp in stamps:
        gaps.add(int(stamp))
    return gaps.record()


def test_holes_in_exact_stamps_are_counted_between_their_neighbours():
    sent = np.arange(1000) * MS + 5 * 10**9  # 1 kHz from t = 5 s
    lost = {3, 4, 5, 500, 998}
    record = gaps_of([stamp for k, stamp in enumerate(sent) if k not in lost])
    assert record.period_ns == MS and record.lost == 5 and record.received == 995
    assert record.gaps == (Gap(sent[2], sent[6], 3), Gap(sent[499], sent[501], 1), Gap(sent[997], sent[999], 1))
    assert (record.first_ns, record.last_ns) == (sent[0], sent[-1])
    assert "5 of 1000 lost in 3 gaps (period 1 ms" in record.describe()
    assert GapRecord.from_json(record.topic, record.to_json()) == record


def test_a_resent_or_reordered_message_is_no_loss():
    record = gaps_of([0, MS, MS, 3 * MS, 2 * MS, 4 * MS])
    assert record.lost == 0 and record.received == 5 and "none lost of 5" in record.describe()


def test_the_period_is_found_when_no_two_consecutive_messages_arrived():
    record = gaps_of([0, 2 * MS, 5 * MS, 7 * MS, 10 * MS])  # every other or third message lost
    assert record.period_ns == MS and record.lost == 6


def test_stamps_with_jitter_use_the_median_spacing():
    rng = np.random.default_rng(0)
    sent = np.arange(2000) * MS + rng.integers(-50_000, 50_000, 2000)  # +-50 us of wall-clock jitter
    kept = np.delete(sent, [100, 101, 1500])
    record = gaps_of(kept)
    assert abs(record.period_ns - MS) < 5_000
    assert [(gap.after_ns, gap.before_ns, gap.missing) for gap in record.gaps] == [
        (sent[99], sent[102], 2), (sent[1499], sent[1501], 1)]


def test_fewer_than_two_stamps():
    assert gaps_of([]).received == 0 and gaps_of([7]).first_ns == 7 and gaps_of([7]).lost == 0
