"""The robot YAML: shipped robots load, bad files fail with the file and key named."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import pardyn
from pardyn.description import load_description
from pardyn.errors import DescriptionError
from pardyn.resources import robots_directory

ROBOTS = ("five_bar", "dualv", "rrr3", "wu3r", "wu3n")


def test_shipped_robots_are_listed():
    assert set(ROBOTS) <= set(pardyn.list_robots())


@pytest.mark.parametrize("name", ROBOTS)
def test_home_is_closed_and_mobility_matches_task(load, name):
    robot = load(name)
    assert robot.nv - robot.closures.size == len(robot.task_names)
    assert np.max(np.abs(robot.closures.residual(robot.home))) < 1e-12
    assert robot.working_mode_violations(robot.home) == []
    assert robot.assembly_mode_violations(robot.home) == []


def test_dualv_geometry_is_table_1(load):
    """Base joints at radius 0.41 m and angles gamma_i, links of 0.28 m (Briot 2015, Table 1)."""
    robot = load("dualv")
    gammas = np.radians([15.52, 164.48, -164.48, -15.52])
    q = robot.home
    names = [f"leg{i}_{p}" for i in range(1, 5) for p in ("A", "B", "tip")]
    positions = robot.closures.frame_positions(q, names)
    for i, gamma in enumerate(gammas, start=1):
        a = positions[f"leg{i}_A"]
        np.testing.assert_allclose(a[:2], 0.41 * np.array([math.cos(gamma), math.sin(gamma)]), atol=1e-12)
        assert np.linalg.norm(positions[f"leg{i}_B"] - a) == pytest.approx(0.28, abs=1e-12)
        assert np.linalg.norm(positions[f"leg{i}_tip"] - positions[f"leg{i}_B"]) == pytest.approx(0.28, abs=1e-12)
    # Working mode of the issue: elbows of legs 1, 2 above, of legs 3, 4 below their base points.
    assert positions["leg1_B"][1] > positions["leg1_A"][1] and positions["leg2_B"][1] > positions["leg2_A"][1]
    assert positions["leg3_B"][1] < positions["leg3_A"][1] and positions["leg4_B"][1] < positions["leg4_A"][1]


def test_rrr3_geometry_is_section_4_8(load):
    robot = load("rrr3")
    bases = [(-0.15, -0.84), (0.69, -0.17), (-0.66, 0.21)]
    names = [f"leg{i}_{p}" for i in range(1, 4) for p in ("A", "B", "tip")] + ["platform"]
    positions = robot.closures.frame_positions(robot.home, names)
    theta = robot.home[robot.task_indices[2]]
    for i, base in enumerate(bases, start=1):
        np.testing.assert_allclose(positions[f"leg{i}_A"][:2], base, atol=1e-12)
        assert np.linalg.norm(positions[f"leg{i}_B"] - positions[f"leg{i}_A"]) == pytest.approx(0.5)
        assert np.linalg.norm(positions[f"leg{i}_tip"] - positions[f"leg{i}_B"]) == pytest.approx(0.4)
        phi_i = (4 * (i - 1) + 1) * math.pi / 6
        expected = positions["platform"][:2] - 0.1732 * np.array([math.cos(theta + phi_i), math.sin(theta + phi_i)])
        np.testing.assert_allclose(positions[f"leg{i}_tip"][:2], expected, atol=1e-12)  # eq. (28)


# --------------------------------------------------------------------- bad files
def _write(tmp_path: Path, name: str, edit) -> Path:
    data = yaml.safe_load((robots_directory() / f"{name}.yaml").read_text())
    data["urdf"] = str(robots_directory().parents[1] / "urdf" / f"{name}.urdf")
    edit(data)
    path = tmp_path / f"{name}_edited.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _error(tmp_path, name, edit) -> str:
    path = _write(tmp_path, name, edit)
    with pytest.raises(DescriptionError) as info:
        pardyn.load_robot(path)
    message = str(info.value)
    assert str(path) in message, message
    return message


def test_unknown_frame_is_named(tmp_path):
    def edit(d):
        d["closures"][1]["frames"][1] = "leg2_nowhere"

    message = _error(tmp_path, "dualv", edit)
    assert "closures[1].frames" in message and "leg2_nowhere" in message


def test_unknown_actuated_joint_is_named(tmp_path):
    message = _error(tmp_path, "five_bar", lambda d: d.__setitem__("actuated", ["leg1_joint1", "leg9_joint1"]))
    assert "actuated" in message and "leg9_joint1" in message


def test_wrong_closure_count_for_mobility(tmp_path):
    message = _error(tmp_path, "dualv", lambda d: d["closures"].pop())
    assert "degrees of freedom" in message and "closures" in message


def test_unknown_closure_type(tmp_path):
    def edit(d):
        d["closures"][0]["type"] = "weld"

    message = _error(tmp_path, "five_bar", edit)
    assert "closures[0].type" in message and "weld" in message


def test_distance_closure_needs_length(tmp_path):
    def edit(d):
        d["closures"][0]["type"] = "distance"

    assert "length" in _error(tmp_path, "five_bar", edit)


def test_too_few_actuators(tmp_path):
    message = _error(tmp_path, "rrr3", lambda d: d.__setitem__("actuated", ["leg1_joint1", "leg2_joint1"]))
    assert "actuated" in message and "cannot drive 3" in message


def test_condition_needs_side(tmp_path):
    def edit(d):
        del d["working_mode"][0]["side"]

    assert "working_mode[0].side" in _error(tmp_path, "rrr3", edit)


def test_home_in_the_wrong_working_mode(tmp_path):
    def edit(d):
        d["working_mode"][0]["side"] = "left"  # the home guess has B_1 on the right

    message = _error(tmp_path, "rrr3", edit)
    assert "home" in message and "working_mode" in message


def test_missing_urdf(tmp_path):
    message = _error(tmp_path, "five_bar", lambda d: d.__setitem__("urdf", "nowhere.urdf"))
    assert "urdf" in message and "not found" in message


def test_invalid_yaml(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(DescriptionError, match="not valid YAML"):
        load_description(path)


def test_unknown_robot_lists_known_ones():
    with pytest.raises(DescriptionError, match="known robots") as info:
        load_description("no_such_robot")
    assert "dualv" in str(info.value)
