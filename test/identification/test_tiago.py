"""The TIAGo's real data (8 joints, jittered ~100 Hz stamps) through ``pardyn identify --csv --holdout``.

The data have problems of their own (measured, ``../shared/datasets/tiago/``):
the wrist efforts (arm_5..7) are exactly 0 most of the time, and the efforts are
not in N / N m (the torso's are 0.7 % of the force the URDF masses need to
lift the arm). The run must go through, validate on the held-out last quarter,
and say each problem in the report instead of failing or hiding it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pardyn.cli import main

TIAGO = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "tiago"
pytestmark = pytest.mark.skipif(not TIAGO.is_dir(), reason=f"shared datasets absent: {TIAGO} not found")

DESCRIPTION = f"""\
name: tiago
urdf: {TIAGO / "tiago.urdf"}
task: {{z: torso_lift_joint, q1: arm_1_joint, q2: arm_2_joint, q3: arm_3_joint, q4: arm_4_joint,
        q5: arm_5_joint, q6: arm_6_joint, q7: arm_7_joint}}
actuated: [torso_lift_joint, arm_1_joint, arm_2_joint, arm_3_joint, arm_4_joint, arm_5_joint, arm_6_joint,
           arm_7_joint]
closures: []
locked: others          # wheels, head and hand: welded at 0 (their inertia lumped into their parents)
home:
  task: {{z: 0.1, q1: 0.2, q2: 0.0, q3: 0.0, q4: 0.5, q5: 0.0, q6: 0.0, q7: 0.0}}
"""


def test_tiago_identified_with_a_held_out_quarter_and_its_problems_reported(tmp_path, capsys):
    robot = tmp_path / "tiago.yaml"
    robot.write_text(DESCRIPTION)
    files = [f"--csv={TIAGO / f'tiago_{field}.csv'}" for field in ("position", "velocity", "effort")]
    assert main(["identify", "--robot", str(robot), *files, "--holdout", "0.25", "--decimation", "2",
                 "--out", str(tmp_path / "tiago.json"), "--report", str(tmp_path / "report")]) == 0
    printed = capsys.readouterr().out
    result = json.loads((tmp_path / "tiago.json").read_text())
    notes = "\n".join(result["data_notes"])
    assert "resampled onto a uniform" in notes and "jitter 0.568 ms rms" in notes
    for joint in ("arm_5_joint", "arm_6_joint", "arm_7_joint"):
        assert f"{joint}: effort exactly 0 in" in notes
    assert "torso_lift_joint: recorded efforts are 0.00" in notes  # not N: the unit is said
    # values no drive can have are named (real data: the elbow's viscous friction comes out negative)
    assert "fv_arm_3_joint = -" in notes and ": negative friction (--physical gives the physically" in notes
    assert "align best" not in notes  # no effort delay claimed: a shift explains little on these data
    validation = result["validation"]
    assert validation["bags"][0]["bag"].endswith("(held out)")
    # held out: far better than the nominal model in the recorded effort unit, and reported
    assert validation["relative_error_norm"] < 0.5 < 10 < validation["nominal"]["relative_error_norm"]
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Data" in report and "effort exactly 0" in report and "Cross-validation" in report
    assert "validation: relative error" in printed
