"""``pardyn experiment estimator_benchmark`` in a tiny configuration: the five-bar, two draws, one level.

The truth is the MuJoCo plant's as-built parameters (independent of every estimator): at 5 % torque
noise and 2^15 counts the WLS estimate of the base parameters is within 30 % of it in norm; the EKF
with constant parameters is the Kalman filter of the same model and ends at the WLS estimate
(Gautier and Poignet 2001), so its median error equals WLS's to 1e-6; the table ranks both, says that the
survey's most accurate estimators did not run, and is rebuilt from the per-draw files a stopped run leaves.

The ranking figure (the model error on the held-out trajectory) and the identifiability filter are checked
against figures computed by hand on small matrices, without any draw.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pardyn.cli import main
from pardyn.experiments import estimator_benchmark as eb
from pardyn.experiments.estimator_benchmark import LEVELS, BenchmarkOptions, estimator_benchmark, from_entries
from pardyn.identification.base_parameters import base_parameters
from pardyn.identification.least_squares import ols


def test_tiny_benchmark_against_the_plant(tmp_path):
    options = BenchmarkOptions(robots=("five_bar",), draws=2, levels=(LEVELS[1],), estimators=("wls", "ekf"),
                               identification_s=2.5, validation_s=2.5, workers=1, show_progress=False)
    report = estimator_benchmark(tmp_path, options)
    rows = {row["estimator"]: row for row in report["summary"]}
    assert set(rows) == {"wls", "ekf"} and all(row["failures"] == 0 and row["draws"] == 2 for row in rows.values())
    wls, ekf = rows["wls"]["parameter_error"], rows["ekf"]["parameter_error"]
    assert wls["median"] < 0.3
    assert rows["wls"]["model_error"]["median"] < 0.3  # the ranking figure: the held-out model torques' error
    assert abs(rows["ekf"]["model_error"]["median"] - rows["wls"]["model_error"]["median"]) < 1e-6
    assert abs(ekf["median"] - wls["median"]) < 1e-6
    assert {rows["wls"]["rank"], rows["ekf"]["rank"]} == {1, 2}
    assert set(rows["wls"]["per_parameter"]) == set(rows["ekf"]["per_parameter"])
    assert "| five_bar | mid | ekf |" in report["table"] and report["claim_held"] is True
    saved = json.loads((tmp_path / "estimator_benchmark.json").read_text())
    assert len(saved["draws"]) == 2 and saved["survey_ranking"]["source"].startswith("Q. Leboutet")
    assert (tmp_path / "estimator_benchmark.md").exists() and len(report["plots"]) == 3
    assert not (tmp_path / "bags" / "five_bar" / "mid" / "draw_0").exists()  # draws' bags deleted
    assert saved["survey_ranking"]["ranking"]["accuracy"] == ["didim", "iv"]
    assert report["survey_comparison"] == ["five_bar/mid: most accurate here (model error) " + ", ".join(
        sorted(rows, key=lambda n: rows[n]["rank"])) + " (of 2); survey's most accurate (didim, iv) not run here"]
    partial = from_entries(tmp_path, options)  # a stopped run's table: one JSON per finished draw
    assert partial["table"] == report["table"] and len(partial["draws"]) == 2


def test_command_line_refuses_unknown_levels_and_estimators(tmp_path, capsys):
    assert main(["experiment", "estimator_benchmark", "--out", str(tmp_path), "--levels", "loud"]) == 2
    assert "unknown noise levels ['loud']" in capsys.readouterr().err
    assert main(["experiment", "estimator_benchmark", "--out", str(tmp_path), "--estimators", "wls,kf"]) == 2
    assert "unknown estimator 'kf'" in capsys.readouterr().err


def test_model_error_by_hand():
    # two excited directions (e1, 2 e2), the third parameter without effect on this trajectory
    W = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    truth = np.array([1.0, 1.0, 5.0])
    assert eb.model_error(W, truth, truth) == 0.0
    assert eb.model_error(W, truth + [0.0, 0.0, 7.0], truth) == 0.0  # an error in the null space of W_v
    assert eb.model_error(W, 1.5 * truth, truth) == pytest.approx(0.5)  # a scaled estimate: the scale
    assert eb.model_error(W, truth + [0.3, 0.0, 0.0], truth) == pytest.approx(0.3 / np.sqrt(5.0))  # ||(.3, 0)|| / ||(1, 2)||


def test_base_columns_give_the_standard_torques():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 40))
    W_st = np.column_stack([a, b, a + 2.0 * b, np.zeros(40)])  # c regroups into a and b, d has no effect
    names = ("a", "b", "c", "d")
    base = base_parameters(W_st, names=names)
    chi_st = np.array([0.5, -1.0, 2.0, 3.0])
    W_b = eb.base_columns(W_st[:, [3, 1, 0, 2]], ("d", "b", "a", "c"), base)  # found by name, in any order
    assert W_b.shape == (40, 2)
    np.testing.assert_allclose(W_b @ base.from_standard(chi_st), W_st @ chi_st, atol=1e-12)


def test_identified_drops_the_weakly_excited_column():
    # one column a thousand times weaker than the other: its parameter's sigma (eq. 47) exceeds its value
    rng = np.random.default_rng(1)
    W = np.column_stack([rng.normal(size=400), 1e-3 * rng.normal(size=400)])
    truth = np.array([1.0, 1.0])
    Y = W @ truth + 0.01 * rng.normal(size=400)
    fit = ols(W, Y, names=("strong", "weak"))
    residual = Y - W @ fit.chi
    by_hand = np.sqrt(residual @ residual / (400 - 2) * np.diag(np.linalg.inv(W.T @ W)))  # eqs. (46)-(47)
    np.testing.assert_allclose(fit.std, by_hand, rtol=1e-8)
    assert by_hand[0] < 1e-3 < 0.1 < by_hand[1]
    assert eb.identified(truth, fit.std).tolist() == [True, False]
    assert eb.identified(truth, fit.std, k=1e-3).tolist() == [True, True]


def _entry(draw, chi, std, model_errors, budget=True):
    """A draw's entry made with the default budget (``budget=False``: one written before budgets were recorded)."""
    truth = {"strong": 1.0, "weak": 1e-3}
    figures = {name: {"model_error": m, "parameter_error": 1.0 / (1.0 + m),
                      "parameter_errors": {p: abs(chi[name][p] - truth[p]) / truth[p] for p in truth},
                      "chi": chi[name], "std": std, "torque_error": 0.1, "time_s": 1.0}
               for name, m in model_errors.items()}
    recorded = eb._budget(BenchmarkOptions()) if budget else {}
    return {"robot": "five_bar", "level": "mid", "draw": draw, "true_base": truth, **recorded, **figures}


