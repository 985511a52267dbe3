"""Fixtures for end-to-end tests of pardyn's ROS 2 nodes over DDS.

A node under test runs as a separate OS process (its console script next to
``sys.executable``, else ``python -m pardyn.nodes.<name>``); the test talks to
it from this process with rclpy. Isolation from other DDS traffic on the
machine:

* ``ros_domain`` (session): a random ``ROS_DOMAIN_ID`` in 1..100 and
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, set in this process's
  environment (inherited by every child) before any rclpy context starts;
* ``ros_namespace`` (module): a unique namespace; each node process gets
  its own namespace under it (``-r __ns:=...``), so topics stay private even
  if another run drew the same domain or a module runs several nodes.

Typical use::

    def test_something(launch_node, ros_client):
        node = launch_node("closure_solver", params={"robot": "dualv"})
        publisher = ros_client.publisher(JointState, node.topic("joint_states"))
        answers = ros_client.collect(JointState, node.topic("closed_loop/joint_states"))
        ros_client.publish_until(publisher, message, lambda: answers, timeout_s=15)
        assert node.alive()

Every process started through ``launch_node`` is stopped (SIGINT, then
SIGKILL) at the end of the module at the latest.
"""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from pardyn.nodes.launcher import node_command  # the console script, as ros2 run starts it

DISCOVERY_TIMEOUT_S = 15.0


@pytest.fixture(scope="session")
def ros_domain(tmp_path_factory: pytest.TempPathFactory, draw_ros_domain) -> Iterator[int]:
    """A random DDS domain (1..100, none another xdist worker draws) on localhost only, for this process and its
    children."""
    domain = draw_ros_domain()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROS_DOMAIN_ID", str(domain))
        patch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        patch.delenv("ROS_STATIC_PEERS", raising=False)
        patch.delenv("ROS_LOCALHOST_ONLY", raising=False)
        patch.setenv("ROS_LOG_DIR", str(tmp_path_factory.mktemp("ros_log")))
        patch.setenv("RCUTILS_LOGGING_BUFFERED_STREAM", "1")  # line-buffered log output
        patch.setenv("PYTHONUNBUFFERED", "1")
        yield domain


@pytest.fixture(scope="module")
def ros_namespace() -> str:
    """A namespace private to this test module's node processes and client."""
    return f"/pardyn_test_{uuid.uuid4().hex[:12]}"


