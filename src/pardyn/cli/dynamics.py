"""``pardyn dynamics``: actuator torques along a task-space trajectory (closed-loop inverse dynamics).

Input CSV (``--trajectory``): a header row, then one row per sample::

    t,x,x_dot,x_ddot,y,y_dot,y_ddot,phi,phi_dot,phi_ddot
    0.0,0.0,0.1,0.0,...

``t`` (s), then for every task coordinate ``c`` of the robot (``pardyn robots
--json``: dualv x, y, phi; rrr3 x, y, theta; five_bar x, y) its value ``c``
(m, rad), ``c_dot`` and ``c_ddot``; other columns are ignored. Output CSV
(``--out``): ``t`` and one column per actuated joint (N m), e.g.
``t,leg1_joint1,leg2_joint1,leg3_joint1,leg4_joint1``.

The inverse kinematics is solved row by row, each from the previous solution
(warm start), then the torques of :class:`pardyn.dynamics.inverse.InverseDynamics`
(minimum norm for redundant robots, plus ``--internal-stress`` projected on the
null space of ``J^T``, eq. 26). ``--params`` reads identified parameters
(:func:`pardyn.dynamics.parameters.read_parameter_file`).
"""

from __future__ import annotations

import argparse
import csv
import math
from array import array
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pardyn.cli.options import numbers
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.parameters import read_parameter_file
from pardyn.errors import InputError, KinematicsError
from pardyn.progress import progress
from pardyn.robot import Robot, load_robot
from pardyn.textio import shown, text_lines

HELP = "closed-loop inverse dynamics: actuator torques along a task trajectory (CSV in, CSV out)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, help="robot name (pardyn robots) or YAML path")
    parser.add_argument("--trajectory", required=True, type=Path,
                        help="input CSV: t, then c, c_dot, c_ddot for every task coordinate c")
    parser.add_argument("--out", required=True, type=Path, help="output CSV: t and one column per actuated joint (N m; N for prismatic joints)")
    parser.add_argument("--internal-stress", metavar="V1,...",
                        help="redundant robots: one torque per actuated joint (N m, N for prismatic) whose null-space "
                             "projection is added (default: none, minimum-norm torques)")
    parser.add_argument("--params", type=Path, metavar="RESULT.json",
                        help="dynamic parameters from an identification result (default: the YAML nominal values)")


def task_columns(robot: Robot) -> list[str]:
    """The columns the trajectory CSV needs, in order."""
    return ["t"] + [f"{c}{suffix}" for c in robot.task_names for suffix in ("", "_dot", "_ddot")]


def read_trajectory(path: Path, robot: Robot) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Sequence[int]]:
    """``t`` (N,), task positions, velocities, accelerations (N, n) and the file line of each row.

    Raises:
        InputError: naming the file, and the column and line at fault (also a time that does not increase).
    """
    # streamed, the numbers kept in flat arrays (8 bytes each): a 1,000,000-row file holding its text and a
    # Python list per row took 1.48 GB (read whole into a StringIO since de9554f); now the numbers' 80 MB
    reader = csv.reader(text_lines(path, what="trajectory CSV"))
    header = next(reader, None)
    if header is None:
        raise InputError(f"{path}: empty file (expected a header {','.join(task_columns(robot))})")
    header = [name.strip() for name in header]
    needed = task_columns(robot)
    missing = [name for name in needed if name not in header]
    if missing:
        raise InputError(f"{path}: missing columns {missing}; {robot.name} needs {needed}")
    twice = sorted({name for name in needed if header.count(name) > 1})
    if twice:
        raise InputError(f"{path}: columns {twice} appear twice")
    position = [header.index(name) for name in needed]
    numbers, lines = array("d"), array("q")
    previous_t, previous_line = None, 0
    for line, row in enumerate(reader, start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        for name, column in zip(needed, position):
            text = row[column].strip() if column < len(row) else ""
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise InputError(f"{path}: line {line}, column {shown(name)}: expected a finite number, "
                                 f"got {shown(text)}")
            numbers.append(value)
        t = numbers[-len(needed)]
        if previous_t is not None and not t > previous_t:
            raise InputError(f"{path}: line {line}: time t = {t!r} s is not after the previous row's "
                             f"{previous_t!r} s (line {previous_line}): rows must be in increasing time")
        previous_t, previous_line = t, line
        lines.append(line)
    if not lines:
        raise InputError(f"{path}: no data rows")
    data = np.frombuffer(numbers, dtype=np.float64).reshape(len(lines), len(needed))
    triples = data[:, 1:].reshape(len(lines), len(robot.task_names), 3)
    return data[:, 0], triples[:, :, 0], triples[:, :, 1], triples[:, :, 2], lines


def _numbers(text: str, option: str) -> list[float]:
    return numbers(text, option, bound=1e9)


PROGRESS_ROWS = 20_000
"""Trajectories longer than this show a progress line on stderr (about 4 s of solving)."""


def run(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot)
    params = robot.nominal_parameters if args.params is None else read_parameter_file(args.params, robot)
    stress = None if args.internal_stress is None else _numbers(args.internal_stress, "--internal-stress")
    time, task, velocity, acceleration, lines = read_trajectory(args.trajectory, robot)
    inverse = InverseDynamics(robot, params)
    if stress is not None:
        inverse.check_internal_stress(stress)  # fail before solving the trajectory
    torques = np.empty((len(time), len(robot.actuated_names)))
    previous = None
    rows = range(len(time))
    if len(time) > PROGRESS_ROWS:
        rows = progress(rows, total=len(time), label=f"pardyn dynamics: {len(time)} rows")
    for k in rows:
        try:
            q = robot.solve_inverse(task[k], start=previous).q
        except (KinematicsError, InputError) as error:
            raise InputError(f"{args.trajectory}: line {lines[k]} (t = {time[k]}): {error}") from error
        torques[k] = inverse.torques_from_task(q, velocity[k], acceleration[k], internal_stress=stress)
        if not np.isfinite(torques[k]).all():
            raise InputError(
                f"{args.trajectory}: line {lines[k]} (t = {time[k]:.6g} s): the torques are not finite numbers "
                f"(velocities {shown(velocity[k].tolist())}, accelerations {shown(acceleration[k].tolist())}"
                f"{', the --internal-stress' if stress is not None else ''}, or the parameters are too large); "
                "nothing was written"
            )
        previous = q
    with args.out.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["t", *robot.actuated_names])
        for t, row in zip(time, torques):
            writer.writerow([repr(float(t)), *(repr(float(v)) for v in row)])
    return 0
