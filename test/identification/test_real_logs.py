"""Real logs, second pass (issue 40): no internal error on any real log.

The reproductions of the issue, with synthetic data in the layouts the users had:

* a 7-joint arm with a Kinova Gen3's kinematics written as the maker writes them (angles to four
  decimals: the first axis is 7 microradians off the vertical, so two first moments of the shoulder act
  through 1e-5 of gravity), home at zero (straight up, singular), continuous joints; 10 s of sinusoids
  of 1.5 rad on every joint, torques from the model plus 1 % noise: the weighted solve used to find a
  column the unweighted QR had kept ("W is rank deficient: ... my_shoulder_linkR"); eight runs alike;
* a UR5e log at 100 Hz with +-1 ms stamp jitter (``max() arg is an empty sequence`` in the decimation
  stages);
* a UR5e run in which only the shoulder moves (2.07 rad) and the others creep by < 0.003 rad, 100 Hz with
  jitter.

References: the truth the torques were made from (its torques on the runs, the identified fit error
against the 1 % noise), and an independent structural analysis on states drawn here over the joints' ranges.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pardyn
from pardyn.cli import main
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.regressor import Regressor
from pardyn.identification.base_parameters import base_parameters, symmetric_order
from pardyn.identification.identifiability import random_states, structural_base

from .conftest import vendor_motion, vendor_truth
from .gen3_like import JOINTS, sinusoids, write_robot

HEADER = ("position", "velocity", "effort")


def write_csv(path, t, q, qdot, torque, joints):
    header = ["time", *(f"{joint}_{kind}" for kind in HEADER for joint in joints)]
    np.savetxt(path, np.column_stack([t, q, qdot, torque]), delimiter=",", header=",".join(header), comments="",
               fmt="%.10g")
    return path


def noisy(torque, seed, level=0.01):
    rng = np.random.default_rng(seed)
    return torque + level * np.sqrt(np.mean(torque**2, axis=0)) * rng.standard_normal(torque.shape)


def identify(folder, robot, *runs, extra=()):
    out = folder / "out.json"
    arguments = ["identify", "--robot", str(robot), *(a for run in runs for a in ("--run", str(run))), *extra,
                 "--out", str(out)]
    assert main(arguments) == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def gen3(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gen3")
    description = write_robot(folder)
    return folder, description, pardyn.load_robot(description)


def gen3_run(folder, robot, name, amplitude, duration_s=10.0, seed=0, moving=None):
    t, q, qdot, qddot = sinusoids(duration_s, 1000.0, amplitude, seed=seed, moving=moving)
    torque = noisy(InverseDynamics(robot).torques_batch(q, qdot, qddot), seed)
    return write_csv(folder / name, t, q, qdot, torque, JOINTS)


@pytest.mark.parametrize("amplitude", [1.5, 0.5])
def test_the_seven_joint_arm_with_its_makers_angles_identifies_and_names_what_it_does_not(gen3, amplitude, capsys):
    folder, description, robot = gen3
    run = gen3_run(folder, robot, f"run_{amplitude}.csv", amplitude)
    result = identify(folder, description, run)
    assert "rank deficient" not in capsys.readouterr().err
    assert result["fit"]["relative_error_norm"] < 0.02  # 1 % noise: the model explains the rest
    lost = result["identifiability"]["not_identified"]
    assert all(row["reason"] for row in lost)
    # the two first moments the 7 microradian tilt leaves to gravity are the ones not identified
    assert {row["name"] for row in lost} <= {"mx_shoulder_link", "my_shoulder_link", "ia_joint_2"}
    assert {"mx_shoulder_link", "my_shoulder_link"} & {row["name"] for row in lost}
    names = {row["name"] for row in result["base_parameters"]}
    assert not names & {row["name"] for row in lost}


def test_eight_runs_identify(gen3, tmp_path):
    _, description, robot = gen3
    runs = [gen3_run(tmp_path, robot, f"run_{k}.csv", 1.5, duration_s=4.9, seed=k) for k in range(8)]
    result = identify(tmp_path, description, *runs)
    assert result["fit"]["relative_error_norm"] < 0.02
    assert all(row["reason"] for row in result["identifiability"]["not_identified"])


def test_structural_states_span_the_joint_ranges_not_home(gen3):
    _, _, robot = gen3
    q, _, _ = random_states(robot, samples=200)
    assert np.all(np.ptp(q, axis=0) > 3.0)  # rad: continuous joints over a turn, the others over their limits
    regressor = Regressor(robot)
    # independent: the QR of eq. (42) on 200 states drawn here over the ranges (not +-0.05 rad around home)
    rng = np.random.default_rng(11)
    limits = np.array([2.41 if k in (1, 3, 5) else np.pi for k in range(7)])
    states = rng.uniform(-limits, limits, (200, 7)), rng.standard_normal((200, 7)), rng.standard_normal((200, 7))
    W = regressor.matrix(*states).reshape(-1, len(regressor.names))
    expected = base_parameters(W, names=regressor.names, order=symmetric_order(regressor.names))
    found = structural_base(robot, regressor, regressor.names)
    assert found.names == expected.names
    # near the singular home, +-0.05 rad states regrouped columns into ia_joint_2 (ia_joint_2R); the ranges do not
    assert "ia_joint_2" in found.names


@pytest.fixture(scope="module")
def ur5e():
    robot = pardyn.load_robot("ur5e")
    return robot, vendor_truth(robot)


def jittered(t, seed):
    return t + np.random.default_rng(seed).uniform(-1e-3, 1e-3, t.shape)


def test_a_100_hz_log_with_stamp_jitter_identifies(ur5e, tmp_path):
    robot, truth = ur5e
    q, qdot, qddot = (x[::10] for x in vendor_motion(6, 8.0, 0))  # 100 Hz
    torque = noisy(Regressor(robot).matrix(q, qdot, qddot) @ truth.vector(), 1)
    t = jittered(np.arange(len(q)) / 100.0, 5)
    assert np.median(np.diff(t)) > 0.01  # the stamps say slightly less than 100 Hz: the case that failed
    run = write_csv(tmp_path / "jitter.csv", t, q, qdot, torque, robot.actuated_names)
    result = identify(tmp_path, "ur5e", run)
    assert result["fit"]["relative_error_norm"] < 0.03


def test_one_joint_moving_while_the_others_creep_identifies_what_moves(ur5e, tmp_path):
    robot, truth = ur5e
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 12.0, 0.01)
    omega = 2 * np.pi * 0.2
    q = np.tile(robot.home, (len(t), 1))
    qdot, qddot = np.zeros_like(q), np.zeros_like(q)
    q[:, 1] += 1.035 * (1 - np.cos(omega * t))  # the shoulder: 2.07 rad
    qdot[:, 1], qddot[:, 1] = 1.035 * omega * np.sin(omega * t), 1.035 * omega**2 * np.cos(omega * t)
    for j in (0, 2, 3, 4, 5):  # the others creep: < 0.003 rad peak to peak
        a, f = rng.uniform(0.0005, 0.0014), 2 * np.pi * rng.uniform(0.05, 0.3)
        q[:, j] += a * np.sin(f * t)
        qdot[:, j], qddot[:, j] = a * f * np.cos(f * t), -a * f**2 * np.sin(f * t)
    assert np.ptp(q[:, [0, 2, 3, 4, 5]], axis=0).max() < 0.003
    torque = noisy(Regressor(robot).matrix(q, qdot, qddot) @ truth.vector(), 2)
    run = write_csv(tmp_path / "shoulder.csv", jittered(t, 4), q, qdot, torque, robot.actuated_names)
    result = identify(tmp_path, "ur5e", run)
    lost = {row["name"]: row["reason"] for row in result["identifiability"]["not_identified"]}
    assert any("hardly moves" in reason for reason in lost.values())
    # the joint that moves is explained to the noise (the creeping ones carry Coulomb steps the model leaves out)
    assert result["fit"]["per_joint"]["shoulder_lift_joint [shoulder.csv]"] < 0.03
