"""End-to-end tests of the ``closure_solver`` node over DDS, plus its pure parts.

The node runs as a separate process (fixtures in ``conftest.py``); the test
publishes the actuated (and sensed) joints of a configuration obtained from a
known task pose by the *inverse* problem (``Robot.solve_inverse``, a different
path through the solver than the node's forward problem) and checks that the
node's answer gives back that task pose and every joint of that configuration.
Joint velocities are checked against central finite differences of inverse
solutions (independent of the velocity maps the node uses), the orientation
against pinocchio's own RPY-to-matrix conversion.
"""

from __future__ import annotations

import ast
import itertools
import math
import signal
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import JointState

from pardyn import load_robot
from pardyn.nodes.closure_solver import (
    INPUT_TOPIC,
    JOINTS_TOPIC,
    NODE_NAME,
    POSE_TOPIC,
    ClosureSolverNode,
)

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "config" / "closure_solver.yaml"
LAUNCH = REPO / "launch" / "closure_solver.launch.py"
ANSWER_TIMEOUT_S = 15.0  # first answer includes DDS discovery
POSITION_TOL = 1e-9  # m, rad
VELOCITY_TOL = 1e-8  # m/s, rad/s (finite differences of step 1e-5 are good to ~1e-10)
FD_STEP = 1e-5

_stamps = itertools.count(1)


# --------------------------------------------------------------------------- helpers
def joint_state(names, positions, velocities=()) -> JointState:
    """A JointState with a fresh, unique stamp (the stamp identifies its answer)."""
    message = JointState()
    message.header.stamp.sec = next(_stamps)
    message.header.frame_id = "sensors"
    message.name = list(names)
    message.position = [float(v) for v in positions]
    message.velocity = [float(v) for v in velocities]
    return message


class SolverLink:
    """Publisher to one node process and collectors of its two outputs."""

    def __init__(self, client, node) -> None:
        self.client = client
        self.node = node
        self.publisher = client.publisher(JointState, node.topic(INPUT_TOPIC))
        self.joints: list[JointState] = client.collect(JointState, node.topic(JOINTS_TOPIC))
        self.poses: list[PoseStamped] = client.collect(PoseStamped, node.topic(POSE_TOPIC))

    def _answer(self, stamp: int):
        joints = [m for m in self.joints if m.header.stamp.sec == stamp]
        poses = [m for m in self.poses if m.header.stamp.sec == stamp]
        return (joints[0], poses[0]) if joints and poses else None

    def request(self, message: JointState) -> tuple[JointState, PoseStamped]:
        """Publish ``message`` (again until answered); the node's two answers."""
        stamp = message.header.stamp.sec
        answered = self.client.publish_until(
            self.publisher, message, lambda: self._answer(stamp), timeout_s=ANSWER_TIMEOUT_S
        )
        assert answered, f"no answer to stamp {stamp} within {ANSWER_TIMEOUT_S} s; node output:\n{self.node.output()}"
        return self._answer(stamp)

    def expect_rejection(self, message: JointState, *texts: str) -> None:
        """Publish ``message`` until the node's log shows every one of ``texts``; no answer allowed."""
        stamp = message.header.stamp.sec
        logged = self.client.publish_until(
            self.publisher,
            message,
            lambda: all(text in self.node.output() for text in texts),
            timeout_s=ANSWER_TIMEOUT_S,
        )
        assert logged, f"node never logged {texts}; output:\n{self.node.output()}"
        assert self._answer(stamp) is None, f"the node answered the bad message {stamp}"
        assert self.node.alive(), self.node.output()


def task_pose_of(pose: PoseStamped, angle: bool) -> np.ndarray:
    """(x, y[, angle]) from a planar PoseStamped, after checking it is planar."""
    p, o = pose.pose.position, pose.pose.orientation
    assert p.z == 0.0
    quaternion = pin.Quaternion(o.w, o.x, o.y, o.z)  # pinocchio's (w, x, y, z) constructor
    assert quaternion.norm() == pytest.approx(1.0, abs=1e-12)
    if not angle:
        np.testing.assert_allclose(quaternion.matrix(), np.eye(3), atol=1e-15)
        return np.array([p.x, p.y])
    rotation = quaternion.matrix()
    about_z = math.atan2(rotation[1, 0], rotation[0, 0])
    np.testing.assert_allclose(rotation, pin.rpy.rpyToMatrix(0.0, 0.0, about_z), atol=1e-12)
    return np.array([p.x, p.y, about_z])


