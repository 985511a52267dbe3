"""Each node imports what its parameters need, no more (issue 34, item 6: a node ready within 2 s).

A node process (the shipped parameters file) is built without spinning and the
modules it loaded are listed: no MuJoCo outside the sim's MuJoCo plant, no CasADi
once the robot's compiled kernels are in the cache, never cvxpy, dask or
matplotlib, and no SciPy (``scipy.linalg`` alone 0.2-0.45 s: the closure solver's
factorizations are numpy's LAPACK gufuncs) unless the node needs it (the identifier's
estimator, built after the node is up: ``scipy.linalg``, never ``scipy.signal``, ~1 s).
Not timed: the times are ``bench/start_order.py``'s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NEVER = {"cvxpy", "dask", "matplotlib"}
UNUSED = {"mujoco", "casadi", "scipy"}  # unless the parameters need them
USED = {"identifier": {"scipy"}}  # its estimator's base parameters: scipy.linalg's pivoted QR (not scipy.signal)
BUILD_AND_LIST = """
import json, sys
import pardyn.nodes.common as common

def build(factory, name, args=None):  # run_node without the spinning
    import rclpy
    rclpy.init(args=args)
    node = factory()
    if (deferred := getattr(node, "estimator", None)) is not None:  # built after the node is up: its modules too
        assert deferred.finished.wait(120.0) and deferred.error is None, deferred.error
    node.destroy_node()
    print("MODULES " + json.dumps(sorted(sys.modules)), flush=True)
    return 0

common.run_node = build
import importlib
executable = sys.argv[1]
importlib.import_module(f"pardyn.nodes.{executable}").main(["--ros-args", "-r", "__ns:=/imports", "--params-file",
                                                            f"config/{executable}.yaml", *sys.argv[2:]])
"""


def loaded_modules(executable: str, tmp_path: Path, *overrides: str) -> set[str]:
    """The modules a node process holds once its node is built (``overrides``: ``-p name:=value``)."""
    arguments = [item for override in overrides for item in ("-p", override)]
    if executable == "recorder":
        arguments += ["-p", f"bag_path:={tmp_path / 'bag'}"]
    run = subprocess.run([sys.executable, "-c", BUILD_AND_LIST, executable, *arguments], cwd=REPO, text=True,
                         capture_output=True, timeout=300, env={**os.environ, "MUJOCO_GL": "disable"})
    lines = [line for line in run.stdout.splitlines() if line.startswith("MODULES ")]
    assert run.returncode == 0 and lines, run.stdout + run.stderr
    names = set(json.loads(lines[0][len("MODULES "):]))
    return names | {name.split(".")[0] for name in names}


@pytest.mark.parametrize("executable", ["controller", "closure_solver", "trajectory", "dynamics", "recorder",
                                        "identifier", "gazebo_joint_states"])
def test_a_node_imports_no_module_its_parameters_do_not_use(executable, ros_domain, tmp_path):
    modules = loaded_modules(executable, tmp_path)
    if "casadi" in modules:  # it compiled the robot's kernels, missing from the cache: now they are there
        modules = loaded_modules(executable, tmp_path)
    unused = (NEVER | UNUSED - USED.get(executable, set())) & modules
    assert not unused, f"{executable} imports {sorted(unused)} with its shipped parameters"
    assert "scipy.signal" not in modules  # ~1 s: the identifier's Savitzky-Golay weights are numpy's


def test_the_identifier_subscribes_before_it_imports_its_estimator():
    """The identifier's module loads no SciPy and no estimator: both come on its build thread, after the node is
    subscribed and publishing (the estimator cost it 1.5-2 s before its ready line)."""
    code = ("import sys, pardyn.nodes.identifier\n"
            "print(sorted(m for m in ('scipy', 'pardyn.identification', 'casadi', 'mujoco') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, text=True, capture_output=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr


def test_the_sim_imports_mujoco_only_for_the_mujoco_plant(ros_domain, tmp_path):
    assert "mujoco" in loaded_modules("sim", tmp_path)  # config/sim.yaml: plant mujoco
    modules = loaded_modules("sim", tmp_path, "plant:=pinocchio")
    unused = (NEVER | UNUSED) & modules
    assert not unused, f"the sim on the pinocchio plant imports {sorted(unused)}"


def test_pardyn_bringup_starts_its_nodes_before_loading_a_robot():
    """``pardyn bringup FILE`` (``ros2 launch``'s stand-in) spawns the nodes after reading the file only: no
    pinocchio, rclpy or SciPy in the launcher (pardyn.robot cost it 0.3-0.5 s before the first node started);
    ``--robot`` loads the robot when given. The parser of ``pardyn bringup`` imports no other command's module
    (``pardyn kinematics`` and ``identify`` brought pinocchio and SciPy: 1.7 s before the first node started)."""
    code = ("import sys, pardyn.cli, pardyn.cli.bringup\n"
            "pardyn.cli.build_parser('bringup').parse_args(['bringup', 'config/bringup/sim.yaml', '--processes'])\n"
            "print(sorted(m for m in ('pinocchio', 'rclpy', 'scipy', 'mujoco', 'casadi', 'pardyn.robot') "
            "if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, text=True, capture_output=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr
