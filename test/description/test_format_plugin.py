"""A new description format is one file (test/description/json_format.py): registered, it is detected for its
files and loaded by :func:`pardyn.load_robot` and ``pardyn robots``, without any other file changing."""

from __future__ import annotations

import json

import pytest

from pardyn.cli import main
from pardyn.description import FORMATS, detect_format, load_description
from pardyn.resources import robots_directory
from pardyn.textio import load_yaml

from .json_format import register_format


@pytest.fixture
def json_format():
    name = register_format()
    yield name
    FORMATS.unregister(name)


def test_every_format_is_a_plugin(tmp_path):
    assert list(FORMATS)[:5] == ["gepetto", "pardyn", "mjcf", "urdf", "sdf"]
    sdf = tmp_path / "robot.sdf"
    sdf.write_text('<sdf version="1.9"><model name="m"/></sdf>')
    assert detect_format(sdf) == "sdf"
    with pytest.raises(Exception, match="an SDF file: pardyn reads URDF and MJCF trees"):
        load_description(sdf)


def test_a_registered_format_is_detected_and_loaded(json_format, tmp_path, capsys):
    path = tmp_path / "five_bar.json"
    path.write_text(json.dumps(load_yaml(robots_directory() / "five_bar.yaml")))
    assert detect_format(path) == json_format
    description, shipped = load_description(path), load_description("five_bar")
    assert description.description_format == "json"
    assert (description.actuated, description.closures) == (shipped.actuated, shipped.closures)
    assert main(["robots", "--describe", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "json"
