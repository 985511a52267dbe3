"""Every launch file of ``launch/`` executed as ``ros2 launch`` would, with the launch double of ``launch_double``.

``launch``/``launch_ros`` cannot be installed here (no PyPI wheels); the double replays their semantics
(launch arguments and their defaults, opaque functions, event handlers) so each file's Python really runs:
the nodes it would start are compared with the bringup file it names, read independently with
``yaml.safe_load`` (executables, names, parameter files resolved in the package share, inline values,
remappings), with and without the ``namespace`` and ``config`` arguments.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("launch_double", Path(__file__).with_name("launch_double.py"))
launch_double = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("launch_double", launch_double)  # dataclasses look their module up
_spec.loader.exec_module(launch_double)
LaunchError, run_launch_file = launch_double.LaunchError, launch_double.run_launch_file
BRINGUP_KINDS = ("sim", "hardware", "identification", "online_identification")


@pytest.fixture
def ament_share(tmp_path, monkeypatch) -> Path:
    """A one-package ament index whose share/pardyn is this checkout (what colcon installs), plus ros_gz_sim."""
    prefix = tmp_path / "install"
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    for package in ("pardyn", "ros_gz_sim"):
        (index / package).write_text("")
    (prefix / "share" / "pardyn").symlink_to(REPO)
    (prefix / "share" / "ros_gz_sim" / "launch").mkdir(parents=True)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    return prefix / "share" / "pardyn"


def expected_nodes(bringup_file: Path, share: Path) -> list[dict]:
    """The nodes a bringup file lists, read with yaml alone (its format: the file-wide parameters come after a
    node's own, so they win; relative parameter files resolve in the package share; remappings a mapping)."""
    raw = yaml.safe_load(bringup_file.read_text())
    nodes = []
    for entry in raw["nodes"]:
        parameters = [str((share / item).resolve()) if isinstance(item, str) else item
                      for item in [*entry.get("parameters", []), *raw.get("parameters", [])]]
        nodes.append({
            "executable": entry["executable"],
            "name": entry.get("name"),
            "parameters": parameters,
            "remappings": list((entry.get("remappings") or {}).items()),
        })
    return nodes


def launched(node) -> dict:
    return {
        "executable": node.node_executable,
        "name": node.node_name,
        "parameters": [str(Path(p).resolve()) if isinstance(p, str) else p for p in node.parameters],
        "remappings": [tuple(pair) for pair in node.remappings],
    }


@pytest.mark.parametrize("kind", BRINGUP_KINDS)
def test_launch_file_starts_the_nodes_of_its_bringup_file(kind, ament_share, monkeypatch):
    run = run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch)
    config = Path(run.arguments["config"])
    assert config == ament_share / "config" / "bringup" / f"{kind}.yaml"
    assert run.arguments["namespace"] == ""
    assert all(node.node_package == "pardyn" for node in run.nodes)
    assert [launched(n) for n in run.nodes] == expected_nodes(config, ament_share)
    # every executable is a console script of the package (what `ros2 run pardyn X` finds)
    scripts = (REPO / "setup.py").read_text()
    assert all(f'"{n.node_executable} = pardyn.nodes.{n.node_executable}:main"' in scripts for n in run.nodes)


def test_namespace_and_config_arguments_reach_every_node(ament_share, monkeypatch, tmp_path):
    custom = tmp_path / "two_nodes.yaml"
    custom.write_text(yaml.safe_dump({
        "nodes": [
            {"executable": "sim", "parameters": [str(REPO / "config" / "sim.yaml"), {"rate": 500.0}]},
            {"executable": "controller", "name": "ctl", "remappings": {"joint_states": "measured"}},
        ]
    }))
    run = run_launch_file(REPO / "launch" / "sim.launch.py", monkeypatch,
                          {"namespace": "robot1", "config": str(custom)})
    assert [n.node_executable for n in run.nodes] == ["sim", "controller"]
    assert [n.node_namespace for n in run.nodes] == ["robot1", "robot1"]
    assert run.nodes[0].parameters == [str(REPO / "config" / "sim.yaml"), {"rate": 500.0}]
    assert run.nodes[1].node_name == "ctl"
    # the simulated clock stays inside the namespace, so two robots never share one /clock
    assert run.nodes[0].remappings == [("/clock", "/robot1/clock")]
    assert run.nodes[1].remappings == [("joint_states", "measured"), ("/clock", "/robot1/clock")]


def test_closure_solver_launch_file_takes_its_parameters_file(ament_share, monkeypatch):
    run = run_launch_file(REPO / "launch" / "closure_solver.launch.py", monkeypatch)
    (node,) = run.nodes
    assert (node.node_package, node.node_executable, node.node_name) == ("pardyn", "closure_solver", "closure_solver")
    (params,) = node.parameters
    assert Path(params) == ament_share / "config" / "closure_solver.yaml" and Path(params).is_file()
    assert "closure_solver" in yaml.safe_load(Path(params).read_text())
    other = run_launch_file(REPO / "launch" / "closure_solver.launch.py", monkeypatch, {"params_file": "/x.yaml"})
    assert other.nodes[0].parameters == ["/x.yaml"]


def test_gazebo_launch_file_exports_the_robot_and_starts_pardyns_nodes_after_the_controllers(
        ament_share, monkeypatch, tmp_path):
    run = run_launch_file(REPO / "launch" / "gazebo.launch.py", monkeypatch,
                          {"robot": "five_bar", "gui": "false", "out": str(tmp_path / "gz")})
    (gazebo,) = run.includes
    assert gazebo.source.location.endswith("ros_gz_sim/launch/gz_sim.launch.py")
    world = gazebo.launch_arguments["gz_args"].split()[-2]
    assert gazebo.launch_arguments["gz_args"].endswith(" -s") and Path(world).is_file()
    executables = [n.node_executable for n in run.nodes]
    # gz first; the spawner after the model exists; pardyn's nodes once both controllers are up
    assert executables[:5] == ["robot_state_publisher", "parameter_bridge", "create", "spawner", "spawner"]
    pardyn_nodes = [n for n in run.nodes if n.node_package == "pardyn"]
    raw = yaml.safe_load((REPO / "config" / "bringup" / "gazebo.yaml").read_text())
    assert [n.node_executable for n in pardyn_nodes] == [e["executable"] for e in raw["nodes"]]
    for node in pardyn_nodes:  # the robot argument and the simulated clock win over the files
        assert node.parameters[-1] == {"robot": "five_bar", "use_sim_time": True}
    description = run.nodes[0].parameters[0]["robot_description"]
    assert "<ros2_control" in description and "five_bar" in description


def test_a_launch_file_without_a_required_argument_is_refused(monkeypatch, tmp_path):
    launch = tmp_path / "needs.launch.py"
    launch.write_text(
        "from launch import LaunchDescription\n"
        "from launch.actions import DeclareLaunchArgument\n"
        "def generate_launch_description():\n"
        "    return LaunchDescription([DeclareLaunchArgument('robot', description='the robot')])\n")
    with pytest.raises(LaunchError, match="robot"):
        run_launch_file(launch, monkeypatch)
