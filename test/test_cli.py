"""The ``pardyn`` command line, run as a user would (a subprocess)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest


def pardyn(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pardyn.cli", *args], capture_output=True, text=True, timeout=120)


def test_robots_lists_the_shipped_robots():
    result = pardyn("robots")
    assert result.returncode == 0, result.stderr
    assert {"five_bar", "dualv", "rrr3", "wu3r", "wu3n", "h4", "ur5e", "delta", "hexapod"} <= set(result.stdout.split())


def test_robots_json_has_redundancy():
    rows = {row["name"]: row for row in json.loads(pardyn("robots", "--json").stdout)}
    assert rows["dualv"]["redundancy"] == 1 and rows["rrr3"]["sensed"] == ["leg1_joint2", "leg2_joint2", "leg3_joint2"]


def test_inverse_then_forward_through_the_cli(load):
    robot = load("dualv")
    inverse = pardyn("kinematics", "--robot", "dualv", "--task", "0.02,-0.01,0.1")
    assert inverse.returncode == 0, inverse.stderr
    answer = json.loads(inverse.stdout)
    assert answer["task"] == pytest.approx({"x": 0.02, "y": -0.01, "phi": 0.1}, abs=1e-12)
    assert set(answer["joints"]) == set(robot.joint_names)
    # Leg 1 closes on C_1 = (x - r_p sin phi, y + r_p cos phi) (Briot 2015, eq. 53).
    q1, q2 = answer["joints"]["leg1_joint1"], answer["joints"]["leg1_joint2"]
    a1 = 0.41 * np.array([math.cos(math.radians(15.52)), math.sin(math.radians(15.52))])
    tip = a1 + 0.28 * np.array([math.cos(q1), math.sin(q1)]) + 0.28 * np.array([math.cos(q1 + q2), math.sin(q1 + q2)])
    np.testing.assert_allclose(tip, [0.02 - 0.1 * math.sin(0.1), -0.01 + 0.1 * math.cos(0.1)], atol=1e-12)

    actuated = ",".join(repr(answer["joints"][n]) for n in robot.actuated_names)
    forward = pardyn("kinematics", "--robot", "dualv", "--actuated", actuated)
    assert forward.returncode == 0, forward.stderr
    assert json.loads(forward.stdout)["task"] == pytest.approx(answer["task"], abs=1e-10)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("kinematics", "--robot", "dualv", "--task", "0,0"), "expected 3 values"),
        (("kinematics", "--robot", "dualv", "--task", "a,b,c"), "comma-separated numbers"),
        (("kinematics", "--robot", "five_bar", "--task", "3,3"), "did not converge"),
        (("kinematics", "--robot", "nobody", "--task", "0,0"), "unknown robot"),
    ],
)
def test_errors_are_one_line_messages(args, expected):
    result = pardyn(*args)
    assert result.returncode == 2
    assert expected in result.stderr and "Traceback" not in result.stderr


def test_bare_pardyn_lists_its_commands():
    result = pardyn()
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert all(f"    {name}" in result.stderr for name in ("robots", "identify", "bringup", "demo", "export"))


def test_demo_writes_summary_and_plot(tmp_path):
    """``make demo`` path: the forward problem recovers every inverse solution along the circle."""
    result = pardyn("demo", "--robot", "rrr3", "--kinematics-only", "--rate", "50", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "kinematics" / "summary.json").read_text())
    assert summary["samples"] == 101  # 2 s at 50 Hz
    assert summary["max_inverse_residual"] <= 1e-12
    assert summary["max_forward_round_trip_error"] < 1e-10
    assert summary["max_analytic_vs_newton_task_error"] < 1e-10
    assert summary["max_velocity_round_trip_error"] < 1e-10
    assert (tmp_path / "kinematics" / "kinematics.png").stat().st_size > 10_000


def test_two_demos_in_one_ros_domain_keep_to_their_own_nodes(tmp_path, draw_ros_domain):
    """Two people of a lab run ``pardyn demo`` at once on one network (one ROS domain): each run's nodes keep to
    their own namespace, so both finish with the figures a run alone gives (lockstep: deterministic, equal to
    the last digit). Before, the two sims took each other's commands and a bag failed ("duplicated stamp")."""
    import os

    environment = {**os.environ, "ROS_DOMAIN_ID": str(draw_ros_domain()),
                   "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    command = [sys.executable, "-m", "pardyn.cli", "demo", "--robot", "five_bar", "--duration", "3", "--no-loaded",
               "--rate", "20", "--out"]
    runs = [subprocess.Popen([*command, str(tmp_path / name)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, env=environment) for name in ("first", "second")]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    # each bag holds the sim's every step: the run waited for the recorder to write the last one (RunEnd)
    assert not any("the bag misses the last" in output for output in outputs), outputs
    first, second = (json.loads((tmp_path / name / "result.json").read_text()) for name in ("first", "second"))
    # said in full when they differ: each run's output and its node log's warnings (stalled steps, missed periods,
    # states lost by the recorder)
    said = "\n\n".join(
        f"== {name}\n{output}\n-- {name}/nodes.log, warnings and errors:\n" + "\n".join(
            line for line in (tmp_path / name / "nodes.log").read_text(errors="replace").splitlines()
            if "WARN" in line or "ERROR" in line or "lost" in line or "stalled" in line)
        for name, output in zip(("first", "second"), outputs))
    assert first["fit"] == second["fit"], said
    for figure in ("relative_error_norm", "nominal"):
        assert first["validation"][figure] == second["validation"][figure], said


def test_experiment_through_the_cli_prints_its_claim_and_writes_its_json(tmp_path):
    """``pardyn experiment wu_redundancy`` (the quickest): the runner returns the report the CLI prints from."""
    result = pardyn("experiment", "wu_redundancy", "--out", str(tmp_path), "--quiet")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "wu_redundancy.json").read_text())
    assert f"claim held in this run: {report['claim_held']}" in result.stdout
    assert all((tmp_path / name).is_file() for name in report["plots"])


