"""The node parameter tables (pardyn.node_parameters) against every shipped YAML and the node reference page.

The check is independent of the nodes' own reading: an unknown key in a ROS
parameters file is silently ignored by rclpy, a typo would go unnoticed; here
every key of every shipped file must be in the table of the node it addresses,
with the type rclpy would accept and a value the table's validation accepts.
"""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pardyn.errors import DescriptionError
from pardyn.node_parameters import (
    NODE_PARAMETERS,
    check_parameters_file,
    markdown,
    table,
)
from pardyn.nodes.bringup import check_bringup_file

REPO = Path(__file__).resolve().parents[2]
DEFAULTS = sorted((REPO / "config").glob("*.yaml"))
CONTROLLERS = sorted((REPO / "config" / "controllers").glob("*.yaml"))
BRINGUPS = sorted((REPO / "config" / "bringup").rglob("*.yaml"))


def test_every_node_has_a_complete_defaults_file():
    assert sorted(path.stem for path in DEFAULTS) == sorted(NODE_PARAMETERS)
    for path in DEFAULTS:
        check_parameters_file(path)
        (section,) = yaml.safe_load(path.read_text()).values()
        assert set(section["ros__parameters"]) == set(table(path.stem)), path  # every parameter, no other


@pytest.mark.parametrize("path", CONTROLLERS + BRINGUPS, ids=lambda p: str(p.relative_to(REPO)))
def test_shipped_files_match_the_tables(path):
    if path.is_relative_to(REPO / "config" / "bringup"):
        check_bringup_file(path)
    else:
        check_parameters_file(path)


def test_errors_name_the_file_and_the_key(tmp_path):
    cases = {
        "/**/controller:\n  ros__parameters:\n    lwa: pd\n": "/**/controller: lwa: unknown parameter of node controller",
        "controller:\n  ros__parameters:\n    rate: 1000\n": "controller: rate: expected double, got int 1000",
        "sim:\n  ros__parameters:\n    plant: gazebo\n": "sim: plant: 'gazebo' is not one of ['mujoco', 'pinocchio', 'flexible']",
        "sim:\n  ros__parameters:\n    rate: -1.0\n": "sim: rate: -1.0 outside [0.001, 1e+06]",
        "sim:\n  ros__parameters:\n    effort_limits: [1.0, a]\n": "sim: effort_limits: expected double_array",
        "/**:\n  ros__parameters:\n    frame: x\n": "/**: frame: no node of",
    }
    for index, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"case{index}.yaml"
        path.write_text(text)
        with pytest.raises(DescriptionError) as caught:
            check_parameters_file(path)
        assert str(caught.value).startswith(f"{path}: "), caught.value
        assert message in str(caught.value), caught.value
    bringup = tmp_path / "bringup.yaml"
    bringup.write_text("parameters:\n  - {robot: dualv}\nnodes:\n  - executable: recorder\n"
                       "  - executable: trajectory\n    parameters:\n      - {kind: spiral}\n")
    with pytest.raises(DescriptionError, match=r"nodes\[1\] \(trajectory\)\.parameters\[0\]: kind: 'spiral' is not one"):
        check_bringup_file(bringup)


def test_the_node_reference_is_generated_from_the_tables(tmp_path):
    """One source: doc/reference/nodes.md includes the tables that doc/conf.py writes from markdown() at every
    build; no page carries a copy of them."""
    page = (REPO / "doc" / "reference" / "nodes.md").read_text()
    assert "```{include} ../_generated/node_parameters.md\n```" in page
    conf = runpy.run_path(str(REPO / "doc" / "conf.py"))
    conf["write_node_parameters"](tmp_path / "tables.md")
    assert (tmp_path / "tables.md").read_text() == markdown()
    first_row = markdown().split("\n")[4]  # the sim's first parameter row
    copies = [path for path in [REPO / "README.md", *(REPO / "doc").rglob("*.md")]
              if "_generated" not in path.parts and first_row in path.read_text()]
    assert not copies, copies


def test_tables_import_without_rclpy():
    code = "import sys, pardyn.node_parameters; print('rclpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_node_values_read_a_parameters_file_as_rclpy_does(tmp_path):
    """``node_values`` (what ``pardyn identify --controller`` rebuilds the law from) against rclpy's own reader
    of parameter files (``parameter_dict_from_yaml_file``, wildcards on): the shipped defaults, a ``/**`` section
    and a later file that overrides a gain. rclpy's Python reader knows ``/**`` and node names, not
    ``/**/controller`` (rcl does): the shipped defaults are given to it under ``controller``."""
    from rclpy.parameter import Parameter, parameter_dict_from_yaml_file  # noqa: PLC0415 - ROS's reader

    from pardyn.node_parameters import node_values  # noqa: PLC0415

    shared = tmp_path / "shared.yaml"
    shared.write_text("/**:\n  ros__parameters:\n    use_sim_time: true\n    robot: five_bar\n    rate: 500.0\n"
                      "    queue_depth: 50\n")  # the recorder's, not the controller's
    gains = tmp_path / "gains.yaml"
    gains.write_text("controller:\n  ros__parameters:\n    kp: [80.0, 90.0]\n    law: pd\n")
    shipped = REPO / "config" / "controller.yaml"
    defaults = tmp_path / "controller.yaml"
    (section,) = yaml.safe_load(shipped.read_text()).values()
    defaults.write_text(yaml.safe_dump({"controller": section}))
    assert node_values("controller", [shipped]) == node_values("controller", [defaults])
    files = [defaults, shared, gains]
    expected = {name: spec.default for name, spec in table("controller").items()}
    for path in files:
        parsed = parameter_dict_from_yaml_file(str(path), use_wildcard=True, target_nodes=["/controller"])
        expected.update({name: Parameter.from_parameter_msg(message).value for name, message in parsed.items()
                         if name in expected})
    values = node_values("controller", files)
    assert values == {name: value if isinstance(value, (str, bool, int, float)) else list(value)
                      for name, value in expected.items()}
    assert values["robot"] == "five_bar" and values["rate"] == 500.0 and values["kp"] == [80.0, 90.0]
    with pytest.raises(DescriptionError, match=r"gains.yaml: controller: kd: .*\(node controller\)"):
        gains.write_text("controller:\n  ros__parameters:\n    kd: pd\n")
        node_values("controller", [gains])
    with pytest.raises(DescriptionError, match=r"shared.yaml: no 'controller: ros__parameters:' section"):
        shared.write_text("recorder:\n  ros__parameters:\n    queue_depth: 50\n")
        node_values("controller", [shared])
