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

from pardyn.errors import DescriptionError
from pardyn.node_parameters import NODE_PARAMETERS

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("launch_double", Path(__file__).with_name("launch_double.py"))
launch_double = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("launch_double", launch_double)  # dataclasses look their module up
_spec.loader.exec_module(launch_double)
LaunchError, run_launch_file = launch_double.LaunchError, launch_double.run_launch_file
BRINGUP_KINDS = ("sim", "hardware", "identification", "online_identification")
LAUNCH_FILES = sorted(path.name for path in (REPO / "launch").glob("*.launch.py"))
COMMON = ("robot", "config", "use_sim_time", "namespace")


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


def effective_parameters(node) -> dict:
    """The values a launch_ros Node's process ends up with, read with yaml alone: its ``parameters`` in order, a
    file's ``/**`` section and the section of the node's name (``/ns/name`` too), later ones winning."""
    name = node.node_name or node.node_executable
    keys = {"/**", name, f"/{name}", f"/{(node.node_namespace or '').strip('/')}/{name}"}
    values: dict = {}
    for item in node.parameters:
        if isinstance(item, str):
            raw = yaml.safe_load(Path(item).read_text()) or {}
            for key, section in raw.items():
                if key in keys:
                    values.update(section.get("ros__parameters", {}))
        else:
            values.update(item)
    return values


def takes(executable: str, parameter: str) -> bool:
    """Whether the node declares ``parameter`` (its table, which the node declares from)."""
    return any(spec.name == parameter for spec in NODE_PARAMETERS.get(executable, ()))


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
    # (through pardyn.nodes.stopping, which takes Ctrl-C over before the node's module loads)
    assert all(f'"{n.node_executable} = pardyn.nodes.stopping:{n.node_executable}"' in scripts for n in run.nodes)


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


def test_closure_solver_launch_file_takes_its_parameters_file(ament_share, monkeypatch, tmp_path):
    run = run_launch_file(REPO / "launch" / "closure_solver.launch.py", monkeypatch)
    (node,) = run.nodes
    assert (node.node_package, node.node_executable, node.node_name) == ("pardyn", "closure_solver", "closure_solver")
    (params,) = node.parameters
    assert Path(params) == ament_share / "config" / "closure_solver.yaml" and Path(params).is_file()
    assert "closure_solver" in yaml.safe_load(Path(params).read_text())
    mine = tmp_path / "mine.yaml"
    mine.write_text("closure_solver:\n  ros__parameters: {robot: five_bar}\n")
    other = run_launch_file(REPO / "launch" / "closure_solver.launch.py", monkeypatch, {"params_file": str(mine)})
    assert other.nodes[0].parameters == [str(mine)]
    # config:= relative to the share (from another working directory), robot, use_sim_time and namespace
    monkeypatch.chdir(tmp_path)
    run = run_launch_file(REPO / "launch" / "closure_solver.launch.py", monkeypatch,
                          {"config": "config/closure_solver.yaml", "robot": "rrr3", "use_sim_time": "true",
                           "namespace": "r1"})
    (node,) = run.nodes
    assert Path(node.parameters[0]).resolve() == (REPO / "config" / "closure_solver.yaml").resolve()
    values = effective_parameters(node)
    assert (values["robot"], values["use_sim_time"]) == ("rrr3", True)
    assert node.node_namespace == "r1" and node.remappings == [("/clock", "/r1/clock")]


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
        values = effective_parameters(node)
        assert values["use_sim_time"] is True
        assert (values["robot"] == "five_bar") == takes(node.node_executable, "robot"), node.node_executable
    with pytest.raises(DescriptionError, match="namespace:=r1: not supported"):
        run_launch_file(REPO / "launch" / "gazebo.launch.py", monkeypatch,
                        {"robot": "five_bar", "out": str(tmp_path / "gz"), "namespace": "r1"})
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


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_every_launch_file_declares_robot_config_use_sim_time_and_namespace(name, ament_share, monkeypatch, tmp_path):
    arguments = {"out": str(tmp_path / "gz")} if name == "gazebo.launch.py" else {}
    run = run_launch_file(REPO / "launch" / name, monkeypatch, arguments)
    assert set(COMMON) <= set(run.declared), run.declared


