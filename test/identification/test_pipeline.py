"""Identification end to end, on bags recorded from the MuJoCo plant (not from the model itself).

The plant is the robot *as built*: its parameters differ from the nominal
(YAML, "CAD") ones by a seeded draw (pardyn.simulation.identification_runs),
so the tests know the truth and the nominal model is a genuine baseline.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import pardyn
from pardyn.bags import BagError, write_joint_states
from pardyn.errors import InputError
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.simulation.identification_runs import DUALV_PAYLOAD, Run, record_runs, standard_runs
from pardyn.identification.pipeline import IdentificationSettings, identify


@pytest.fixture(scope="module")
def dualv_runs(tmp_path_factory):
    """The issue's protocol at a third of its length (the paper's 60 s runs are ``pardyn experiment`` / bench work:
    the plant costs ~2.4 CPU-s per simulated s, MuJoCo's step half of it): 20 s without, 20 s with the 5.37 kg
    payload, a 7 s held-out run, 2**17 counts/rev, 1 % noise: 44 s against 64 s at 30/30/10 s (both slots, 28 Nov;
    146 s in a two-worker suite). At 20/20/7 s every bound below held with room: payload mass 0.04 % (bound 1 %),
    m x 0.4 % (5 %), held-out 1.8 % (5 %, nominal 5.9 %), fs 3-10 % (15 %), prediction 0.6 % (3 %), case 2 mass
    0.07 % (2 %)."""
    runs = standard_runs("dualv", duration_s=20.0, validation_s=7.0)[:3]
    return record_runs("dualv", runs, tmp_path_factory.mktemp("dualv"), show_progress=False)


@pytest.fixture(scope="module")
def dualv_result(dualv_runs):
    robot = pardyn.load_robot("dualv")
    bags = dualv_runs.bags
    return identify(robot, [bags["unloaded"]], loaded_bags=[bags["loaded"]], validate_bags=[bags["validation_1"]],
                    show_progress=False)


def test_dualv_runs_are_exciting_and_closed(dualv_runs):
    for figures in dualv_runs.figures.values():
        assert figures["max_closure_violation"] < 1e-6  # m, MuJoCo's equality constraints
        assert figures["max_torque"] < 127.0  # the DualV's ETEL motors (section 5.1)


def test_dualv_payload_mass_within_one_percent(dualv_result):
    assert dualv_result.model == "case1"
    assert dualv_result.payload["mass"] == pytest.approx(DUALV_PAYLOAD.mass, rel=0.01)
    # first moment in the platform frame: m * com_x = 5.37 * -0.02 kg m
    assert dualv_result.payload["mx"] == pytest.approx(DUALV_PAYLOAD.mass * DUALV_PAYLOAD.com[0], rel=0.05)


def test_dualv_held_out_torques_below_five_percent_and_better_than_nominal(dualv_result):
    data = dualv_result.as_json()
    validation = data["validation"]
    assert validation["relative_error_norm"] < 0.05
    assert validation["relative_error_norm"] < validation["nominal"]["relative_error_norm"]
    assert validation["nmse"] < validation["nominal"]["nmse"]
    assert all(error < 0.05 for error in validation["per_joint"].values())


def test_dualv_coulomb_friction_recovers_the_as_built_values(dualv_runs, dualv_result):
    """fs is not regrouped (eq. 5 column alone): it must match the plant's as-built value.

    Not exactly: MuJoCo's dry friction is a soft constraint that sticks around
    velocity reversals, where eq. (5)'s ``fs sign(qdot)`` jumps; the estimate
    absorbs part of that difference (about 10 % here, as on a real drive).
    """
    truth = dualv_runs.truth.as_dict()
    estimated = dict(zip(dualv_result.estimate.names, dualv_result.estimate.chi))
    for leg in range(1, 5):
        name = f"fs_leg{leg}_joint1"
        assert estimated[name] == pytest.approx(truth[name], rel=0.15), name


def test_dualv_identified_model_predicts_like_the_truth(dualv_runs, dualv_result):
    """On random closed states the identified and the as-built models give the same platform forces."""
    robot = pardyn.load_robot("dualv")
    rng = np.random.default_rng(5)
    truth = InverseDynamics(robot, dualv_runs.truth.with_values({n: 0.0 for n in dualv_runs.truth.names if n.endswith("_payload")}))
    identified = InverseDynamics(robot, dualv_result.parameters.with_values(
        {n: 0.0 for n in dualv_result.parameters.names if n.endswith("_payload")}))
    errors, norms = [], []
    for _ in range(20):
        q = robot.solve_inverse(robot.home[robot.task_indices] + rng.uniform(-0.05, 0.05, 3)).q
        xdot, xddot = rng.normal(size=3), 20 * rng.normal(size=3)
        expected = truth.torques_from_task(q, xdot, xddot)
        errors.append(identified.torques_from_task(q, xdot, xddot) - expected)
        norms.append(expected)
    assert np.linalg.norm(errors) / np.linalg.norm(norms) < 0.03


def test_dualv_compiled_kernels_identify_what_the_python_path_does(dualv_runs, dualv_result):
    """pardyn.kernels (``pardyn identify``'s path): closed-loop states and observation matrices in C give the
    plant's payload and the Python path's parameters (that path solves its states in numpy passes: 1e-8 apart)."""
    robot = pardyn.load_robot("dualv", kernels="compiled")
    bags = dualv_runs.bags
    result = identify(robot, [bags["unloaded"]], loaded_bags=[bags["loaded"]], validate_bags=[bags["validation_1"]],
                      show_progress=False)
    assert result.payload["mass"] == pytest.approx(DUALV_PAYLOAD.mass, rel=0.01)
    reference = dualv_result.estimate.chi
    assert np.abs(result.estimate.chi - reference).max() <= 1e-6 * np.abs(reference).max()
    assert result.as_json()["validation"]["relative_error_norm"] == pytest.approx(
        dualv_result.as_json()["validation"]["relative_error_norm"], rel=1e-6)


def test_dualv_case2_gives_the_same_payload(dualv_runs):
    robot = pardyn.load_robot("dualv")
    bags = dualv_runs.bags
    result = identify(robot, [bags["unloaded"]], loaded_bags=[bags["loaded"]],
                      settings=IdentificationSettings(model="case2"), show_progress=False)
    assert result.model == "case2"
    assert result.payload["mass"] == pytest.approx(DUALV_PAYLOAD.mass, rel=0.02)


@pytest.mark.parametrize("name", ["rrr3", "five_bar"])
def test_non_redundant_robots_with_the_standard_idim(tmp_path, name):
    runs = [Run("unloaded", 1, 15.0), Run("validation_1", 3, 5.0)]
    recorded = record_runs(name, runs, tmp_path, show_progress=False)
    robot = pardyn.load_robot(name)
    result = identify(robot, [recorded.bags["unloaded"]], validate_bags=[recorded.bags["validation_1"]],
                      show_progress=False)
    data = result.as_json()
    assert data["model"] == "standard"
    assert data["fit"]["relative_error_norm"] < 0.05
    assert data["validation"]["relative_error_norm"] < 0.05
    assert data["validation"]["relative_error_norm"] < data["validation"]["nominal"]["relative_error_norm"]


def test_cli_writes_result_report_and_feeds_pardyn_dynamics(dualv_runs, tmp_path):
    bags = dualv_runs.bags
    result_path = tmp_path / "result.json"
    command = [sys.executable, "-m", "pardyn.cli", "identify", "--robot", "dualv", "--bag", str(bags["unloaded"]),
               "--loaded-bag", str(bags["loaded"]), "--validate-bag", str(bags["validation_1"]),
               "--out", str(result_path), "--report", str(tmp_path / "report")]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    data = json.loads(result_path.read_text())
    for key in ("robot", "model", "samples", "base_parameters", "essential_parameters", "payload", "fit", "validation"):
        assert key in data
    assert {"name", "value", "std", "std_pct"} <= set(data["base_parameters"][0])
    assert (tmp_path / "report" / "report.md").read_text().count("![") >= 3
    # pardyn dynamics --params takes the result: torques along a task trajectory
    trajectory = tmp_path / "trajectory.csv"
    lines = ["t,x,x_dot,x_ddot,y,y_dot,y_ddot,phi,phi_dot,phi_ddot"]
    for k in range(5):
        t = 0.1 * k
        lines.append(f"{t},{0.02 * np.sin(t)},{0.02 * np.cos(t)},{-0.02 * np.sin(t)},0,0,0,0,0,0")
    trajectory.write_text("\n".join(lines) + "\n")
    out = tmp_path / "torques.csv"
    completed = subprocess.run([sys.executable, "-m", "pardyn.cli", "dynamics", "--robot", "dualv", "--trajectory",
                                str(trajectory), "--out", str(out), "--params", str(result_path)],
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert out.read_text().splitlines()[0] == "t,leg1_joint1,leg2_joint1,leg3_joint1,leg4_joint1"


def test_bag_without_efforts_is_rejected_with_bag_topic_and_time(tmp_path):
    robot = pardyn.load_robot("five_bar")
    t = np.arange(2000) * 1e-3
    positions = np.tile(robot.home[robot.actuated_indices], (2000, 1))
    bag = write_joint_states(tmp_path / "no_effort", t, list(robot.actuated_names), positions)
    with pytest.raises(BagError, match=r"no_effort.*joint_states.*no effort for leg1_joint1 at t=0\.000000 s"):
        identify(robot, [bag], show_progress=False)


def test_bag_missing_a_measured_joint_is_rejected(tmp_path):
    robot = pardyn.load_robot("five_bar")
    t = np.arange(100) * 1e-3
    bag = write_joint_states(tmp_path / "one_joint", t, ["leg1_joint1"], np.zeros((100, 1)), effort=np.zeros((100, 1)))
    with pytest.raises(BagError, match="leg2_joint1"):
        identify(robot, [bag], show_progress=False)


def test_too_short_record_is_rejected(tmp_path):
    robot = pardyn.load_robot("five_bar")
    t = np.arange(300) * 1e-3
    positions = robot.home[robot.actuated_indices] + 0.01 * np.sin(2 * np.pi * t)[:, None]
    bag = write_joint_states(tmp_path / "short", t, list(robot.actuated_names), positions, effort=np.ones((300, 2)))
    with pytest.raises((BagError, InputError), match="too short"):  # to trim, or to give enough equations
        identify(robot, [bag], show_progress=False)


def test_wu3r_identification_recovers_the_as_built_machine(tmp_path):
    """Wu 2009 redundant machine (prismatic actuators, counterweights as real MuJoCo bodies): a 6 s bag
    identified with the case-1 model predicts the as-built machine's forces on random states within 2 %
    [measured 0.13 %] while the nominal (CAD) model is off by > 10 % [18.7 %].

    The plant's counterweights are bodies of mass ``ia`` under gravity: the as-built offset is
    ``-ia_truth g`` (``as_built_parameters`` scales ``ia`` but not the offset, which has no physics there).
    """
    recorded = record_runs("wu3r", [Run("unloaded", 1, 6.0)], tmp_path, show_progress=False, workers=1)
    robot = pardyn.load_robot("wu3r")
    result = identify(robot, [recorded.bags["unloaded"]], show_progress=False)
    assert result.model == "case1"
    assert recorded.figures["unloaded"]["max_closure_violation"] < 1e-6
    truth = recorded.truth.as_dict()
    gravity = -recorded.truth.gravity[1]  # 9.81 m/s^2 along -y
    truth = recorded.truth.with_values({f"offset_slider{i}_joint": -gravity * truth[f"ia_slider{i}_joint"] for i in (1, 2)})
    models = {name: InverseDynamics(robot, params) for name, params in
              (("truth", truth), ("identified", result.parameters), ("nominal", None))}
    rng = np.random.default_rng(5)
    errors = {"identified": [], "nominal": []}
    expected = []
    for _ in range(20):
        q = robot.solve_inverse(robot.home[robot.task_indices] + rng.uniform(-0.1, 0.1, 3)).q
        xdot, xddot = 0.5 * rng.normal(size=3), 3.0 * rng.normal(size=3)
        reference = models["truth"].torques_from_task(q, xdot, xddot)
        expected.append(reference)
        for name in errors:
            errors[name].append(models[name].torques_from_task(q, xdot, xddot) - reference)
    scale = np.linalg.norm(expected)
    assert np.linalg.norm(errors["identified"]) / scale < 0.02
    assert np.linalg.norm(errors["nominal"]) / scale > 0.1


@pytest.mark.parametrize("kernels", ["python", "compiled"])  # compiled: the C series hands the sample to Python
def test_a_bag_of_another_robot_names_bag_topic_and_time(tmp_path, kernels):
    """Issue 20, item 4: DualV states given to --robot five_bar: the kinematics error names the bag."""
    dualv = pardyn.load_robot("dualv")
    t = np.arange(2000) * 1e-3
    # a DualV motion down to y = -0.1 m: leg 1-2 angles the five-bar cannot close (checked by hand: at
    # (x, y) = (0, -0.1) the DualV's (2.66, 0.48) rad put the five-bar's elbows 0.55 m apart > 2 x 0.25 m)
    task = np.column_stack([np.zeros_like(t), -0.1 * np.sin(np.pi * t / 2.0) ** 2, np.zeros_like(t)])
    q = dualv.home
    rows = []
    for pose in task:
        q = dualv.solve_inverse(pose, start=q).q
        rows.append(q[dualv.actuated_indices])
    bag = write_joint_states(tmp_path / "dualv_bag", t, list(dualv.actuated_names), np.array(rows),
                             effort=np.ones((2000, 4)))
    with pytest.raises(BagError, match=r"dualv_bag.*joint_states.*t=\d+\.\d+ s.*five_bar") as raised:
        identify(pardyn.load_robot("five_bar", kernels=kernels), [bag], show_progress=False)
    assert "leg3_joint1" in str(raised.value)  # the bag's joints, a hint that it is another robot's


def test_too_few_equations_names_the_bags(tmp_path):
    """Issue 20, item 4: '81 equations for 106 standard parameters' now says which bags."""
    robot = pardyn.load_robot("dualv")
    t = np.arange(700) * 1e-3
    task = np.column_stack([0.01 * np.sin(4 * np.pi * t), 0.01 * np.cos(4 * np.pi * t), 0.02 * np.sin(2 * np.pi * t)])
    q = robot.home
    rows = []
    for pose in task:
        q = robot.solve_inverse(pose, start=q).q
        rows.append(q[robot.actuated_indices])
    bag = write_joint_states(tmp_path / "few", t, list(robot.actuated_names), np.array(rows), effort=np.ones((700, 4)))
    with pytest.raises(InputError, match=r"few.*equations .* for \d+ standard parameters"):
        identify(robot, [bag], show_progress=False, settings=IdentificationSettings(cutoff_hz=20.0))


def test_cli_refuses_to_write_a_collapsed_fit(tmp_path, capsys):
    """Efforts unrelated to the motion (white noise): no model fits; exit 2, one line, no RESULT.json."""
    from pardyn.cli import main

    robot = pardyn.load_robot("five_bar")
    rng = np.random.default_rng(3)
    t = np.arange(8000) * 1e-3
    positions = robot.home[robot.actuated_indices] + 0.05 * np.column_stack(
        [np.sin(2 * np.pi * 0.7 * t), np.sin(2 * np.pi * 1.1 * t + 0.4)])
    bag = write_joint_states(tmp_path / "noise", t, list(robot.actuated_names), positions,
                             effort=rng.standard_normal((8000, 2)))
    out = tmp_path / "result.json"
    status = main(["identify", "--robot", "five_bar", "--bag", str(bag), "--out", str(out)])
    message = capsys.readouterr().err.strip().splitlines()[-1]  # after the progress lines
    assert status == 2 and not out.exists()
    assert message.startswith("pardyn identify: fit collapsed: the base model") and "nothing written" in message