def check_answer(robot, task, answer, *, frame_id: str, stamp: int, q_expected, qdot_expected=None) -> None:
    joints, pose = answer
    assert joints.header.stamp.sec == stamp and pose.header.stamp.sec == stamp
    assert pose.header.frame_id == frame_id
    assert list(joints.name) == list(robot.joint_names)
    has_angle = len(robot.task_names) == 3
    np.testing.assert_allclose(task_pose_of(pose, has_angle), task, atol=POSITION_TOL, rtol=0)
    np.testing.assert_allclose(np.array(joints.position), q_expected, atol=POSITION_TOL, rtol=0)
    if qdot_expected is None:
        assert len(joints.velocity) == 0
    else:
        np.testing.assert_allclose(np.array(joints.velocity), qdot_expected, atol=VELOCITY_TOL, rtol=0)


def finite_difference_velocity_map(robot, task, q0) -> np.ndarray:
    """``W = dq/dx`` by central differences of inverse solutions around ``task``, shape (nv, n)."""
    task = np.asarray(task, dtype=float)
    columns = []
    for k in range(task.size):
        step = np.zeros(task.size)
        step[k] = FD_STEP
        q_plus = robot.solve_inverse(task + step, start=q0).q
        q_minus = robot.solve_inverse(task - step, start=q0).q
        columns.append((q_plus - q_minus) / (2.0 * FD_STEP))
    return np.column_stack(columns)


def finite_difference_velocities(robot, task, task_velocity, q0) -> np.ndarray:
    """Every joint velocity ``W xdot`` with the finite-difference ``W``, shape (nv,)."""
    return finite_difference_velocity_map(robot, task, q0) @ np.asarray(task_velocity, dtype=float)


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def dualv():
    return load_robot("dualv")


@pytest.fixture(scope="module")
def dualv_link(launch_node, ros_client):
    """One dualv node (parameters from config/closure_solver.yaml) for the module."""
    node = launch_node(NODE_NAME, params_file=CONFIG, params={"robot": "dualv"})
    return SolverLink(ros_client, node)


# --------------------------------------------------------------------------- DDS tests
@pytest.mark.parametrize(
    ("task", "task_velocity"),
    [
        ((0.02, -0.01, 0.1), (0.1, -0.2, 0.3)),  # x (m), y (m), phi (rad); m/s, rad/s
        ((-0.03, 0.02, -0.15), None),
        ((0.05, 0.03, 0.2), (-0.05, 0.0, -0.4)),
    ],
)
def test_dualv_answers_the_task_pose_of_its_actuated_joints(dualv_link, dualv, task, task_velocity):
    robot = dualv
    q = robot.solve_inverse(task).q  # (nv,) the configuration the robot is in
    names = list(robot.actuated_names)
    positions = list(q[robot.actuated_indices])
    qdot = None
    velocities = ()
    if task_velocity is not None:
        qdot = finite_difference_velocities(robot, task, task_velocity, q)
        np.testing.assert_allclose(qdot[robot.task_indices], task_velocity, atol=1e-9)
        velocities = list(qdot[robot.actuated_indices])
    # reversed order plus a joint the robot does not have: names, not positions, matter
    message = joint_state(
        names[::-1] + ["gripper_joint"],
        positions[::-1] + [0.7],
        (list(velocities)[::-1] + [0.0]) if velocities else (),
    )
    answer = dualv_link.request(message)
    check_answer(
        robot, task, answer, frame_id="base_link", stamp=message.header.stamp.sec, q_expected=q, qdot_expected=qdot
    )
    assert dualv_link.node.alive()


