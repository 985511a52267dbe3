"""``dualv_tracking`` (Briot et al. 2015, section 5.4): small runs of the experiment.

Independent references: with zero PD gains the horizontal DualV receives no torque
and stays at rest at its start, so the measured max error of each joint must be
``max_t |q_ref(t) - q_ref(0)|``, computed here from the trajectory alone; a tuned PD
must do far better; the JSON layout is Table 4's.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from pardyn.cli import main as cli_main
from pardyn.nodes.bringup import load_bringup
from pardyn.experiments.tracking import CASES, TrackingOptions, dualv_tracking, tracking_trajectories

REPO = Path(__file__).resolve().parents[2]

SMALL = dict(circle_turns=1.0, circle_s=0.4, circle_radius_m=0.03, star_points=2, star_segment_s=0.15,
             star_radius_m=0.03, settle_s=0.05, show_progress=False)


def _finite(value) -> bool:
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return isinstance(value, float) and math.isfinite(value)


def test_errors_are_measured_on_the_plant_zero_gain_pd_stays_at_rest(tmp_path, load):
    options = TrackingOptions(cases=("pd",), pd_gain_scale=0.0, **SMALL)
    report = dualv_tracking(tmp_path / "zero", options)
    robot = load("dualv")
    for name, samples in tracking_trajectories(robot, options).items():
        actuated = samples.q[:, robot.actuated_indices]  # (N, n_a)
        expected = np.abs(actuated - actuated[0]).max(axis=0)  # the robot never moves
        measured = np.array(list(report["results"][name]["max_error_rad"]["pd"].values()))
        # the reference is interpolated between the 200 Hz samples: same maximum to ~1e-4 relative
        np.testing.assert_allclose(measured, expected, rtol=2e-3)
        assert np.all(np.array(list(report["results"][name]["max_torque"]["pd"].values())) == 0.0)
    tuned = dualv_tracking(tmp_path / "tuned", TrackingOptions(cases=("pd",), **SMALL))
    for name in ("circle", "star"):
        zero = np.array(list(report["results"][name]["max_error_rad"]["pd"].values()))
        pd = np.array(list(tuned["results"][name]["max_error_rad"]["pd"].values()))
        assert np.all(pd < 0.2 * zero)
    assert report["claim_held"] is None  # no CTC run: nothing claimed


def test_full_experiment_json_layout_with_identification(tmp_path):
    report = dualv_tracking(tmp_path, TrackingOptions(identification_s=6.0, **SMALL))
    data = json.loads((tmp_path / "dualv_tracking.json").read_text())
    assert data["experiment"] == "dualv_tracking" and isinstance(data["claim_held"], bool)
    assert data["identification"]["model"] == "case1" and data["identification"]["base_parameters"] > 0
    joints = data["joints"]
    assert len(joints) == 4
    for name in ("circle", "star"):
        entry = data["results"][name]
        assert set(entry["max_error_rad"]) == set(CASES)
        assert all(list(errors) == joints for errors in entry["max_error_rad"].values())
        assert _finite(entry["max_error_rad"]) and _finite(entry["reduction_pct"])
        assert set(entry["reduction_pct"]) == {"b/a", "c/a"}
        # claim_held is exactly "every CTC error below the PD error"
        for case, key in (("ctc_nominal", "b/a"), ("ctc_identified", "c/a")):
            for joint in joints:
                below = entry["max_error_rad"][case][joint] < entry["max_error_rad"]["pd"][joint]
                assert (entry["reduction_pct"][key][joint] > 0) == below
        assert (tmp_path / f"dualv_tracking_{name}.png").stat().st_size > 0
    assert report["reduction_range_pct"][0] <= report["reduction_range_pct"][1]


def test_cli_rejects_an_unknown_experiment(capsys):
    try:
        cli_main(["experiment", "no_such"])
    except SystemExit as stop:
        assert stop.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_bringup_config_loads():
    bringup = load_bringup(REPO / "config" / "bringup" / "experiments" / "dualv_tracking.yaml")
    specs = {spec.executable: spec for spec in bringup.nodes}
    assert set(specs) == {"sim", "controller", "trajectory"}
    inline = {k: v for p in specs["controller"].parameters if isinstance(p, dict) for k, v in p.items()}
    assert inline["law"] == "ctc" and inline["robot"] == "dualv" and "parameters_file" in inline
    assert all(p.is_file() for s in specs.values() for p in s.parameters if isinstance(p, Path))