class NodeProcess:
    """A node running as a child process, its stdout and stderr in one log file."""

    def __init__(self, command: list[str], log_path: Path, namespace: str = "/") -> None:
        self.command = command
        self.log_path = log_path
        self.namespace = namespace
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def topic(self, name: str) -> str:
        """Absolute name of the node's relative topic ``name``."""
        return f"{self.namespace.rstrip('/')}/{name}"

    def output(self) -> str:
        """Everything the process printed so far (stdout and stderr)."""
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_exit(self, timeout_s: float) -> int:
        """Wait for the process to end on its own; its exit code."""
        code = self.process.wait(timeout=timeout_s)
        self._log.close()
        return code

    def stop(self, sig: int = signal.SIGINT, timeout_s: float = 10.0) -> int:
        """Send ``sig``, wait up to ``timeout_s``, then SIGKILL; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode

    def __enter__(self) -> NodeProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@pytest.fixture(scope="module")
def launch_node(
    ros_domain: int, ros_namespace: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., NodeProcess]]:
    """Factory ``launch_node(executable, *, params=None, params_file=None, namespace=None)``.

    ``params`` become ``-p name:=value`` (after ``params_file``, so they win).
    Each process gets its own namespace under the module's ``ros_namespace``
    unless one is given: two nodes never hear each other's topics by accident.
    Reach its topics with ``node.topic("joint_states")``.
    """
    started: list[NodeProcess] = []
    log_dir = tmp_path_factory.mktemp("node_logs")

    def launch(
        executable: str,
        *,
        params: Mapping[str, object] | None = None,
        params_file: Path | None = None,
        namespace: str | None = None,
    ) -> NodeProcess:
        namespace = namespace or f"{ros_namespace}/node{len(started)}"
        arguments = ["--ros-args", "-r", f"__ns:={namespace}"]
        if params_file is not None:
            arguments += ["--params-file", str(params_file)]
        for name, value in (params or {}).items():
            arguments += ["-p", f"{name}:={value}"]
        log_path = log_dir / f"{executable}_{len(started)}.log"
        node = NodeProcess(node_command(executable) + arguments, log_path, namespace)
        started.append(node)
        return node

    try:
        yield launch
    finally:
        for node in started:
            node.stop()


class RosClient:
    """The test's side of the DDS conversation: one rclpy node in its own context."""

    def __init__(self, domain: int, namespace: str) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain, signal_handler_options=SignalHandlerOptions.NO)
        self.node = Node(f"test_client_{uuid.uuid4().hex[:8]}", namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def publisher(self, message_type: type, topic: str, depth: int = 10):
        return self.node.create_publisher(message_type, topic, depth)

    def collect(self, message_type: type, topic: str, depth: int = 50) -> list:
        """Subscribe ``topic``; the returned list fills with the messages as they arrive."""
        received: list = []
        self.node.create_subscription(message_type, topic, received.append, depth)
        return received

    def spin_until(self, condition: Callable[[], object], timeout_s: float) -> bool:
        """Spin until ``condition()`` is truthy or ``timeout_s`` passes; whether it held."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            self.executor.spin_once(timeout_sec=0.05)
        return True

    def publish_until(
        self,
        publisher,
        message: object,
        condition: Callable[[], object],
        *,
        timeout_s: float = DISCOVERY_TIMEOUT_S,
        period_s: float = 0.25,
    ) -> bool:
        """Publish ``message`` every ``period_s`` until ``condition()`` holds (covers discovery)."""
        deadline = time.monotonic() + timeout_s
        while True:
            publisher.publish(message)
            if self.spin_until(condition, min(period_s, max(0.0, deadline - time.monotonic()))):
                return True
            if time.monotonic() > deadline:
                return False

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def _closure_violation(robot, q) -> float:
    model = robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, np.asarray(q))
    return max(
        float(np.linalg.norm(data.oMf[model.getFrameId(a)].translation - data.oMf[model.getFrameId(b)].translation))
        for a, b in (closure.frames for closure in robot.description.closures)
    )


@pytest.fixture
def closure_violation():
    """``closure_violation(robot, q)``: largest distance (m) between the two frames of a closure,
    from pinocchio's frame placements (independent of pardyn's closure equations)."""
    return _closure_violation


@pytest.fixture
def start_process(ros_domain: int, tmp_path: Path) -> Iterator[Callable[[list[str], str], NodeProcess]]:
    """Factory ``start_process(command, name)``: any command as a :class:`NodeProcess` in the test's domain.

    Every process is killed at the end of the test.
    """
    started: list[NodeProcess] = []

    def start(command: list[str], name: str) -> NodeProcess:
        process = NodeProcess(command, tmp_path / f"{name}_{len(started)}.log")
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop(signal.SIGKILL)


@pytest.fixture(scope="module")
def ros_client(ros_domain: int, ros_namespace: str) -> Iterator[RosClient]:
    """An rclpy node of the test process in the module's namespace and the random domain."""
    client = RosClient(ros_domain, ros_namespace)
    try:
        yield client
    finally:
        client.close()


def _in_process(node_class, client, name: str, *arguments: str):
    """A node of ``node_class`` in this process on the client's context, namespace ``<client's>/<name>``."""
    return node_class(
        context=client.context,
        namespace=f"{client.node.get_namespace()}/{name}",
        cli_args=["--ros-args", *arguments],
        use_global_arguments=False,
    )


@pytest.fixture
def in_process() -> Callable[..., Node]:
    """``in_process(NodeClass, ros_client, name, *ros_arguments)``: a node composed into the test process."""
    return _in_process