def test_summary_ranks_by_model_error_and_lists_the_parameters_not_identified():
    chi = {"wls": {"strong": 1.01, "weak": 0.5}, "ols": {"strong": 1.02, "weak": 0.4}}
    std = {"strong": 0.001, "weak": 0.3}
    entries = [_entry(draw, chi, std, {"wls": 0.01 + draw, "ols": 0.02 + draw}) for draw in range(2)]
    options = BenchmarkOptions(robots=("five_bar",), levels=(LEVELS[1],), estimators=("ols", "wls"))
    rows = {row["estimator"]: row for row in eb.summarise(entries, options)}
    # the parameter norm error would rank ols first (1 / (1 + m)); the model error ranks wls first
    assert rows["wls"]["rank"] == 1 and rows["ols"]["rank"] == 2
    assert rows["wls"]["model_error"]["median"] == pytest.approx(0.51)
    assert rows["wls"]["identified"] == 1 and rows["wls"]["not_identified"] == ["weak"]
    assert set(rows["wls"]["per_parameter"]) == {"strong"}
    assert rows["ols"]["per_parameter"]["strong"]["median"] == pytest.approx(0.02)
    assert "| five_bar | mid | wls | 1 | 51 [26, 76] |" in eb.table(list(rows.values()))
    assert "1/2: 1 / 1 |" in eb.table(list(rows.values()))


