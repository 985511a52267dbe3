"""A maker's logs as recorded (issue 25): several runs per command, a sample-index time, ``<Field><index>`` columns.

The logs are the UR5e's (a serial arm, as the issue's 7-joint arm) with its truth
known: the nominal parameters plus rotor inertia and friction the nominal (CAD)
model lacks (conftest ``vendor_truth``); torques from that truth with 1 % noise,
written at 1 kHz in the maker's layout with currents, temperatures and commands
beside them (conftest ``write_vendor_run``). The references are that truth and
the runs' own torques.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pardyn
from pardyn.bags import write_joint_states
from pardyn.cli import main

LAYOUT = ["--columns", "position=Position{i},velocity=Velocity{i},effort=Torque{i}", "--time-unit", "samples",
          "--rate", "1000"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory, vendor):
    """Three runs in a folder (6.5, 5.5, 4.9 s), a held-out run (5 s), the UR5e and its truth."""
    folder = tmp_path_factory.mktemp("vendor")
    robot = pardyn.load_robot("ur5e")
    truth = vendor.truth(robot)
    (folder / "runs").mkdir()
    for k, duration in enumerate([6.5, 5.5, 4.9]):
        vendor.write(folder / "runs" / f"run_{k + 1}.csv", robot, truth, duration, seed=k)
    vendor.write(folder / "held_out.csv", robot, truth, 5.0, seed=7)
    return folder, robot, truth


def identified(folder, *arguments) -> dict:
    assert main(["identify", "--robot", "ur5e", *LAYOUT, *arguments, "--out", str(folder / "out.json")]) == 0
    return json.loads((folder / "out.json").read_text())


def test_a_folder_of_vendor_runs_and_a_csv_validation_run_identify_the_arm_as_built(logs, capsys):
    folder, robot, truth = logs
    data = identified(folder, "--run", str(folder / "runs"), "--validate", str(folder / "held_out.csv"))
    values = {row["name"]: row["value"] for row in data["base_parameters"]}
    expected = truth.as_dict()
    for joint in robot.actuated_names:  # the drive terms the nominal model lacks: fv, fs are base parameters alone
        for kind in ("fv", "fs"):
            assert values[f"{kind}_{joint}"] == pytest.approx(expected[f"{kind}_{joint}"], rel=0.03), (kind, joint)
    assert data["validation"]["relative_error_norm"] < 0.03 < data["validation"]["nominal"]["relative_error_norm"]
    assert "preparing 3 bags" in capsys.readouterr().err  # three runs, each its own equations


def test_csv_runs_and_bags_mixed_give_what_the_csv_runs_give(logs):
    folder, robot, _ = logs
    run = np.loadtxt(folder / "runs" / "run_2.csv", delimiter=",", skiprows=1)
    bag = write_joint_states(folder / "run_2_bag", run[:, 0] / 1000.0, robot.actuated_names, run[:, 1:7],
                             run[:, 7:13], run[:, 13:19])
    common = ["--run", str(folder / "runs" / "run_1.csv"), "--effort-delay", "0"]
    from_csv = identified(folder, *common, "--run", str(folder / "runs" / "run_2.csv"))
    mixed = identified(folder, *common, "--run", str(bag))
    a = {row["name"]: row["value"] for row in from_csv["base_parameters"]}
    b = {row["name"]: row["value"] for row in mixed["base_parameters"]}
    assert a.keys() == b.keys()
    scale = max(abs(v) for v in a.values())
    assert max(abs(a[n] - b[n]) for n in a) < 1e-6 * scale  # the bag stores the same numbers (float64)
