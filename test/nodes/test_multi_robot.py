"""Two robots in one ROS graph (issue 20, item 2).

Two ``pardyn bringup --processes`` runs side by side on one DDS domain (each
node its own OS process, as ``ros2 launch`` starts them), each in its own
namespace, each recording a bag: every bag holds its own robot's states
only, consecutive steps, bag times equal to the header stamps (the shipped
identification recorder stamps from the header), a private simulated clock
(``/<ns>/clock``, increasing: a shared ``/clock`` would interleave two
clocks), and no sim saw a foreign command. Without namespaces the sims say
that their topics have several publishers.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import yaml
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import Float64MultiArray

from pardyn.bags import read_joint_states, read_messages

REPO = Path(__file__).resolve().parents[2]
PERIOD_NS = 1_000_000
RUN_S = 20.0  # wall-clock seconds of each bringup (--duration): its nodes start in up to ~10 s at load 6, then >= 200 steps


def bringup_file(tmp_path: Path, name: str) -> Path:
    """The shipped identification bringup, with a fixed setpoint instead of the exciting trajectory."""
    shipped = yaml.safe_load((REPO / "config" / "bringup" / "identification.yaml").read_text())
    nodes = [node for node in shipped["nodes"] if node["executable"] != "trajectory"]
    for node in nodes:
        inline = node["parameters"][-1]
        if node["executable"] == "controller":
            inline["setpoint_task"] = [0.01, 0.005, 0.02]
        if node["executable"] == "sim":
            inline["history_depth"] = 10_000  # separate processes: a recorder that lags 10 s under load misses nothing
            inline["wait_for_nodes"] = [n for n in inline["wait_for_nodes"] if n != "trajectory"]
        if node["executable"] == "recorder":
            assert inline.get("timestamp_source") == "header"  # what the shipped file says
            inline["topics"] = ["joint_states", "clock"]
            inline["bag_path"] = str(tmp_path / f"bag_{name}")
            inline["queue_depth"] = 10_000  # the reader's history too: a lagging recorder process keeps its backlog
    path = tmp_path / f"bringup_{name}.yaml"
    path.write_text(yaml.safe_dump({"parameters": shipped["parameters"], "nodes": nodes}))
    return path


def test_two_namespaced_bringups_side_by_side_record_correct_bags(start_process, ros_namespace, tmp_path):
    script = Path(sys.executable).parent / "pardyn"
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "pardyn.cli"]
    robots = {name: f"{ros_namespace}/{name}" for name in ("r1", "r2")}
    processes = {
        name: start_process(command + ["bringup", "--verbose", str(bringup_file(tmp_path, name)), "--processes",
                                       "--namespace", namespace, "--duration", str(RUN_S)], f"bringup_{name}")
        for name, namespace in robots.items()
    }
    for name, process in processes.items():
        code = process.wait_exit(RUN_S + 240.0)
        assert code == 0, process.output()
    for name, namespace in robots.items():
        output = processes[name].output()
        assert "Traceback" not in output and "sim summary" in output, output
        assert "dropped a command tagged" not in output, output
        assert "publishers on" not in output, output  # no foreign command publisher, no second clock
        bag = tmp_path / f"bag_{name}"
        states = read_messages(bag, "joint_states")
        assert len(states) > 200, output
        assert {m.topic for m in states} == {f"{namespace}/joint_states"}
        stamps = np.array([m.message.header.stamp.sec * 1_000_000_000 + m.message.header.stamp.nanosec
                           for m in states])
        # bag time = header stamp; each step once (the recorder sees re-sent states as duplicates of a step)
        np.testing.assert_array_equal([m.timestamp_ns for m in states], stamps)
        steps = np.unique(stamps // PERIOD_NS)
        assert np.all(stamps % PERIOD_NS == 0) and np.array_equal(steps, np.arange(steps[0], steps[-1] + 1))
        # the private clock: /<ns>/clock, increasing (two clocks on one topic would go back and forth)
        clock = read_messages(bag, "clock")
        assert {m.topic for m in clock} == {f"{namespace}/clock"}
        ticks = np.array([m.message.clock.sec * 1_000_000_000 + m.message.clock.nanosec for m in clock])
        assert len(ticks) > 200 and np.all(np.diff(ticks) >= 0)
        # what identify reads: accepted (its stamps check refused both bags before)
        series = read_joint_states(bag, drop_resent=True)  # as the identification pipeline reads it
        assert series.t.size > 200


def test_sims_sharing_a_namespace_report_the_second_publishers(ros_client):
    from pardyn.nodes.sim import SimNode

    namespace = f"{ros_client.node.get_namespace()}/shared"
    sims = [
        SimNode(context=ros_client.context, namespace=namespace, use_global_arguments=False,
                cli_args=["--ros-args", "-r", f"__node:=sim{i}", "-r", f"/clock:={namespace}/clock",
                          "--params-file", str(REPO / "config" / "sim.yaml"), "-p", "lockstep:=false"])
        for i in range(2)
    ]
    # two controllers' worth of command publishers
    publishers = [ros_client.node.create_publisher(Float64MultiArray, sims[0]._commands.topic_name, 10)
                  for _ in range(2)]
    executor = SingleThreadedExecutor(context=ros_client.context)
    for sim in sims:
        executor.add_node(sim)
    try:
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and not all(len(sim._graph_reported) == 2 for sim in sims):
            executor.spin_once(timeout_sec=0.01)
        for sim in sims:
            assert sim._graph_reported == {sim._commands.topic_name, f"{namespace}/clock"}
    finally:
        executor.shutdown()
        for publisher in publishers:
            ros_client.node.destroy_publisher(publisher)
        for sim in sims:
            sim.destroy_node()