@pytest.mark.parametrize("kind", BRINGUP_KINDS)
def test_robot_argument_reaches_every_node_that_takes_one(kind, ament_share, monkeypatch):
    default = run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch)
    run = run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"robot": "rrr3"})
    robots = {n.node_executable: effective_parameters(n).get("robot") for n in run.nodes}
    # the nodes that take a robot get rrr3; the others keep what the file gives them
    assert robots == {n.node_executable: "rrr3" if takes(n.node_executable, "robot")
                      else effective_parameters(n).get("robot") for n in default.nodes}
    assert "rrr3" in robots.values() and "dualv" not in {effective_parameters(n).get("robot") for n in run.nodes
                                                          if takes(n.node_executable, "robot")}
    # a description file by its path: the nodes get its absolute path
    own = REPO / "config" / "robots" / "five_bar.yaml"
    run = run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"robot": str(own)})
    assert {effective_parameters(n).get("robot") for n in run.nodes if takes(n.node_executable, "robot")} == {
        str(own.resolve())}
    with pytest.raises(DescriptionError, match=r"robot:=rrr9: neither a shipped robot \(.*rrr3.*\) nor a file"):
        run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"robot": "rrr9"})


@pytest.mark.parametrize("kind", BRINGUP_KINDS)
def test_use_sim_time_argument_reaches_every_node_but_the_clock_source(kind, ament_share, monkeypatch):
    for value, expected in (("true", True), ("false", False)):
        run = run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"use_sim_time": value})
        for node in run.nodes:
            got = effective_parameters(node).get("use_sim_time", False)
            if node.node_executable == "sim":  # publishes /clock on the wall clock: the file's own value
                assert got is False
            else:
                assert got is expected, (node.node_executable, value)
    with pytest.raises(DescriptionError, match="use_sim_time:=maybe: expected true or false"):
        run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"use_sim_time": "maybe"})


@pytest.mark.parametrize("kind", BRINGUP_KINDS)
def test_config_argument_relative_to_the_share_as_pardyn_bringup_takes_it(kind, ament_share, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # not the checkout: config/bringup/... exists only in the share
    expected = [launched(n) for n in run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch).nodes]
    other = "hardware" if kind != "hardware" else "sim"
    for config in (f"config/bringup/{kind}.yaml", kind):
        run = run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"config": config})
        assert [launched(n) for n in run.nodes] == expected
    run = run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"config": f"config/bringup/{other}.yaml"})
    assert [launched(n) for n in run.nodes] == expected_nodes(REPO / "config" / "bringup" / f"{other}.yaml",
                                                              ament_share)
    with pytest.raises(DescriptionError, match="config:=config/bringup/nope.yaml: no such bringup file"):
        run_launch_file(REPO / "launch" / f"{kind}.launch.py", monkeypatch, {"config": "config/bringup/nope.yaml"})


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_an_undeclared_argument_is_refused_in_one_line(name, ament_share, monkeypatch, tmp_path):
    arguments = {"robto": "rrr3", "out": str(tmp_path / "gz")} if name == "gazebo.launch.py" else {"robto": "rrr3"}
    with pytest.raises(DescriptionError) as error:
        run_launch_file(REPO / "launch" / name, monkeypatch, arguments)
    text = str(error.value)
    assert "\n" not in text and text.startswith(f"{name}: unknown launch arguments ['robto']; it takes [")
    assert all(f"'{argument}'" in text for argument in COMMON)


def test_a_user_launch_file_that_includes_one_keeps_its_own_arguments(ament_share, monkeypatch):
    """``ros2 launch my_robot bringup.launch.py world:=x`` including sim.launch.py: ``world`` is the user's file's."""
    run = run_launch_file(REPO / "launch" / "sim.launch.py", monkeypatch, {"world": "x", "robot": "rrr3"},
                          command_line=["ros2", "launch", "my_robot", "sim.launch.py", "world:=x", "robot:=rrr3"])
    assert [n.node_executable for n in run.nodes] == ["sim", "controller", "trajectory", "closure_solver"]