def test_dualv_drops_bad_input_and_keeps_serving(dualv_link, dualv):
    robot = dualv
    link = dualv_link
    names = list(robot.actuated_names)
    good = robot.solve_inverse((0.01, 0.02, -0.05)).q[robot.actuated_indices]

    nan = good.copy()
    nan[1] = math.nan
    link.expect_rejection(joint_state(names, nan), "non-finite positions of ['leg2_joint1']")

    # a non-finite velocity (a broadcaster's NaN for a joint without a velocity interface) does not
    # cost the positions (issue 20, item 14): answered, that velocity estimated, logged under its reason
    inf_rate = joint_state(names, good, [0.0, 0.0, math.inf, 0.0])
    joints, _ = link.request(inf_rate)
    np.testing.assert_allclose(np.array(joints.position)[robot.actuated_indices], good, atol=1e-12)
    assert np.all(np.isfinite(joints.velocity))
    assert "NaN/inf velocities for ['leg3_joint1']" in link.node.output()

    wrong = names[:2] + ["leg3_joint_1"] + names[3:]
    link.expect_rejection(joint_state(wrong, good), "missing actuated joints ['leg3_joint1']")

    link.expect_rejection(joint_state(names, good[:3]), "4 names but 3 positions")

    # Unreachable by hand: with every actuated angle 0 the elbows are B_i = A_i + 0.28 (1, 0) m,
    # A_1,2 = 0.41 (+-cos 15.52 deg, sin 15.52 deg) m, so |B_1 B_2| = 2 * 0.41 cos(15.52 deg) = 0.790 m,
    # more than distal + platform + distal = 0.28 + 0.2 + 0.28 = 0.76 m: loops 1 and 2 cannot close.
    link.expect_rejection(joint_state(names, np.zeros(4)), "ConvergenceError")

    task = (-0.02, -0.03, 0.12)
    q = robot.solve_inverse(task).q
    message = joint_state(names, q[robot.actuated_indices])
    answer = link.request(message)
    check_answer(robot, task, answer, frame_id="base_link", stamp=message.header.stamp.sec, q_expected=q)
    assert link.node.alive(), link.node.output()
    output = link.node.output()
    assert "[WARN]" in output and "[ERROR]" in output and "dropped joint_states message" in output
    assert "Traceback" not in output


def test_rrr3_uses_its_sensed_passive_joints_and_stops_on_sigterm(launch_node, ros_client):
    robot = load_robot("rrr3")
    node = launch_node(NODE_NAME, params_file=CONFIG, params={"robot": "rrr3", "frame_id": "world"})
    try:
        link = SolverLink(ros_client, node)
        task, task_velocity = (0.05, -0.03, 0.1), (0.02, 0.05, -0.3)  # (m, m, rad), (m/s, m/s, rad/s)
        q = robot.solve_inverse(task).q
        qdot = finite_difference_velocities(robot, task, task_velocity, q)
        measured = list(robot.measured_indices)  # actuated leg{i}_joint1 then sensed leg{i}_joint2
        assert [robot.joint_names[i] for i in measured[3:]] == ["leg1_joint2", "leg2_joint2", "leg3_joint2"]
        # leg1_joint3 is a joint of the robot but neither actuated nor sensed: ignored
        extra = robot.joint_names.index("leg1_joint3")
        names = [robot.joint_names[i] for i in measured + [extra]]
        message = joint_state(names, q[measured + [extra]], qdot[measured + [extra]])
        answer = link.request(message)
        check_answer(robot, task, answer, frame_id="world", stamp=message.header.stamp.sec, q_expected=q,
                     qdot_expected=qdot)

        # Redundant sensing fuses the readings (Zubizarreta et al. 2010, section 4.2): the node returns
        # the closed configuration nearest to them, min |q_I(x) - y|^2. Offset one sensed reading by
        # delta: to first order the pose moves by dx = J_I^+ delta with J_I = W[I], W by finite
        # differences of inverse solutions (an actuated-only solve would not move at all).
        velocity_map = finite_difference_velocity_map(robot, task, q)  # (nv, 3)
        readings = q[measured].copy()
        readings[4] += 1e-5  # leg2_joint2 (rad)
        dx = np.linalg.lstsq(velocity_map[measured], readings - q[measured], rcond=None)[0]
        assert np.linalg.norm(dx) > 1e-7  # large against the tolerances below: the test can tell
        message = joint_state([robot.joint_names[i] for i in measured], readings)
        answer = link.request(message)
        check_answer(robot, np.asarray(task) + dx, answer, frame_id="world", stamp=message.header.stamp.sec,
                     q_expected=q + velocity_map @ dx)

        partial = joint_state(names[:4], q[measured[:4]])  # actuated + leg1_joint2 only
        link.expect_rejection(partial, "sensed joints ['leg1_joint2'] without ['leg2_joint2', 'leg3_joint2']")
    finally:
        code = node.stop(signal.SIGTERM)
    assert code == 0, node.output()
    assert "Traceback" not in node.output()