def test_list_options_accept_a_leading_negative_number(load):
    """Issue 20, item 3: ``--actuated -2.37,...`` is a value, not an option."""
    robot = load("dualv")
    pose = robot.solve_inverse([0.02, -0.01, 0.1]).q
    actuated = pose[robot.actuated_indices][::-1]  # starts with the negative leg4 angle
    assert actuated[0] < 0
    inverse = pardyn("kinematics", "--robot", "dualv", "--task", "-0.02,0.01,-0.1")
    assert inverse.returncode == 0, inverse.stderr
    answer = json.loads(inverse.stdout)
    assert answer["task"] == pytest.approx({"x": -0.02, "y": 0.01, "phi": -0.1}, abs=1e-12)
    negative_first = ",".join(repr(answer["joints"][n]) for n in robot.actuated_names[::-1])
    assert negative_first.startswith("-")
    # the reversed order is another (unreachable or other-branch) pose: what matters is that it parses
    result = pardyn("kinematics", "--robot", "dualv", "--actuated", negative_first)
    assert "expected one argument" not in result.stderr
    mirrored = pardyn("kinematics", "--robot", "five_bar", "--task", "-0.01,0.3")
    assert mirrored.returncode == 0, mirrored.stderr


def test_bringup_file_path_works_from_any_directory(tmp_path):
    """Issue 20, item 11: ``pardyn bringup config/bringup/sim.yaml`` outside the repository root."""
    result = subprocess.run([sys.executable, "-m", "pardyn.cli", "bringup", "config/bringup/sim.yaml", "--dry-run"],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ros2 run pardyn sim" in result.stdout


def test_spatial_kinematics_through_the_cli():
    """Delta inverse problem: every bar of Williams' geometry has length l = 1.244 m."""
    inverse = pardyn("kinematics", "--robot", "delta", "--task", "0.1,0.05,-1.15")
    assert inverse.returncode == 0, inverse.stderr
    joints = json.loads(inverse.stdout)["joints"]
    w_b, w_p, arm = 0.567 / (2 * math.sqrt(3)), 0.076 / (2 * math.sqrt(3)), 0.524
    for i in range(3):
        alpha, q = 2 * math.pi * i / 3, joints[f"motor{i + 1}"]
        e_r = np.array([math.cos(alpha), math.sin(alpha), 0.0])
        elbow = (w_b + arm * math.cos(q)) * e_r - arm * math.sin(q) * np.array([0.0, 0.0, 1.0])
        assert np.linalg.norm(np.array([0.1, 0.05, -1.15]) + w_p * e_r - elbow) == pytest.approx(1.244, abs=1e-12)


def test_animate_writes_its_files_and_rejects_bad_options_in_one_line(tmp_path, capsys):
    from pardyn.cli import main  # in process: a subprocess costs a second import of matplotlib and pinocchio

    assert main(["animate", "--robot", "hexapod", "--frames", "3", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "hexapod_poses.png").stat().st_size > 1000 and (tmp_path / "hexapod.gif").stat().st_size > 1000
    capsys.readouterr()
    assert main(["animate", "--robot", "hexapod", "--frames", "1", "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--frames" in error
