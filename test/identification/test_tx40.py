"""The Staubli TX40's real measured data through ``pardyn identify --csv``, as a user would run it.

Reference (independent of pardyn): the published drive values of the TX40's
authors (``config/T40X_config.yaml``) and FIGAROH's published base parameters
(``results/TX40_bp_5.csv``) of ``../shared/datasets/staubli_tx40/`` (read in
place). The robot description is written here, as a user writes theirs: it
points at the shared URDF and carries the transmission of the dataset README.
"""

from __future__ import annotations

import csv
import json
import re
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import yaml

from pardyn.cli import main
from pardyn.identification.figaroh import figaroh_value, parse_expression, pardyn_name

REPO = Path(__file__).resolve().parents[2]
TX40 = REPO.parent / "shared" / "datasets" / "staubli_tx40"
pytestmark = pytest.mark.skipif(not TX40.is_dir(), reason=f"shared datasets absent: {TX40} not found")

JOINTS = [f"joint_{k}" for k in range(1, 7)]
MOTORS = [f"motor_{k}" for k in range(1, 7)]


@pytest.fixture(scope="module")
def tx40(tmp_path_factory, tx40_arguments):
    folder = tmp_path_factory.mktemp("tx40")
    assert main(tx40_arguments(folder)) == 0
    return json.loads((folder / "tx40.json").read_text()), folder


def published_drive_values() -> dict[str, float]:
    """fv, fs of all joints, Ia of joints 3-6, Iam6, fvm6, fsm6 (some written as '8.05e0', strings in YAML 1.1)."""
    config = yaml.safe_load((TX40 / "config" / "T40X_config.yaml").read_text())
    params = config["identification"]["robot_params"][0]
    values = {}
    for k, joint in enumerate(JOINTS):
        values[f"fv_{joint}"] = float(params["fv"][k])
        values[f"fs_{joint}"] = float(params["fs"][k])
        if k >= 2:
            values[f"ia_{joint}"] = float(params["Ia"][k])
    values.update(iam_motor_6=float(params["Iam6"]), fvm_motor_6=float(params["fvm6"]),
                  fsm_motor_6=float(params["fsm6"]))
    return values


def identified(result: dict) -> dict[str, float]:
    return {**result["standard_parameters"], **result["motor_parameters"]}


def test_61_base_parameters_and_a_fit_error_below_6_percent(tx40, capsys):
    result, folder = tx40
    # FIGAROH's published 60 plus the rotor inertia of joint 6, which its published set leaves out
    assert len(result["base_parameters"]) == 61
    names = {row["name"] for row in result["base_parameters"]}
    assert "ia_joint_6" in names and {"iam_motor_6", "fvm_motor_6", "fsm_motor_6"} <= names
    assert result["fit"]["relative_error_norm"] <= 0.06
    report = (folder / "report" / "report.md").read_text()
    assert "## Coupled motors" in report and (folder / "report" / "fit.png").is_file()


def test_published_drive_values_within_5_percent(tx40):
    result, _ = tx40
    values = identified(result)
    errors = {name: abs(values[name] - value) / value for name, value in published_drive_values().items()}
    assert len(errors) == 19
    assert max(errors.values()) <= 0.05, {k: round(v, 4) for k, v in errors.items()}


def test_figaroh_well_identified_base_parameters(tx40):
    """Every base parameter FIGAROH publishes with %sigma < 10 within 10 %, median difference <= 1 %."""
    result, _ = tx40
    values = identified(result)
    rename = partial(pardyn_name, links=[f"link_{k}" for k in range(1, 7)], joints=JOINTS, motors=MOTORS)
    differences = []
    with open(TX40 / "results" / "TX40_bp_5.csv", newline="") as stream:
        for expression, _, _, value, sigma_pct in csv.reader(stream):
            if float(sigma_pct) < 10:
                ours = figaroh_value(parse_expression(expression, rename), values)
                differences.append(abs(ours - float(value)) / abs(float(value)))
    assert len(differences) >= 20
    assert max(differences) <= 0.10
    assert np.median(differences) <= 0.01


def test_relations_are_clean(tx40):
    """mz_link_2 has no effect (zero column up to round-off): unidentifiable, in no relation, no tiny coefficient."""
    result, _ = tx40
    assert "mz_link_2" in result["unidentifiable"]
    for relation in result["regrouping"]:
        assert "mz_link_2" not in relation
        coefficients = [float(c) for c in re.findall(r"[+-] ([0-9.e+-]+)\*", relation)]
        assert min(coefficients) >= 1e-6, relation
