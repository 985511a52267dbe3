"""``pardyn animate``: a 3D picture (PNG) and an animation (GIF) of a robot along a motion, no ROS needed.

The motion: every task coordinate swings around home, ``x(t) = home + a sin(2 pi f_k t + k)``
(amplitudes ``a`` = the robot's excitation amplitudes of
its YAML's ``excitation:`` section, else 5 cm / 0.1 rad, times
``--scale``), each sample solved by the inverse problem warm-started at the previous one.
The GIF is written with matplotlib's Pillow writer: it opens in any browser or image viewer.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from pardyn.cli.options import number

HELP = "draw a robot in 3D along a motion: PNG of poses and an animated GIF (no ROS needed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, help="robot name (pardyn robots) or YAML path")
    parser.add_argument("--duration", type=number(0.0, 3600.0, low_open=True, unit="s"), default=2.0, help="motion duration in s (default 2)")
    parser.add_argument("--scale", type=number(0.0, 100.0), default=1.0, help="factor on the motion amplitudes (default 1)")
    parser.add_argument("--frames", type=number(1, 10_000, integer=True), default=60, help="frames of the GIF (default 60)")
    parser.add_argument("--out", type=Path, default=Path("out/animate"), help="output directory (default out/animate)")


def motion(robot, times: np.ndarray, scale: float) -> np.ndarray:
    """Every joint (samples, nv) along the swing of the module docstring."""
    n = len(robot.task_names)
    default = [0.1 if unit == "rad" else 0.05 for unit in robot.task_units]
    settings = robot.description.excitation
    amplitude = scale * np.asarray(default if settings is None else settings.amplitude, dtype=float)
    frequency = (1.0 + 0.5 * np.arange(n)) / max(times[-1], 1e-9)
    home = robot.task_values(robot.home)
    joints, q = [], robot.home
    for t in times:
        task = home + amplitude * np.sin(2 * math.pi * frequency * t + np.arange(n))
        q = robot.solve_inverse(task, start=q).q
        joints.append(q)
    return np.array(joints)


def run(args: argparse.Namespace) -> int:
    from pardyn.errors import InputError  # noqa: PLC0415
    from pardyn.robot import load_robot  # noqa: PLC0415
    from pardyn.visualization import animation, poses_figure  # noqa: PLC0415

    if not (args.duration > 0 and args.frames >= 2 and args.scale > 0):
        raise InputError(f"--duration and --scale must be > 0 and --frames >= 2, got {args.duration}, "
                         f"{args.scale}, {args.frames}")
    robot = load_robot(args.robot)
    times = np.linspace(0.0, args.duration, max(args.frames, 2))
    joints = motion(robot, times, args.scale)
    args.out.mkdir(parents=True, exist_ok=True)
    picture, movie = args.out / f"{robot.name}_poses.png", args.out / f"{robot.name}.gif"
    poses_figure(robot, joints, picture)
    animation(robot, times, joints, movie, frames=args.frames)
    print(f"wrote {picture} and {movie}")
    return 0
