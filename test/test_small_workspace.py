"""A robot whose workspace is ~0.1 m across (issue 41 item 7): the demo's circle and ``animate``'s swing are sized
from what it reaches around home, and printed with the option that changes them.

The robot: a small biglide (two horizontal sliders each carrying a 6 cm bar, the bars meet at the task point
P = (x, y), vertical plane), written here as a user would. Reachable: ``0 < y < L`` and each slider within +-6 cm, so
the fixed 5 cm circle (``y`` up to home + 5 cm = 9 cm > L) left it. Reference for "follows": the hand closed form
``slider_i = x -+ sqrt(L^2 - y^2)`` at every sample of the printed circle, and the circle inside the excitation box.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from pardyn.cli import main

L = 0.06  # m, bar length
HOME_Y = 0.04  # m
HALF = math.sqrt(L**2 - HOME_Y**2)

URDF = f"""<?xml version="1.0"?>
<robot name="small">
  <link name="base"/>
  <link name="slider1"><inertial><mass value="0.1"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="slider2"><inertial><mass value="0.1"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="leg1"><inertial><origin xyz="{L / 2} 0 0"/><mass value="0.02"/><inertia ixx="1e-8" iyy="6e-6" izz="6e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="leg2"><inertial><origin xyz="{L / 2} 0 0"/><mass value="0.02"/><inertia ixx="1e-8" iyy="6e-6" izz="6e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="leg1_tip"/><link name="leg2_tip"/><link name="carriage"/>
  <link name="platform"><inertial><mass value="0.05"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="slider1_joint" type="prismatic"><parent link="base"/><child link="slider1"/><axis xyz="1 0 0"/>
    <limit lower="-{L}" upper="{L}" effort="20" velocity="1"/></joint>
  <joint name="slider2_joint" type="prismatic"><parent link="base"/><child link="slider2"/><axis xyz="1 0 0"/>
    <limit lower="-{L}" upper="{L}" effort="20" velocity="1"/></joint>
  <joint name="leg1_joint" type="revolute"><parent link="slider1"/><child link="leg1"/><axis xyz="0 0 1"/>
    <limit lower="-3.2" upper="3.2" effort="0" velocity="10"/></joint>
  <joint name="leg2_joint" type="revolute"><parent link="slider2"/><child link="leg2"/><axis xyz="0 0 1"/>
    <limit lower="-3.2" upper="3.2" effort="0" velocity="10"/></joint>
  <joint name="leg1_tip_joint" type="fixed"><parent link="leg1"/><child link="leg1_tip"/><origin xyz="{L} 0 0"/></joint>
  <joint name="leg2_tip_joint" type="fixed"><parent link="leg2"/><child link="leg2_tip"/><origin xyz="{L} 0 0"/></joint>
  <joint name="platform_x" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="0" velocity="10"/></joint>
  <joint name="platform_y" type="prismatic"><parent link="carriage"/><child link="platform"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="0" velocity="10"/></joint>
</robot>
"""

YAML = f"""name: small
urdf: small.urdf
task: {{x: platform_x, y: platform_y}}
actuated: [slider1_joint, slider2_joint]
closures:
  - {{name: leg1, frames: [platform, leg1_tip], type: 2D}}
  - {{name: leg2, frames: [platform, leg2_tip], type: 2D}}
working_mode:
  - {{point: platform, above: slider1, axis: y}}
home:
  task: {{x: 0.0, y: {HOME_Y}}}
  joints: {{slider1_joint: {-HALF:.4f}, slider2_joint: {HALF:.4f}, leg1_joint: {math.atan2(HOME_Y, HALF):.4f}, leg2_joint: {math.pi - math.atan2(HOME_Y, HALF):.4f}}}
dynamics:
  gravity: [0.0, -9.81, 0.0]
"""


@pytest.fixture
def small(tmp_path) -> Path:
    (tmp_path / "small.urdf").write_text(URDF)
    (tmp_path / "small.yaml").write_text(YAML)
    return tmp_path / "small.yaml"


def test_the_demo_circle_fits_the_workspace_and_names_its_option(small, tmp_path, capsys):
    """Was: the fixed 5 cm circle left the workspace and the demo stopped. Now the printed radius is inside the
    excitation box, every sample of the circle is reached (sliders on the hand closed form), and --radius is named."""
    from pardyn.trajectories.workspace import excitation_box

    import pardyn

    assert main(["demo", "--robot", str(small), "--kinematics-only", "--rate", "100", "--out",
                 str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("circle: radius")]
    assert "--radius" in line
    summary = json.loads((tmp_path / "demo" / "kinematics" / "summary.json").read_text())
    radius = summary["circle_radius_m"]
    assert float(re.search(r"radius (\S+) m", line).group(1)) == pytest.approx(radius, rel=1e-2)
    robot = pardyn.load_robot(small)
    box = excitation_box(robot)
    assert 0.0 < radius <= min(box[0] / 2, box[1]) + 1e-12
    assert summary["max_inverse_residual"] < 1e-9
    for angle in np.linspace(0.0, 2 * math.pi, 13):  # the hand closed form along the circle
        x, y = radius * (math.cos(angle) - 1.0), HOME_Y + radius * math.sin(angle)
        q = robot.solve_inverse([x, y]).q
        half = math.sqrt(L**2 - y**2)
        assert q[robot.actuated_indices] == pytest.approx([x - half, x + half], abs=1e-9)
        assert abs(x - half) < L and abs(x + half) < L


def test_a_radius_too_large_is_one_line_naming_the_option(small, tmp_path, capsys):
    assert main(["demo", "--robot", str(small), "--kinematics-only", "--rate", "100", "--radius", "0.05",
                 "--out", str(tmp_path / "demo")]) != 0
    err = capsys.readouterr().err
    assert "--radius 0.05 m leaves the reachable workspace" in err and "Traceback" not in err


def test_animate_sizes_its_swing_and_names_scale(small, tmp_path, capsys):
    """Was: 5 cm / 0.1 rad swings (or the excitation box) unchecked. Now the largest factor on the excitation box
    that the robot follows, printed with --scale; an explicit --scale too large is one line naming it."""
    assert main(["animate", "--robot", str(small), "--frames", "8", "--duration", "1",
                 "--out", str(tmp_path / "animate")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"motion: \S+ x the excitation box .*--scale", out)
    assert (tmp_path / "animate" / "small.gif").is_file()
    assert main(["animate", "--robot", str(small), "--scale", "5", "--frames", "8", "--duration", "1",
                 "--out", str(tmp_path / "animate")]) != 0
    err = capsys.readouterr().err
    assert "--scale 5 (amplitudes" in err and "leaves the reachable workspace" in err
