"""Shared by the identification tests: the Staubli TX40 run of the README's 'Your own data' section."""

from __future__ import annotations

from pathlib import Path

import pytest

TX40 = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "staubli_tx40"

DESCRIPTION = f"""\
# The Staubli TX40 of Gautier's group, as a user describes it (dataset README for the transmission).
name: tx40
urdf: {TX40 / "urdf" / "tx40_mdh_modified.urdf"}
task: {{q1: joint_1, q2: joint_2, q3: joint_3, q4: joint_4, q5: joint_5, q6: joint_6}}
actuated: [joint_1, joint_2, joint_3, joint_4, joint_5, joint_6]
closures: []
home:
  task: {{q1: 0.0, q2: 0.0, q3: 0.0, q4: 0.0, q5: 0.0, q6: 0.0}}
transmissions:                      # theta_m = sum_j ratio q_j + offset (rad), dataset README
  - {{motor: motor_1, joints: {{joint_1: 32.0}}}}
  - {{motor: motor_2, joints: {{joint_2: 32.0}}, offset: 50.26548245743669}}    # q2 = theta/32 - pi/2
  - {{motor: motor_3, joints: {{joint_3: 45.0}}, offset: -70.68583470577035}}   # q3 = theta/45 + pi/2
  - {{motor: motor_4, joints: {{joint_4: -48.0}}}}
  - {{motor: motor_5, joints: {{joint_5: 45.0}}}}
  - {{motor: motor_6, joints: {{joint_5: 32.0, joint_6: 32.0}}}}               # motor 6 turns with q5 + q6
"""
# the published recipe: 100 Hz Butterworth, 5 kHz -> 50 Hz, 20 samples trimmed, per-joint speed thresholds
MIN_SPEED = "0.05009095,0.05009095,0.07504916,0.0715585,0.05585054,0.12217305"  # dq_lim_def, rad/s


def _tx40_arguments(folder: Path) -> list[str]:
    """``pardyn identify`` arguments of the TX40 run (the README's 'Your own data' example)."""
    robot = folder / "tx40.yaml"
    robot.write_text(DESCRIPTION)
    data = TX40 / "data"
    return [
        "identify", "--robot", str(robot),
        "--csv", f"position={data / 'pos_read_data.csv'}", "--csv", f"effort={data / 'curr_data.csv'}",
        "--rate", "5000", "--joint-map", ",".join(f"Joint_{k}=motor_{k}" for k in range(1, 7)),
        "--cutoff", "100", "--decimation", "100", "--model-rate", "250", "--trim", "0.004",
        "--min-speed", MIN_SPEED, "--out", str(folder / "tx40.json"), "--report", str(folder / "report"),
    ]



@pytest.fixture(scope="session")
def tx40_arguments():
    """``tx40_arguments(folder)``: writes the TX40 description into ``folder``, returns the CLI arguments."""
    return _tx40_arguments