def test_a_rerun_keeps_the_finished_draws(tmp_path):
    options = BenchmarkOptions(robots=("five_bar",), draws=2, levels=(LEVELS[1],), estimators=("ols", "wls"))
    chi = {"wls": {"strong": 1.0, "weak": 1.0}, "ols": {"strong": 1.0, "weak": 1.0}}
    entries = tmp_path / "entries"
    entries.mkdir()
    (entries / "five_bar_mid_0.json").write_text(json.dumps(_entry(0, chi, {}, {"wls": 0.1, "ols": 0.2})))
    (entries / "five_bar_mid_1.json").write_text(json.dumps(_entry(1, chi, {}, {"wls": 0.1})))  # without ols
    (entries / "five_bar_mid_5.json").write_text(json.dumps(_entry(5, chi, {}, {"wls": 0.1, "ols": 0.2})))
    assert list(eb._finished(tmp_path, options)) == [("five_bar", 0, 0)]  # draw 1 lacks ols, draw 5 not asked


def test_a_rerun_with_another_budget_recomputes_the_draws(tmp_path):
    """The figures depend on the simulations allowed, the stopping rule and the model rate: an entry made with
    another budget is not taken as finished (entries without one were made with 3, 1e-3 and 100 Hz)."""
    chi = {"wls": {"strong": 1.0, "weak": 1.0}}
    entries = tmp_path / "entries"
    entries.mkdir()
    (entries / "five_bar_mid_0.json").write_text(json.dumps(_entry(0, chi, {}, {"wls": 0.1}, budget=False)))
    (entries / "five_bar_mid_1.json").write_text(json.dumps(
        {**_entry(1, chi, {}, {"wls": 0.1}), "max_iterations": 8, "tolerance": 1e-6, "model_rate_hz": 1000.0}))
    unrecorded = BenchmarkOptions(robots=("five_bar",), draws=2, levels=(LEVELS[1],), estimators=("wls",),
                                  model_rate_hz=100.0)
    tight = BenchmarkOptions(robots=("five_bar",), draws=2, levels=(LEVELS[1],), estimators=("wls",),
                             max_iterations=8, tolerance=1e-6)
    assert list(eb._finished(tmp_path, unrecorded)) == [("five_bar", 0, 0)]
    assert list(eb._finished(tmp_path, tight)) == [("five_bar", 0, 1)]
    assert not eb._finished(tmp_path, BenchmarkOptions(robots=("five_bar",), draws=2, levels=(LEVELS[1],),
                                                       estimators=("wls",)))  # the defaults: 3, 1e-3, 1 kHz
    assert [e["draw"] for e in from_entries(tmp_path, tight)["draws"]] == [1]  # a table never mixes budgets
    assert [e["draw"] for e in from_entries(tmp_path, unrecorded)["draws"]] == [0]


def test_the_command_line_passes_the_budget(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(eb, "estimator_benchmark", lambda out, options: seen.append(options) or {
        "table": "", "survey_comparison": [], "time_s": 0.0, "paper_claim": "", "claim_definition": "",
        "claim_held": None, "plots": []})
    assert main(["experiment", "estimator_benchmark", "--out", str(tmp_path), "--max-iterations", "8",
                 "--tolerance", "1e-6", "--robots", "delta", "--draws", "1", "--model-rate", "100"]) == 0
    assert (seen[0].max_iterations, seen[0].tolerance, seen[0].robots, seen[0].model_rate_hz) == (
        8, 1e-6, ("delta",), 100.0)


def test_an_entry_stopped_while_written_leaves_the_former_one_readable(tmp_path, monkeypatch):
    """A benchmark stopped (Ctrl-C, timeout) while it writes a draw's entry must leave an entry a resumed run can
    read: before, the file was written in place, and a stop mid-write left truncated JSON that ended the resume."""
    from pathlib import Path

    from pardyn.experiments.plots import write_json
    from pardyn.textio import load_json

    entry = tmp_path / "entries" / "dualv_low_0.json"
    write_json(entry, {"robot": "dualv", "draw": 0, "wls": {"model_error": 0.003}})
    original_write_text = Path.write_text

    def stopped_halfway(self, text, *args, **kwargs):
        original_write_text(self, text[: len(text) // 2], *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", stopped_halfway)
    with pytest.raises(KeyboardInterrupt):
        write_json(entry, {"robot": "dualv", "draw": 0, "wls": {"model_error": 0.004}, "cloe": {"model_error": 0.001}})
    monkeypatch.undo()
    assert load_json(entry) == {"robot": "dualv", "draw": 0, "wls": {"model_error": 0.003}}
