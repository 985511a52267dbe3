"""``ur5e_calibration`` on a short run: figures, JSON and plots (the full run is in the README)."""

from __future__ import annotations

import json

import pytest

from pardyn.experiments.ur5e_calibration import CalibrationOptions, ur5e_calibration


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("ur5e")
    options = CalibrationOptions(identification_s=5.0, validation_s=2.5, candidates=1, timestep_s=5e-4, optimize_iterations=2,
                                 workers=2, show_progress=False, keep_bags=True)
    return out, ur5e_calibration(out, options)


def test_json_and_plots_are_written(report):
    out, data = report
    assert json.loads((out / "ur5e_calibration.json").read_text())["experiment"] == "ur5e_calibration"
    assert data["plots"] == ["ur5e_calibrated_torques.png", "ur5e_cad_torques.png", "ur5e_nmse.png"]
    assert all((out / name).stat().st_size > 10_000 for name in data["plots"])


def test_identify_cli_with_rotor_compensation(report, capsys):
    """The kept bags go through ``pardyn identify --rotor-compensation`` (motor_states topic)."""
    from pardyn.cli import main  # noqa: PLC0415

    out, _ = report
    result = out / "identify.json"
    assert main(["identify", "--robot", "ur5e", "--bag", str(out / "bags" / "identification"),
                 "--rotor-compensation", "--out", str(result)]) == 0
    data = json.loads(result.read_text())
    assert data["filter"]["rotor_compensation"] is True and len(data["base_parameters"]) == 58
    assert "cond(W)" in capsys.readouterr().out


def test_figures(report):
    _, data = report
    counts = data["base_parameter_count"]
    assert (counts["vertical"]["inertial"], counts["tilted"]["inertial"]) == (36, 38)
    for label in ("without_compensation", "with_compensation"):
        entry = data["identification"][label]
        assert entry["base_parameters"] == 58
        assert entry["condition_number"] > 1.0
        # decimation by 20 of the 1 kHz data, 1.5 / cut-off trimmed at both ends
        expected = (5.0 - 2 * 1.5 / entry["derivative_cutoff_hz"]) * 1000.0 / 20
        assert abs(entry["samples_after_decimation"] - expected) <= 3
    # the optimised exciting trajectory is never worse than its random start
    design = data["identification"]
    assert 1.0 < design["design_condition_number"] <= design["random_design_condition_number"]
    # the physically consistent estimate is reported beside the unconstrained one
    physical = data["identification"]["with_compensation"]["physical"]
    assert physical["min_pseudo_inertia_eigenvalue"] > 0.0
    # constrained, it cannot fit better than the least squares; the plant's bodies are physical, so it fits
    # almost as well [0.616 % vs 0.611 %] (the residual drive terms after compensation are left free of sign)
    unconstrained = data["identification"]["with_compensation"]["fit_relative_error"]
    assert unconstrained <= physical["fit_relative_error"] < 1.05 * unconstrained
    assert len(data["validation"]) == 3
    for entry in data["validation"]:
        nmse = entry["nmse_current_torque"]
        # the CAD model needs the rotor model, and calibration with compensation beats both others
        assert nmse["cad"] < nmse["cad_without_rotor_model"]
        assert nmse["calibrated_with_compensation"] < nmse["cad"]
        assert nmse["calibrated_with_compensation"] < nmse["calibrated_without_compensation"]
    assert data["claim_held"] is True
