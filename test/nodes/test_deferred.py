"""A node's object built after the node is up (pardyn.nodes.deferred): no message lost or reordered meanwhile."""

from __future__ import annotations

import threading
import time

from pardyn.nodes.deferred import Deferred


def test_every_message_offered_before_during_and_after_the_build_is_consumed_once_in_order():
    release = threading.Event()
    consumed: list[int] = []

    def build() -> list[int]:
        release.wait(5.0)
        return consumed

    def consume(built: list[int], message: int) -> None:
        built.append(message)
        time.sleep(1e-5)  # a replay slow enough that offers come in between its batches

    deferred = Deferred(build, consume).start()
    for k in range(200):  # while the build runs: queued
        deferred.offer(k)
    assert consumed == [] and deferred.queued == 200 and deferred.value is None
    release.set()
    for k in range(200, 2000):  # while the queue is handed over, then after: at once
        deferred.offer(k)
    assert deferred.finished.wait(5.0)
    assert consumed == list(range(2000))
    assert deferred.value is consumed and deferred.error is None and deferred.replayed >= 200


def test_a_failed_build_keeps_its_error_and_drops_the_messages():
    def build():
        raise ValueError("no such robot")

    reports: list[Deferred] = []
    deferred = Deferred(build, lambda built, message: None, done=reports.append).start()
    assert deferred.finished.wait(5.0)
    deferred.offer(1)
    assert isinstance(deferred.error, ValueError) and deferred.value is None and deferred.queued == 0
    assert reports == [deferred]