def test_five_bar_pose_has_identity_orientation_and_stops_on_sigint(launch_node, ros_client):
    robot = load_robot("five_bar")
    node = launch_node(NODE_NAME, params={"robot": "five_bar"})  # no params file: declared defaults
    try:
        link = SolverLink(ros_client, node)
        task = (0.03, 0.28)  # x, y (m): no angle in the five-bar's task
        q = robot.solve_inverse(task).q
        message = joint_state(robot.actuated_names, q[robot.actuated_indices])
        check_answer(robot, task, link.request(message), frame_id="base_link", stamp=message.header.stamp.sec,
                     q_expected=q)
    finally:
        code = node.stop(signal.SIGINT)
    assert code == 0, node.output()
    assert "Traceback" not in node.output()


GEPETTO_FIVE_BAR = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "gepetto_parallel_robots" / "5bar_linkage"


@pytest.mark.skipif(not GEPETTO_FIVE_BAR.is_dir(), reason=f"shared datasets absent: {GEPETTO_FIVE_BAR} not found")
def test_gepetto_five_bar_every_joint_of_its_tree_closes_pinocchio_constraints(launch_node, ros_client):
    """Gepetto's unedited 5bar_linkage: the node answers every joint of the file's tree (the half-joint
    locked at load included), a configuration that closes the loop as pinocchio's CONTACT_6D defines it."""
    source = GEPETTO_FIVE_BAR / "robot.yaml"
    robot = load_robot(source)
    node = launch_node(NODE_NAME, params={"robot": str(source)})
    try:
        publisher = ros_client.publisher(JointState, node.topic(INPUT_TOPIC))
        answers = ros_client.collect(JointState, node.topic(JOINTS_TOPIC))
        motors = robot.home[robot.actuated_indices] + np.array([0.05, -0.04])
        message = joint_state(robot.actuated_names, motors)
        assert ros_client.publish_until(publisher, message, lambda: answers, timeout_s=ANSWER_TIMEOUT_S), node.output()
        answer = answers[0]
        full = pin.buildModelFromUrdf(str(GEPETTO_FIVE_BAR / "robot.urdf"))
        assert sorted(answer.name) == sorted(full.names[1:])  # every joint of the file's tree
        q = np.array([answer.position[list(answer.name).index(n)] for n in full.names[1:]])
        np.testing.assert_allclose(q[[full.getJointId(n) - 1 for n in robot.actuated_names]], motors, atol=1e-12)
        data = full.createData()
        pin.framesForwardKinematics(full, data, q)
        a, b = (data.oMf[full.getFrameId(n)] for n in ("closedloop1_A", "closedloop1_B"))
        assert np.abs(pin.log6(a.actInv(b)).vector).max() < 1e-10  # CONTACT_6D residual (LOCAL)
    finally:
        code = node.stop(signal.SIGINT)
    assert code == 0, node.output()
    assert "Traceback" not in node.output()


def test_unknown_robot_exits_with_a_message(launch_node):
    node = launch_node(NODE_NAME, params={"robot": "no_such_robot"})
    code = node.wait_exit(timeout_s=30.0)
    output = node.output()
    assert code == 1, output
    assert "cannot start" in output and "no_such_robot" in output
    assert "Traceback" not in output


# --------------------------------------------------------------------------- parameters and launch
def test_params_file_sets_the_declared_parameters(ros_client):
    parameters = yaml.safe_load(CONFIG.read_text())[NODE_NAME]["ros__parameters"]
    node = ClosureSolverNode(
        context=ros_client.context,
        namespace=f"{ros_client.node.get_namespace()}/in_process",
        cli_args=["--ros-args", "--params-file", str(CONFIG), "-p", "frame_id:=odom"],
        use_global_arguments=False,
    )
    try:
        declared = set(node.list_parameters([], 1).names) - {"use_sim_time", "start_type_description_service"}
        assert declared == set(parameters)
        for name, value in parameters.items():
            expected = "odom" if name == "frame_id" else value
            assert node.get_parameter(name).value == expected, name
        descriptors = node.describe_parameters(sorted(declared))
        assert {d.name for d in descriptors if d.read_only} == {"robot", "max_condition", "max_rate", "log_period"}
        assert all(d.description for d in descriptors)
        assert node.robot.name == parameters["robot"]
        assert node.robot.solver.max_condition == parameters["max_condition"]
    finally:
        node.destroy_node()


