"""``h4_pfc_vs_ctc`` (Vivas & Poignet 2003, section 5): a small run of the experiment and its figures.

Independent references:
* the CTC's static error under the unmodelled 4 kg load, derived by hand: at rest the law
  gives ``tau = H_hat + M_hat Kp e`` and the plant needs ``H_hat + J^T (0, 0, m g, 0)``
  more, so ``e = M_hat^-1 J^T (0, 0, m g, 0) / Kp`` with ``M_hat = I_mot + J^T M J`` (eq. 13)
  and ``J`` of eqs. (10)-(12) at home;
* PFC's independent model leaves no static error under the same load (integral action);
* the load figures of a synthetic exponential decay (rejection time ``tau ln 10``);
* the claims recomputed from the JSON figures with the stated definitions; the PNGs exist.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pardyn.nodes.bringup import load_bringup
from pardyn.cli.experiment import EXPERIMENTS
from pardyn.experiments.h4 import H4Options, h4_pfc_vs_ctc, load_figures

REPO = Path(__file__).resolve().parents[2]
SMALL = dict(motion_m=0.02, duration_s=0.1, start_s=0.3, settle_s=0.03, load_at_s=0.02, show_progress=False,
             workers=2)
I_MOT = np.diag([0.0167, 0.0164, 0.0176, 0.0234])
M = np.diag([0.984, 0.984, 0.984, 0.0029])


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("h4")
    report = h4_pfc_vs_ctc(out, H4Options(**SMALL))
    return out, report, json.loads((out / "h4_pfc_vs_ctc.json").read_text())


def test_json_layout_and_plots(small_run):
    out, report, data = small_run
    assert data["experiment"] == "h4_pfc_vs_ctc" and isinstance(data["claim_held"], bool)
    assert set(data["results"]) == {"nominal", "load", "mismatch-50", "mismatch+50"}
    joints = data["joints"]
    assert joints == ["motor1", "motor2", "motor3", "motor4"]
    for case, laws in data["results"].items():
        assert set(laws) == {"pfc", "ctc"}
        for entry in laws.values():
            assert list(entry["max_error_rad"]) == joints
            assert all(math.isfinite(v) for v in entry["max_error_rad"].values())
            assert 0.0 <= entry["saturation"] <= 1.0
        for kind in ("errors", "torques"):
            assert (out / f"h4_pfc_vs_ctc_{case}_{kind}.png").stat().st_size > 10_000
    assert sorted(data["plots"]) == sorted(p.name for p in out.glob("*.png"))
    assert data["torque_limits_nm"] == {j: 15.0 for j in joints}  # config/robots/h4.yaml limits: effort:
    amplitude = np.array(data["motion"]["joint_amplitude_rad"])
    assert np.allclose(amplitude, amplitude[0]) and 0.05 < amplitude[0] < 0.1  # 2 cm: every motor alike


def test_claims_follow_their_definitions(small_run):
    _, _, data = small_run
    results, ratio = data["results"], data["options"]["similar_ratio"]
    errors = {law: np.array(list(results["nominal"][law]["max_error_rad"].values())) for law in ("pfc", "ctc")}
    quotient = errors["pfc"] / errors["ctc"]
    similar = bool(np.all(quotient <= ratio) and np.all(quotient >= 1 / ratio)
                   and results["nominal"]["pfc"]["saturation"] == 0 and results["nominal"]["ctc"]["saturation"] == 0)
    assert data["claims"]["similar_tracking"] == similar
    mismatch = [c for c in results if c.startswith("mismatch")]
    saturation = (all(results[c]["pfc"]["saturation"] == 0 for c in mismatch)
                  and any(results[c]["ctc"]["saturation"] > 0 for c in mismatch))
    assert data["claims"]["ctc_saturates_pfc_not"] == saturation
    times = [results["load"][law]["rejection_time_s"] for law in ("pfc", "ctc")]
    rejection = None not in times and max(times) <= ratio * max(min(times), 1e-3)
    assert data["claims"]["similar_load_rejection"] == rejection
    assert data["claim_held"] == all(data["claims"].values())


def test_load_static_errors_against_the_hand_derivation(small_run, load):
    _, _, data = small_run
    robot = load("h4")
    home = robot.home
    jacobian = robot.analytic.jacobian(home[robot.task_indices], home[robot.actuated_indices])
    inertia = I_MOT + jacobian.T @ M @ jacobian  # eq. (13), joint space
    expected = np.linalg.solve(inertia, jacobian.T @ np.array([0.0, 0.0, 4.0 * 9.81, 0.0])) / 10000.0
    load_case = data["results"]["load"]
    assert load_case["ctc"]["load_static_error_rad"] == pytest.approx(np.abs(expected).max(), rel=0.05)
    assert load_case["pfc"]["load_static_error_rad"] < 0.02 * load_case["ctc"]["load_static_error_rad"]
    assert load_case["ctc"]["rejection_time_s"] is not None


def test_load_figures_of_an_exponential_decay():
    t = np.arange(0.0, 0.5, 1e-3)
    tau, at = 0.03, 0.1
    decay = np.where(t >= at, 0.004 * np.exp(-(t - at) / tau), 0.0) + np.where(t >= at, -0.001, 0.0)
    error = np.column_stack([decay, 0.5 * decay])  # (N, 2)
    figures = load_figures(t, error, load_at_s=at, end_s=0.5)
    assert figures["load_peak_error_rad"] == pytest.approx(0.003, abs=1e-12)  # 0.004 - 0.001 at the load
    assert figures["load_static_error_rad"] == pytest.approx(0.001, rel=1e-3)
    # |e - e_static| = 0.004 exp(-dt/tau) < 0.1 * 0.003  ->  dt = tau ln(0.004 / 0.0003)
    assert figures["rejection_time_s"] == pytest.approx(tau * math.log(0.004 / 0.0003), abs=1.5e-3)


def test_registered_and_bringup_config_loads():
    assert "h4_pfc_vs_ctc" in EXPERIMENTS
    bringup = load_bringup(REPO / "config" / "bringup" / "experiments" / "h4_pfc_vs_ctc.yaml")
    specs = {spec.executable: spec for spec in bringup.nodes}
    assert set(specs) == {"sim", "controller", "trajectory"}
    files = [p.name for p in specs["controller"].parameters if isinstance(p, Path)]
    assert "h4_pfc.yaml" in files
    assert all(p.is_file() for s in specs.values() for p in s.parameters if isinstance(p, Path))
