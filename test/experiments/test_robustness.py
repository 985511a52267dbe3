"""``rrr3_robustness`` (Zubizarreta et al. 2010, section 4.8): pieces against closed forms, and a small run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pardyn.nodes.bringup import load_bringup
from pardyn.errors import InputError
from pardyn.control.gains import gains_from_step_response
from pardyn.experiments.plots import error_indices
from pardyn.experiments.robustness import (
    RobustnessOptions,
    check_circle,
    perturbed_parameters,
    rrr3_robustness,
    sign_templates,
)

REPO = Path(__file__).resolve().parents[2]


def test_error_indices_closed_form():
    t = np.linspace(0.0, 1.0, 100001)
    indices = error_indices(t, -t)  # |e| = t: ISE = 1/3, IAE = 1/2, ITAE = 1/3
    assert indices["ISE"] == pytest.approx(1 / 3, rel=1e-8)
    assert indices["IAE"] == pytest.approx(1 / 2, rel=1e-8)
    assert indices["ITAE"] == pytest.approx(1 / 3, rel=1e-8)


def test_templates_and_perturbation(load):
    robot = load("rrr3")
    nominal = robot.nominal_parameters
    templates = sign_templates(nominal, count=10, seed=3)
    assert templates.shape == (10, len(nominal.bodies), 3)
    assert set(np.unique(templates)) <= {-1.0, 0.0, 1.0}
    np.testing.assert_array_equal(templates, sign_templates(nominal, count=10, seed=3))
    assert np.array_equal(perturbed_parameters(nominal, templates[0], 0.0).vector(), nominal.vector())
    # all +1 at 5 %: m * 1.05, first moments m c * 1.05^2 (mass and com both scaled)
    plus = perturbed_parameters(nominal, np.ones_like(templates[0]), 5.0)
    for before, after in zip(nominal.bodies, plus.bodies):
        assert after.standard[9] == pytest.approx(1.05 * before.standard[9], rel=1e-12)
        np.testing.assert_allclose(after.standard[6:9], 1.05**2 * before.standard[6:9], rtol=1e-12, atol=1e-15)
    # mass only, -1: the inertia about the origin loses 5 % of its parallel-axis part only
    mass_only = np.zeros_like(templates[0])
    mass_only[:, 0] = -1.0
    minus = perturbed_parameters(nominal, mass_only, 5.0)
    body = nominal.bodies[0]  # proximal link: m = 0.4239, c = 0.25 along x, I_zz about com 0.0088
    assert minus.bodies[0].standard[5] == pytest.approx(0.0088 + 0.95 * 0.4239 * 0.25**2, rel=1e-9)
    assert body.standard[5] == pytest.approx(0.0088 + 0.4239 * 0.25**2, rel=1e-9)
    plus.apply(load("rrr3").model.copy())  # physical bodies: accepted by pinocchio


def test_reachability_of_the_papers_circle(load):
    robot = load("rrr3")
    options = RobustnessOptions(check_points=24)
    ok, worst = check_circle(robot, np.zeros(2), options)
    assert ok and 1.0 < worst < options.max_condition
    far, _ = check_circle(robot, np.array([1.5, 1.5]), options)
    assert not far


def test_small_run_json(tmp_path):
    options = RobustnessOptions(levels=(1.0, 5.0), templates=2, duration_s=0.5, settle_s=0.1, show_progress=False)
    report = rrr3_robustness(tmp_path, options)
    data = json.loads((tmp_path / "rrr3_robustness.json").read_text())
    assert data["centre_used"] == [0.0, 0.0] and data["centre_reachable"] is True
    assert isinstance(data["claim_held"], bool) and data["runs"] == 2 * (1 + 2 * 2)
    for kind in ("ctc", "extended_ctc"):
        rows = data["results"][kind]["per_level"]
        assert list(rows) == ["0", "1", "5"]
        for row in rows.values():
            assert all(math.isfinite(row[k]) and row[k] > 0 for k in ("ISE", "IAE", "ITAE", "max_error_m"))
            # the run is 0.6 s: IAE <= 0.6 max e, ITAE <= 0.6 IAE, ISE <= max e IAE
            assert row["IAE"] <= 0.6 * row["max_error_m"] * 1.0001
            assert row["ITAE"] <= 0.6 * row["IAE"]
            assert row["ISE"] <= row["max_error_m"] * row["IAE"] * 1.0001
        slopes = data["results"][kind]["slope_per_pct"]
        for k in ("ISE", "IAE", "ITAE"):
            assert slopes[k] == pytest.approx((rows["5"][k] - rows["1"][k]) / 4.0, rel=1e-9)
    claim = all(data["results"]["extended_ctc"]["slope_per_pct"][k] < data["results"]["ctc"]["slope_per_pct"][k]
                for k in ("ISE", "IAE", "ITAE"))
    assert data["claim_held"] == claim
    assert all((tmp_path / name).stat().st_size > 0 for name in report["plots"])
    with pytest.raises(InputError, match="unknown laws"):
        rrr3_robustness(tmp_path, RobustnessOptions(laws=("pid",)))


def test_bringup_config_loads():
    bringup = load_bringup(REPO / "config" / "bringup" / "experiments" / "rrr3_robustness.yaml")
    specs = {spec.executable: spec for spec in bringup.nodes}
    assert set(specs) == {"sim", "controller", "trajectory"}
    inline = {k: v for p in specs["controller"].parameters if isinstance(p, dict) for k, v in p.items()}
    assert inline["law"] == "extended_ctc" and inline["robot"] == "rrr3"
    frequency, damping = gains_from_step_response(overshoot=0.10, peak_time_s=0.1)
    assert inline["natural_frequency_hz"] == pytest.approx(frequency, abs=1e-3)
    assert inline["damping"] == pytest.approx(damping, abs=1e-3)
    trajectory = {k: v for p in specs["trajectory"].parameters if isinstance(p, dict) for k, v in p.items()}
    assert trajectory["radius"] == 0.1 and trajectory["start_task"] == [0.1, 0.0, 0.0]
    assert all(p.is_file() for s in specs.values() for p in s.parameters if isinstance(p, Path))
