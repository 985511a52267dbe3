"""launch/gazebo.launch.py parses and refers to files the colcon install puts in the share directory."""

from __future__ import annotations

import ast
import runpy
from pathlib import Path
from unittest import mock

import setuptools

from pardyn.nodes.bringup import load_bringup
from pardyn.nodes.registry import NODES

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "launch" / "gazebo.launch.py"


def _installed_share_files() -> set[str]:
    """Paths under share/pardyn that setup.py's data_files install (the colcon layout)."""
    with mock.patch.object(setuptools, "setup") as setup:
        runpy.run_path(str(ROOT / "setup.py"), run_name="setup")
    (_, kwargs), = [(c.args, c.kwargs) for c in setup.call_args_list]
    installed = set()
    for target, files in kwargs["data_files"]:
        for file in files:
            installed.add(str(Path(target).relative_to("share/pardyn") / Path(file).name)
                          if target.startswith("share/pardyn") else "")
    return installed, kwargs


def test_launch_file_parses_and_its_files_are_installed():
    tree = ast.parse(LAUNCH.read_text())
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "generate_launch_description" in functions
    installed, kwargs = _installed_share_files()
    assert "launch/gazebo.launch.py" in installed
    assert "config/bringup/gazebo.yaml" in installed
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    for package, executable in (("ros_gz_sim", "create"), ("ros_gz_bridge", "parameter_bridge"),
                                ("controller_manager", "spawner"), ("robot_state_publisher", "robot_state_publisher")):
        assert package in strings and executable in strings
    assert {"joint_state_broadcaster", "effort_controller", "/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock"} <= strings
    # every pardyn node of the bringup file is a console script of the package and a registered node
    scripts = {entry.split("=")[0].strip() for entry in kwargs["entry_points"]["console_scripts"]}
    bringup = load_bringup(ROOT / "config" / "bringup" / "gazebo.yaml")
    for spec in bringup.nodes:
        assert spec.executable in scripts and spec.executable in NODES
        for parameter in spec.parameters:
            if isinstance(parameter, Path):
                assert parameter.is_file() and str(parameter.relative_to(ROOT)) in installed
            else:
                assert parameter.get("use_sim_time", True) is True
    assert any(isinstance(p, dict) and p.get("use_sim_time") for p in bringup.nodes[0].parameters)


def test_cli_export_writes_the_files_and_refuses_an_unknown_robot(tmp_path, capsys):
    from pardyn.cli import main  # noqa: PLC0415

    assert main(["export", "sdf", "--robot", "wu3n", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert (tmp_path / "model.sdf").is_file() and "counterweight" in printed  # the left-out drive terms are said
    assert main(["export", "sdf", "--robot", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown robot 'nope'" in capsys.readouterr().err
