"""The Delta identified with Codourey's simplified model (``dynamic_model="simplified"``) on MuJoCo bags.

The plant is the exact model as built (bars as bodies, parameters perturbed); the simplified
model drops the bars' columns (their halves regroup with the arms and the platform).
Independent references: the hand count of Codourey's model (per arm ``yy`` with the rotor
inertia, ``mx``, ``mz``; the platform mass; per drive ``fv``, ``fs``, offset: 19), the true
1 kg payload, the held-out bag against the nominal (CAD) model.
"""

from __future__ import annotations

import pytest

import pardyn
from pardyn.errors import InputError
from pardyn.simulation.identification_runs import PAYLOADS, Run, record_runs
from pardyn.identification.pipeline import IdentificationSettings, identify

CODOUREY = [name for i in (1, 2, 3) for name in (f"yy_arm{i}R", f"mx_arm{i}", f"mz_arm{i}")] + ["m_platform"] + [
    f"{p}_motor{i}" for i in (1, 2, 3) for p in ("fv", "fs", "offset")]


@pytest.fixture(scope="module")
def delta_bags(tmp_path_factory):
    runs = [Run("unloaded", 1, 3.0), Run("loaded", 2, 3.0, PAYLOADS["delta"]), Run("validation", 3, 2.0)]
    return record_runs("delta", runs, tmp_path_factory.mktemp("delta"), show_progress=False).bags


def test_simplified_model_has_codoureys_19_parameters_and_finds_the_payload(delta_bags):
    robot = pardyn.load_robot("delta")
    results = {
        model: identify(robot, [delta_bags["unloaded"]], loaded_bags=[delta_bags["loaded"]],
                        validate_bags=[delta_bags["validation"]], settings=IdentificationSettings(dynamic_model=model),
                        show_progress=False).as_json()
        for model in ("exact", "simplified")
    }
    simplified = results["simplified"]
    assert simplified["dynamic_model"] == "simplified"
    names = [row["name"] for row in simplified["base_parameters"] if not row["name"].endswith("_payload")]
    assert sorted(names) == sorted(CODOUREY)
    assert len([row for row in results["exact"]["base_parameters"] if not row["name"].endswith("_payload")]) == 43
    assert all(value == 0.0 for name, value in simplified["standard_parameters"].items() if "_bar" in name)
    assert abs(simplified["payload"]["mass"] - 1.0) < 0.02  # kg, the plant's load (the exact model's bars lumped)
    for data in results.values():  # 3 s runs: both below 5 % and below the CAD model
        validation = data["validation"]
        assert validation["relative_error_norm"] < min(0.05, validation["nominal"]["relative_error_norm"])


def test_a_robot_without_two_end_bars_has_no_simplified_model(tmp_path):
    """Refused before any bag is read (a missing one here: the delta's bags cost ~24 s of wall time to record,
    which `make test-fast` paid for this check alone)."""
    with pytest.raises(InputError, match="two_end_bars"):
        identify(pardyn.load_robot("hexapod"), [tmp_path / "no_bag"],
                 settings=IdentificationSettings(dynamic_model="simplified"), show_progress=False)
