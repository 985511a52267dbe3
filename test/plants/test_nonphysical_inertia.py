"""A description whose inertia no rigid body has (issue 40 item 6): the plant simulates the nearest physical one.

The 7-joint arm of test/identification/gen3_like.py with its shoulder link's principal moments as in the
URDF distributed with the issue's logs, 0.000419 + 0.005017 < 0.015117 kg m^2 (A + B < C). Reference: the
projection on A + B = C worked by hand (each moment moved by (C - A - B) / 3 = 0.003227 kg m^2), against what
MuJoCo compiled; ``pardyn demo`` on that arm runs end to end and says the same on its console.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import pardyn

import mujoco  # the 'sim' extra, which make test installs
from pardyn.plants.mujoco_plant import MujocoPlant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "identification"))
from gen3_like import write_robot  # noqa: E402

MOMENTS = (0.000419, 0.005017, 0.015117)  # kg m^2: A + B < C


def test_the_plant_simulates_the_nearest_physical_inertia_and_says_so_once(tmp_path):
    robot = pardyn.load_robot(write_robot(tmp_path, inertias={"shoulder_link": MOMENTS}))  # loads: identification needs no physical model
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plant = MujocoPlant(robot)
    said = [str(w.message) for w in caught if "A + B >= C" in str(w.message)]
    assert len(said) == 1 and "shoulder_link" in said[0] and "0.00323" in said[0]
    body = mujoco.mj_name2id(plant.model, mujoco.mjtObj.mjOBJ_BODY, "shoulder_link")
    shift = (MOMENTS[2] - MOMENTS[0] - MOMENTS[1]) / 3  # 0.003227 kg m^2, by hand
    expected = np.array([MOMENTS[0] + shift, MOMENTS[1] + shift, MOMENTS[2] - shift])
    np.testing.assert_allclose(np.sort(plant.model.body_inertia[body]), expected, rtol=1e-6)
    a, b, c = np.sort(plant.model.body_inertia[body])
    assert a + b >= c * (1 - 1e-9)


def test_the_demo_runs_on_it_and_says_which_body_was_corrected_and_by_how_much(tmp_path):
    """``pardyn demo`` on that arm end to end (issue 40 item 6: it used to stop on "violates A + B >= C"), with
    the shortest runs: the plant's one warning on the console names the body and the change."""
    description = write_robot(tmp_path, inertias={"shoulder_link": MOMENTS})
    out = tmp_path / "demo"
    completed = subprocess.run([sys.executable, "-m", "pardyn.cli", "demo", "--robot", str(description),
                                "--duration", "2", "--no-loaded", "--rate", "100", "--out", str(out)],
                               capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    said = [line for line in completed.stderr.splitlines() if "A + B >= C" in line]
    assert len(said) == 1 and "body 'shoulder_link'" in said[0], completed.stderr[-3000:]
    # the demo's robot as built is the description perturbed (a few %): the moments said are its own; the shift is
    # (C - A - B) / 3 of them, by hand, and the simulated moments are theirs moved by it
    given, simulated = (np.array(json.loads("[" + part.split("]")[0] + "]")) for part in said[0].split("[")[1:3])
    a, b, c = given
    assert a + b < c and abs(given / np.array(MOMENTS) - 1).max() < 0.1
    shift = float(said[0].split("each moment moved by ")[1].split(",")[0])
    assert shift == pytest.approx((c - a - b) / 3, rel=2e-3)
    np.testing.assert_allclose(simulated, [a + shift, b + shift, c - shift], rtol=2e-3)
    result = json.loads((out / "result.json").read_text())
    assert result["robot"] == "gen3_like" and len(result["validation"]["per_joint"]) == 7
