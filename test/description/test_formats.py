"""Robots written by others load unedited: Gepetto's five models, an MJCF four-bar; bad ones are named.

Expected structure figures are the ranks of the closure Jacobians of the
unedited files computed with pinocchio (the issue's: 5bar_linkage 3 degrees of
freedom for 2 motors, robot_delta 5 for 2, cassie_like 7 for 5, digit_like 9
for 6; 5bar_linkage_iso3d 2 for 2), not pardyn's output.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import pardyn
from pardyn.cli import main
from pardyn.errors import DescriptionError

GEPETTO = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "gepetto_parallel_robots"
needs_gepetto = pytest.mark.skipif(not GEPETTO.is_dir(), reason=f"shared datasets absent: {GEPETTO} not found")

# name: (dof of the file's tree incl. internal motions, motors, placeholder joints locked)
GEPETTO_FIGURES = {
    "5bar_linkage": (3, 2, 1),
    "5bar_linkage_iso3d": (2, 2, 0),
    "robot_delta": (5, 2, 3),
    "cassie_like": (7, 5, 0),
    "digit_like": (9, 6, 0),
}

@needs_gepetto
@pytest.mark.parametrize("name", sorted(GEPETTO_FIGURES))
def test_gepetto_models_load_unedited(name):
    dof, motors, locked = GEPETTO_FIGURES[name]
    robot = pardyn.load_robot(GEPETTO / name / "robot.yaml")
    summary = robot.summary()
    assert summary["format"] == "gepetto"
    assert len(robot.locked_joints) == locked
    assert summary["degrees_of_freedom"] + locked == dof
    assert len(summary["actuated"]) == motors
    assert len(summary["internal_motions"]) == dof - motors - locked
    assert robot.closures.residual(robot.home).max(initial=0.0) < 1e-12


@needs_gepetto
def test_describe_prints_structure_and_json(capsys):
    path = GEPETTO / "5bar_linkage" / "robot.yaml"
    assert main(["robots", "--describe", str(path)]) == 0
    text = capsys.readouterr().out
    assert "rank 3 of 6 declared rows" in text and "closedloop1_A" in text and "massless" in text
    assert main(["robots", "--describe", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["closure_rank"] == 3 and summary["degrees_of_freedom"] == 2
    assert summary["closures"][0]["independent_rows"] == 3


def test_mjcf_four_bar(tmp_path, four_bar_xml, assembled_four_bar):
    path = tmp_path / "four_bar.xml"
    path.write_text(four_bar_xml)
    robot = pardyn.load_robot(path)
    summary = robot.summary()
    assert summary["format"] == "mjcf" and summary["degrees_of_freedom"] == 1
    assert summary["closures"][0]["independent_rows"] == 2  # a loop in the xz plane: the connect's y row is dependent
    q = robot.home
    for crank in np.linspace(-1.0, 1.0, 11):  # walking from qpos0, warm-started: the same assembly mode
        q = robot.solve_forward([crank], start=q).q
        expected = assembled_four_bar(crank)
        assert np.abs(np.remainder(q - expected + math.pi, 2 * math.pi) - math.pi).max() < 1e-9


# ----------------------------------------------------------------- bad files
def _gepetto_copy(tmp_path: Path, name: str, yaml_text: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "robot.urdf").symlink_to(GEPETTO / name / "robot.urdf")
    (folder / "robot.yaml").write_text(yaml_text)
    return folder / "robot.yaml"


@needs_gepetto
def test_one_motor_does_not_determine_the_five_bar(tmp_path):
    path = _gepetto_copy(tmp_path, "5bar_linkage", "closed_loop: [[closedloop1_A, closedloop1_B]]\ntype: [6d]\nname_mot: [mot1]\n")
    with pytest.raises(DescriptionError, match="do not determine the configuration") as info:
        pardyn.load_robot(path)
    assert str(path) in str(info.value)


@needs_gepetto
def test_unknown_frame_and_same_body_closure(tmp_path):
    path = _gepetto_copy(tmp_path, "5bar_linkage", "closed_loop: [[closedloop1_A, nowhere]]\ntype: [6d]\nname_mot: [mot1, mot2]\n")
    with pytest.raises(DescriptionError, match="nowhere"):
        pardyn.load_robot(path)
    other = tmp_path / "same"
    other.mkdir()
    path = _gepetto_copy(other, "5bar_linkage", "closed_loop: [[rod, mot1]]\ntype: [6d]\nname_mot: [mot1, mot2]\n")
    with pytest.raises(DescriptionError, match="two different bodies"):
        pardyn.load_robot(path)


def test_task_frame_that_does_not_move(tmp_path, four_bar_xml):
    path = tmp_path / "four_bar.xml"
    path.write_text(four_bar_xml)
    description = pardyn.description.load_description(path)
    import dataclasses

    fixed = dataclasses.replace(description, task_names=("x",), task_joints=(), task_frame="ground")
    with pytest.raises(DescriptionError, match="does not move"):
        pardyn.load_robot(fixed)


def test_not_a_robot_file(tmp_path):
    path = tmp_path / "thing.xml"
    path.write_text("<robot name='x'/>")  # an .xml with a <robot> root is read as a bare URDF (issue 41)
    with pytest.raises(DescriptionError, match="no <link>: not a robot"):
        pardyn.load_robot(path)
    path.write_text("<thing/>")
    with pytest.raises(DescriptionError, match="neither a URDF"):
        pardyn.load_robot(path)
