"""``pardyn kinematics``: solve the inverse (``--task``) or forward (``--actuated``) problem."""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from pardyn.cli.options import numbers
from pardyn.errors import ConvergenceError, InputError
from pardyn.robot import load_robot

HELP = "closed-loop kinematics: every joint from task coordinates or actuated joints (JSON out)"


def _numbers(text: str, option: str) -> list[float]:
    return numbers(text, option)


MISMATCH = 1e-9
"""Largest difference (m, rad) between a value asked for and the answer's, said nothing about."""


def check_answer(names, asked, answered, option: str, *, exact: bool) -> list[str]:
    """Compare what was asked (``--task``, ``--actuated``) with the answer's values; notes to print.

    An angle answered 2 pi k away is the same pose: a note says so. Any other
    difference: with ``exact`` (a task asked for) a :class:`ConvergenceError`,
    else (redundant or sensed readings fitted in the least-squares sense) a note
    naming the largest misfit.
    """
    notes, misfit = [], []
    for name, want, got in zip(names, asked, answered):
        difference = want - got
        turns = round(difference / (2.0 * math.pi))
        if turns and abs(difference - 2.0 * math.pi * turns) <= MISMATCH * max(1.0, abs(want)):
            notes.append(f"{option} {name} = {want:.9g} answered as {got:.9g} ({turns:+d} x 2 pi: the same pose)")
        elif abs(difference) > MISMATCH * max(1.0, abs(want)):
            misfit.append((abs(difference), name, want, got))
    if misfit:
        size, name, want, got = max(misfit)
        text = f"{option} {name} = {want:.9g} but the closed loops give {got:.9g} (difference {size:.3g})"
        if exact:
            raise ConvergenceError(f"{text}: no pose of {option} was found")
        notes.append(f"{text}: the readings are inconsistent; the answer fits them in the least-squares sense")
    return notes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, help="robot name (pardyn robots) or YAML path")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--task", help="task coordinates v1,v2,... in the robot's task order (m, rad)")
    group.add_argument("--actuated", help="actuated joint positions v1,... in the robot's actuated order")
    parser.add_argument("--sensed", help="sensed passive joint positions (with --actuated)")
    parser.add_argument("--method", choices=("newton", "analytic"), default="newton",
                        help="generic Newton solver (default) or the robot's closed form")


def run(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot)
    if args.task is not None:
        if args.sensed is not None:
            raise InputError("--sensed goes with --actuated")
        task = _numbers(args.task, "--task")
        solution = robot.solve_inverse(task, method=args.method)
        notes = check_answer(robot.task_names, task, robot.task_values(solution.q), "--task", exact=True)
    else:
        sensed = None if args.sensed is None else _numbers(args.sensed, "--sensed")
        actuated = _numbers(args.actuated, "--actuated")
        solution = robot.solve_forward(actuated, sensed=sensed, method=args.method)
        notes = check_answer(robot.measured_names, actuated + (sensed or []),
                             np.asarray(solution.q)[robot.measured_indices[:len(actuated) + len(sensed or [])]],
                             "--actuated" if sensed is None else "--actuated/--sensed", exact=False)
    for note in notes:
        print(f"pardyn kinematics: note: {note}", file=sys.stderr)
    print(json.dumps({
        "robot": robot.name,
        "task": robot.task_dict(solution.q),
        "joints": robot.joint_dict(solution.q),
        "locked_joints": {name: float(value) for name, value in robot.locked_joints.items()},
        "residual": solution.residual,
        "conditioning": solution.conditioning,
    }, indent=2))
    return 0
