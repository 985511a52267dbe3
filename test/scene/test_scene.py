"""The scene of a robot (pardyn.scene): inertia ellipsoids, markers and /tf, the replay of a bag, ``pardyn view``.

References: the solid ellipsoid's closed-form inertia (``I_x = m (b^2 + c^2) / 5``), pinocchio's forward
kinematics of configurations solved by the *inverse* problem (the scene solves the forward one), a bag written
here from those configurations, and the served page fetched over HTTP.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pinocchio as pin
import pytest

from pardyn.bags.cdr import deserialize_cdr, typestore_for
from pardyn.bags.joint_states import write_joint_states
from pardyn.robot import load_robot
from pardyn.scene.geometry import RobotScene, inertia_ellipsoid, singularity_colour
from pardyn.scene.messages import MARKERS_TYPE, TF_TYPE, transform_matrix
from pardyn.scene.track import SceneTrack


def test_the_drawn_ellipsoid_has_the_bodys_inertia():
    rotation = pin.rpy.rpyToMatrix(0.3, -0.5, 1.1)
    semi = np.array([0.2, 0.05, 0.02])  # m
    mass = 1.7
    moments = mass / 5.0 * np.array([semi[1] ** 2 + semi[2] ** 2, semi[0] ** 2 + semi[2] ** 2,
                                     semi[0] ** 2 + semi[1] ** 2])
    inertia = pin.Inertia(mass, np.array([0.1, -0.2, 0.03]), rotation @ np.diag(moments) @ rotation.T)
    placement, diameters = inertia_ellipsoid(inertia)
    np.testing.assert_allclose(np.sort(diameters), np.sort(2 * semi), rtol=1e-12)
    np.testing.assert_allclose(placement[:3, 3], [0.1, -0.2, 0.03], atol=1e-15)
    axes = placement[:3, :3]
    np.testing.assert_allclose(axes @ np.diag(mass / 5.0 * (np.sum((diameters / 2) ** 2) - (diameters / 2) ** 2))
                               @ axes.T, inertia.inertia, atol=1e-14)
    assert np.linalg.det(axes) > 0


def test_singular_configurations_are_drawn_red_and_regular_ones_blue():
    robot = load_robot("five_bar")
    regular = RobotScene(robot).frame(robot.home)
    assert regular.singularity < 0.5 and singularity_colour(regular.singularity) == pytest.approx((0.27, 0.51, 0.71))
    # the same configuration judged against a threshold below its condition number: singular
    strict = RobotScene(robot, max_condition=0.5 * regular.condition).frame(robot.home)
    assert strict.singularity == 1.0 and singularity_colour(1.0) == pytest.approx((0.9, 0.05, 0.05))


def _circle(robot, count: int, radius: float = 0.03):
    """Configurations (count, nv) along a circle of the platform, by the inverse problem; their times (s)."""
    home = robot.task_values(robot.home)
    q, joints = robot.home, []
    for angle in np.linspace(0.0, 2 * math.pi, count):
        task = home.copy()
        task[0] += radius * (math.cos(angle) - 1.0)
        task[1] += radius * math.sin(angle)
        q = robot.solve_inverse(task, start=q).q
        joints.append(q)
    return np.linspace(0.0, 2.0, count), np.array(joints)


def _platform(robot, q) -> pin.SE3:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf[robot.model.getFrameId(robot.effector_frame)]


@pytest.mark.parametrize("name", ["dualv", "delta"])
def test_markers_and_tf_put_the_platform_where_the_inverse_problem_did(name):
    robot = load_robot(name)
    typestore = typestore_for()
    track = SceneTrack(robot, typestore, rate_hz=5.0)
    t, joints = _circle(robot, 21)  # 10 Hz over 2 s: a scene at 5 Hz for every other sample
    scenes = 0
    for k, q in enumerate(joints):
        due = track.due(int(round(t[k] * 1e9)))  # what the recorder asks before it decodes a state
        answer = track.update(robot.actuated_names, q[robot.actuated_indices], int(round(t[k] * 1e9)))
        assert (answer is not None) == due
        if answer is None:
            continue
        scenes += 1
        markers = deserialize_cdr(typestore, answer[0], MARKERS_TYPE)
        tf = deserialize_cdr(typestore, answer[1], TF_TYPE)
        expected = _platform(robot, q)
        platform = next(m for m in markers.markers if m.ns == "platform")
        assert platform.header.stamp.sec * 10**9 + platform.header.stamp.nanosec == int(round(t[k] * 1e9))
        drawn = pin.SE3(transform_matrix(platform.pose.position, platform.pose.orientation))
        assert np.abs(pin.log6(expected.actInv(drawn)).vector).max() < 1e-9
        link = next(x for x in tf.transforms if x.child_frame_id == robot.effector_frame)
        moved = pin.SE3(transform_matrix(link.transform.translation, link.transform.rotation))
        assert np.abs(pin.log6(expected.actInv(moved)).vector).max() < 1e-9
        closures = next(m for m in markers.markers if m.ns == "closures")
        assert (closures.color.g, closures.color.r) == pytest.approx((0.7, 0.1))  # green: the loops are closed
    assert scenes == 11 and track.dropped == 0
    assert track.update(["nonsense"], [0.0], 10**10) is None and track.dropped == 1 and "nonsense" in track.last_error


def test_a_bag_replays_on_the_timeline_at_the_recorded_configurations(tmp_path):
    from pardyn.scene.recording import recording_from_bag  # noqa: PLC0415
    from pardyn.scene.viewer import SceneView, add_replay, start_server, stop_server  # noqa: PLC0415

    robot = load_robot("dualv")
    t, joints = _circle(robot, 61)
    effort = np.sin(t)[:, None] * np.arange(1, 5)
    bag = write_joint_states(tmp_path / "run", t, robot.actuated_names, joints[:, robot.actuated_indices],
                             effort=effort)
    recording = recording_from_bag(robot, bag)
    assert len(recording.t) == 61 and recording.torque.shape == (61, 4)  # 30 frames/s of a 30 Hz bag: all
    np.testing.assert_allclose(recording.q, joints, atol=1e-9)
    server = start_server(port=0)
    try:
        replay = add_replay(SceneView(server, robot), recording, play=False)
        for time_s in (0.0, 0.7, 1.4, 2.0):
            index = replay.seek(time_s)
            assert abs(recording.t[index] - time_s) < 1 / 30 + 1e-9
            drawn = pin.SE3(replay.view.frame.platform)
            assert np.abs(pin.log6(_platform(robot, joints[index]).actInv(drawn)).vector).max() < 1e-9
        replay.timeline.value = 1.0  # the slider, as a user drags it
        assert recording.t[replay.shown] == pytest.approx(1.0, abs=1 / 30)
        replay.close()
    finally:
        stop_server(server)


def test_live_torques_keep_the_last_seconds():
    from pardyn.scene.viewer import SceneView, add_live_torques, start_server, stop_server  # noqa: PLC0415

    server = start_server(port=0)
    try:
        torques = add_live_torques(SceneView(server, load_robot("dualv")), window_s=2.0)
        for k in range(501):  # 5 s at 100 Hz
            torques.append(0.01 * k, np.array([1.0, 2.0, 3.0, 4.0]) * k)
        torques.refresh()
        t, *series = torques.plot.data
        assert t[0] == pytest.approx(3.0) and t[-1] == pytest.approx(5.0) and len(series) == 4
        np.testing.assert_allclose(series[3], 4.0 * np.arange(300, 501))
    finally:
        stop_server(server)


def test_pardyn_view_serves_a_bag_and_stops_on_ctrl_c(tmp_path):
    """Started with SIGINT ignored, as a non-interactive shell starts a background job (``.ci/run ... &``: the
    suite's two runs where the view served on 60 s after Ctrl-C): the disposition is inherited, so only a
    handler of the view's own makes Ctrl-C stop it (before, Python's KeyboardInterrupt: fails in 60 s)."""
    robot = load_robot("dualv")
    t, joints = _circle(robot, 31)
    bag = write_joint_states(tmp_path / "run", t, robot.actuated_names, joints[:, robot.actuated_indices])
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        process = subprocess.Popen([sys.executable, "-m", "pardyn.cli", "view", str(bag), "--port", "0"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        line = process.stdout.readline()
        assert "dualv: replaying" in line and "http://127.0.0.1:" in line, line + process.stderr.read()
        url = line.split("at ", 1)[1].split()[0]
        deadline = time.monotonic() + 30
        while True:
            try:
                page = urllib.request.urlopen(url, timeout=5).read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert "<html" in page.lower()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # never left running after the test
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"pardyn view still running 60 s after SIGINT: {err[-2000:]}")
    assert process.returncode == 0, err
    assert "viser" not in out + err  # quiet: pardyn's line says where to look


def test_pardyn_view_refuses_a_missing_source_in_one_line(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "pardyn.cli", "view", str(tmp_path / "nothing")],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2
    assert completed.stderr.strip() == f"pardyn view: {tmp_path / 'nothing'}: no such demo output or bag"
