"""pardyn fleet: a simulated fleet identified on a real two-process LocalCluster and in process.

The fleet: two five-bars (parameters scattered as built), three nights each, the
second robot's first drive gaining 0.02 N m s/rad of viscous friction on the third
night (the truth the simulation wrote); a third folder holds a corrupt bag.
"""

from __future__ import annotations

import json
import shutil

import pytest

from pardyn.cli import main
from pardyn.fleet.identify import identify_fleet
from pardyn.fleet.simulate import FleetSpec, FrictionStep, simulate_fleet
from pardyn.fleet.summary import summarize, write_summary
from pardyn.distributed import Engine

SPEC = FleetSpec(model="five_bar", robots=2, nights=3, duration_s=6.0, growth=0.0,
                 step=FrictionStep(robot=1, night=2, drive=0, added=0.02))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, dask_engine):
    root = tmp_path_factory.mktemp("fleet")
    simulate_fleet(root, SPEC, engine=dask_engine, show_progress=False)
    corrupt = root / "five_bar_03" / "2026-11-01"
    shutil.copytree(root / "five_bar_01" / "2026-11-01", corrupt)
    for mcap in corrupt.glob("*.mcap"):
        mcap.write_bytes(b"\x89MCAP0\r\n" + b"not a bag" * 100)
    (root / "five_bar_03" / "calibration.bin").write_bytes(b"\0")
    out = root / "_identified"
    done = identify_fleet(root, out, engine=dask_engine, show_progress=False)
    return root, out, done


def _base(out, run):
    return json.loads((out / run / "RESULT.json").read_text())["base_parameters"]


def test_fleet_results_on_the_cluster_equal_the_serial_ones(fleet, tmp_path):
    root, out, done = fleet
    assert len(done.identified) == 6 and done.failed == ("five_bar_03/2026-11-01",)
    serial = identify_fleet(root, tmp_path, engine=Engine(1), report=False, show_progress=False)
    assert serial.identified == done.identified
    for run in done.identified:
        assert _base(out, run) == _base(tmp_path, run)  # bitwise: the same floats in the same order
        assert (out / run / "report" / "report.md").is_file()


def test_a_corrupt_bag_is_named_in_the_summary_while_the_others_finish(fleet):
    root, out, done = fleet
    summary = summarize(done.records, done.layout.unusable)
    md, html, _ = write_summary(summary, out)
    reasons = {f"{u.robot}/{u.date}": u.reason for u in summary.unusable}
    assert reasons.keys() == {"five_bar_03/2026-11-01", "five_bar_03/calibration"}
    assert reasons["five_bar_03/2026-11-01"].startswith("BagIncompleteError: ")  # the bag, and what to do
    assert "five_bar_03/2026-11-01" in reasons["five_bar_03/2026-11-01"] and "repair" in reasons["five_bar_03/2026-11-01"]
    assert "not a run" in reasons["five_bar_03/calibration"]
    for path in (md, html):
        assert "five_bar_03" in path.read_text() and "BagIncompleteError" in path.read_text()
    assert set(summary.table) == {"five_bar_01", "five_bar_02"}


def test_a_friction_increase_is_flagged_on_the_night_it_appeared(fleet):
    root, out, done = fleet
    summary = summarize(done.records, done.layout.unusable)
    alerts = {(a.robot, a.parameter): a for a in summary.alerts}
    alert = alerts[("five_bar_02", "fv_leg1_joint1")]
    assert alert.date == SPEC.date(SPEC.step.night)
    assert not [a for a in summary.alerts if a.robot == "five_bar_01" and a.parameter.startswith("fv")]
    # the size of the step against the truth the simulation recorded (its truth.json)
    truth = [json.loads((root / "_truth" / "five_bar_02" / SPEC.date(n) / "truth.json").read_text())
             ["standard_parameters"]["fv_leg1_joint1"] for n in (0, 2)]
    assert truth[1] - truth[0] == pytest.approx(0.02)
    assert alert.value - alert.reference == pytest.approx(truth[1] - truth[0], rel=0.1)


def test_a_rerun_identifies_only_the_new_night(fleet, capsys):
    root, out, done = fleet
    shutil.copytree(root / "five_bar_01" / "2026-11-02", root / "five_bar_01" / "2026-11-04")
    assert main(["fleet", "identify", str(root), "--workers", "1", "--no-report", "--quiet"]) == 0
    printed = capsys.readouterr().out
    # the corrupt bag, unchanged, is not tried again
    assert "3 robots: 1 runs identified, 7 unchanged, 0 failed, 1 entries not runs" in printed
    assert _base(out, "five_bar_01/2026-11-04") == _base(out, "five_bar_01/2026-11-02")
    assert "drift: five_bar_02 fv_leg1_joint1" in printed and (out / "fleet.html").is_file()
