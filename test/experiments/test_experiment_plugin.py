"""A new experiment is one file (test/experiments/mass_experiment.py): registered, ``pardyn experiment`` lists it,
declares its own flag from its ``Options``, runs it and prints its claim, without any other file changing; a
flag that only another experiment reads is refused."""

from __future__ import annotations

import json

import pytest

from pardyn.cli import main
from pardyn.experiments.registry import EXPERIMENTS, experiment_options, load_experiments

from .mass_experiment import register


@pytest.fixture
def robot_mass():
    load_experiments()
    name = register()
    yield name
    EXPERIMENTS.unregister(name)


def test_every_experiment_is_a_plugin():
    experiments = load_experiments()
    assert {"dualv_tracking", "rrr3_robustness", "h4_pfc_vs_ctc", "estimator_benchmark"} <= set(experiments)
    flags = {spec.flag: users for spec, users in experiment_options()}
    assert set(flags["identification-s"]) == {"dualv_tracking", "ur5e_calibration", "estimators",
                                              "estimator_benchmark", "hexapod_identification"}
    assert flags["templates"] == ("rrr3_robustness",) and flags["in-process"] == ("hexapod_identification",)


def test_a_registered_experiment_runs_with_its_own_flag(robot_mass, tmp_path, capsys):
    assert main(["experiment", robot_mass, "--out", str(tmp_path), "--mass-budget", "1", "--quiet"]) == 0
    report = json.loads((tmp_path / "robot_mass.json").read_text())
    assert report["options"] == {"mass_budget": 1.0} and report["claim_held"] is False
    printed = capsys.readouterr().out
    assert f"links: {report['mass_kg']:.2f} kg" in printed and "claim held in this run: False" in printed
    assert main(["experiment", robot_mass, "--out", str(tmp_path), "--templates", "3"]) == 2
    assert "the robot_mass experiment has no such option (the rrr3_robustness experiment" in capsys.readouterr().err