def test_max_rate_takes_the_newest_state_from_a_timer_not_the_executor(ros_client, dualv, monkeypatch):
    """max_rate > 0: the node's joint_states subscription is not the executor's (no dispatch per state: the
    hardware bringup's 1 kHz states no longer wake the process's executor thread beside the controller's state
    thread); its timer, at max_rate, takes the newest state received and solves that one only (the only limit:
    a stamp filter beside it dropped the poll after a late one), after waiting at the process's answer gate
    (in the controller's process: just after an answer, not during one)."""
    import time  # noqa: PLC0415
    from types import SimpleNamespace  # noqa: PLC0415

    import pardyn.nodes.closure_solver as module  # noqa: PLC0415

    gate_waits: list[float] = []
    monkeypatch.setattr(module, "ANSWER_GATE", SimpleNamespace(wait=lambda timeout_s=2e-3: gate_waits.append(1)))

    names, q = list(dualv.actuated_names), dualv.home[dualv.actuated_indices]
    node = ClosureSolverNode(context=ros_client.context, namespace=f"{ros_client.node.get_namespace()}/polled",
                             cli_args=["--ros-args", "-p", "max_rate:=100.0"], use_global_arguments=False)
    try:
        assert not any(s.topic_name == node._subscription.topic_name for s in node.subscriptions)
        assert [t.timer_period_ns for t in node.timers] == [10_000_000]
        published = []
        node._joints_publisher.publish = published.append
        node._pose_publisher.publish = lambda message: None
        publisher = ros_client.publisher(JointState, f"{ros_client.node.get_namespace()}/polled/{INPUT_TOPIC}")
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        while not published and time.monotonic() < deadline:  # discovery
            publisher.publish(joint_state(names, q, [0.0] * len(names)))
            time.sleep(0.05)
            node._poll()
        assert published
        published.clear()
        stamps = []
        for _ in range(3):
            message = joint_state(names, q, [0.0] * len(names))
            stamps.append(message.header.stamp.sec)
            publisher.publish(message)
        time.sleep(0.3)
        node._poll()
        node._poll()
        assert [m.header.stamp.sec for m in published] == [stamps[-1]]
        assert len(gate_waits) >= 3  # every poll
    finally:
        node.destroy_node()


def _launch_calls(tree: ast.AST, function: str) -> list[ast.Call]:
    return [
        n for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == function
    ]


def test_launch_file_names_the_executable_and_an_existing_config():
    """The launch file is pardyn.nodes.launch's description of this node (its arguments and what ros2 launch makes
    of them are tested in test_launch_files.py); its default parameters file holds the node's key."""
    tree = ast.parse(LAUNCH.read_text(), filename=str(LAUNCH))
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert "generate_launch_description" in functions
    (call,) = _launch_calls(tree, "node_launch_description")
    assert ast.literal_eval(call.args[0]) == NODE_NAME
    assert CONFIG.is_file() and NODE_NAME in yaml.safe_load(CONFIG.read_text())


@pytest.mark.parametrize(
    ("name", "task"),
    [("delta", (0.12, -0.08, -1.15)),  # x, y, z (m)
     ("hexapod", (0.01, -0.015, 0.16, 0.12, -0.08, 0.1))],  # x, y, z (m), yaw, pitch, roll (rad)
)
def test_spatial_robots_complete_their_joint_states(launch_node, ros_client, name, task):
    """Delta and hexapod: every joint and the spatial pose (orientation against scipy's ZYX Euler angles)."""
    from scipy.spatial.transform import Rotation

    robot = load_robot(name)
    node = launch_node(NODE_NAME, params={"robot": name})
    try:
        link = SolverLink(ros_client, node)
        q = robot.solve_inverse(task, method="analytic").q  # closed form: another path than the node's Newton
        message = joint_state(robot.actuated_names, q[robot.actuated_indices])
        joints, pose = link.request(message)
        np.testing.assert_allclose(np.array(joints.position), q, atol=POSITION_TOL, rtol=0)
        p, o = pose.pose.position, pose.pose.orientation
        np.testing.assert_allclose([p.x, p.y, p.z], task[:3], atol=POSITION_TOL, rtol=0)
        angles = task[3:] if len(task) == 6 else (0.0, 0.0, 0.0)
        expected = Rotation.from_euler("ZYX", angles).as_matrix()
        np.testing.assert_allclose(Rotation.from_quat([o.x, o.y, o.z, o.w]).as_matrix(), expected, atol=1e-12)
    finally:
        code = node.stop(signal.SIGINT)
    assert code == 0, node.output()
