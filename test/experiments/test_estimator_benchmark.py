"""``pardyn experiment estimator_benchmark`` in a tiny configuration: the five-bar, two draws, one level.

The truth is the MuJoCo plant's as-built parameters (independent of every estimator): at 5 % torque
noise and 2^15 counts the WLS estimate of the base parameters is within 30 % of it in norm; the EKF
with constant parameters is the Kalman filter of the same model and ends at the WLS estimate
(Gautier and Poignet 2001), so its median error equals WLS's to 1e-6; the table ranks both, says that the
survey's most accurate estimators did not run, and is rebuilt from the per-draw files a stopped run leaves.
"""

from __future__ import annotations

import json

from pardyn.cli import main
from pardyn.experiments.estimator_benchmark import LEVELS, BenchmarkOptions, estimator_benchmark, from_entries


def test_tiny_benchmark_against_the_plant(tmp_path):
    options = BenchmarkOptions(robots=("five_bar",), draws=2, levels=(LEVELS[1],), estimators=("wls", "ekf"),
                               identification_s=2.5, validation_s=2.5, workers=1, show_progress=False)
    report = estimator_benchmark(tmp_path, options)
    rows = {row["estimator"]: row for row in report["summary"]}
    assert set(rows) == {"wls", "ekf"} and all(row["failures"] == 0 and row["draws"] == 2 for row in rows.values())
    wls, ekf = rows["wls"]["parameter_error"], rows["ekf"]["parameter_error"]
    assert wls["median"] < 0.3
    assert abs(ekf["median"] - wls["median"]) < 1e-6
    assert {rows["wls"]["rank"], rows["ekf"]["rank"]} == {1, 2}
    assert set(rows["wls"]["per_parameter"]) == set(rows["ekf"]["per_parameter"])
    assert "| five_bar | mid | ekf |" in report["table"] and report["claim_held"] is True
    saved = json.loads((tmp_path / "estimator_benchmark.json").read_text())
    assert len(saved["draws"]) == 2 and saved["survey_ranking"]["source"].startswith("Q. Leboutet")
    assert (tmp_path / "estimator_benchmark.md").exists() and len(report["plots"]) == 2
    assert not (tmp_path / "bags" / "five_bar" / "mid" / "draw_0").exists()  # draws' bags deleted
    assert saved["survey_ranking"]["ranking"]["accuracy"] == ["didim", "iv"]
    assert report["survey_comparison"] == ["five_bar/mid: most accurate here " + ", ".join(
        sorted(rows, key=lambda n: rows[n]["rank"])) + " (of 2); survey's most accurate (didim, iv) not run here"]
    partial = from_entries(tmp_path, options)  # a stopped run's table: one JSON per finished draw
    assert partial["table"] == report["table"] and len(partial["draws"]) == 2


def test_command_line_refuses_unknown_levels_and_estimators(tmp_path, capsys):
    assert main(["experiment", "estimator_benchmark", "--out", str(tmp_path), "--levels", "loud"]) == 2
    assert "unknown noise levels ['loud']" in capsys.readouterr().err
    assert main(["experiment", "estimator_benchmark", "--out", str(tmp_path), "--estimators", "wls,kf"]) == 2
    assert "unknown estimator 'kf'" in capsys.readouterr().err
