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


def test_make_executor_runs_timers_and_subscriptions_and_falls_back_for_message_info(ros_client, monkeypatch):
    """The events executor when it can; the single-threaded one for message info or on request."""
    import time

    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from std_msgs.msg import Float64MultiArray

    from pardyn.errors import InputError
    from pardyn.nodes.common import make_executor

    monkeypatch.delenv("PARDYN_EXECUTOR", raising=False)
    events = make_executor(ros_client.context)
    assert type(events).__name__ == "EventsExecutor"  # the installed rclpy has it
    assert isinstance(make_executor(ros_client.context, message_info=True), SingleThreadedExecutor)
    monkeypatch.setenv("PARDYN_EXECUTOR", "single")
    assert isinstance(make_executor(ros_client.context), SingleThreadedExecutor)
    monkeypatch.setenv("PARDYN_EXECUTOR", "fast")
    try:
        make_executor(ros_client.context)
    except InputError as error:
        assert "PARDYN_EXECUTOR" in str(error) and "fast" in str(error)
    else:
        raise AssertionError("an unknown executor name was accepted")

    # what the nodes need from it, spun as run_node spins it (spin_once in a loop)
    node = Node("executor_check", namespace=ros_client.node.get_namespace(), context=ros_client.context)
    ticks, received = [], []
    node.create_timer(0.002, lambda: ticks.append(1))
    node.create_subscription(Float64MultiArray, "executor_check", lambda message: received.append(message.data[0]), 10)
    publisher = node.create_publisher(Float64MultiArray, "executor_check", 10)
    events.add_node(node)
    try:
        deadline = time.monotonic() + 10.0
        while (len(ticks) < 20 or not received) and time.monotonic() < deadline:
            publisher.publish(Float64MultiArray(data=[4.0]))
            events.spin_once(timeout_sec=0.01)
        assert len(ticks) >= 20 and received and received[0] == 4.0, (len(ticks), received)
    finally:
        events.shutdown()
        node.destroy_node()
