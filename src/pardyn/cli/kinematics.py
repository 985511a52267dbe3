"""``pardyn kinematics``: solve the inverse (``--task``) or forward (``--actuated``) problem."""

from __future__ import annotations

import argparse
import json

from pardyn.errors import InputError
from pardyn.robot import load_robot

HELP = "closed-loop kinematics: every joint from task coordinates or actuated joints (JSON out)"


def _numbers(text: str, option: str) -> list[float]:
    try:
        return [float(item) for item in text.split(",") if item.strip()]
    except ValueError as error:
        raise InputError(f"{option}: expected comma-separated numbers, got {text!r}") from error


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
        solution = robot.solve_inverse(_numbers(args.task, "--task"), method=args.method)
    else:
        sensed = None if args.sensed is None else _numbers(args.sensed, "--sensed")
        solution = robot.solve_forward(_numbers(args.actuated, "--actuated"), sensed=sensed, method=args.method)
    print(json.dumps({
        "robot": robot.name,
        "task": robot.task_dict(solution.q),
        "joints": robot.joint_dict(solution.q),
        "locked_joints": {name: float(value) for name, value in robot.locked_joints.items()},
        "residual": solution.residual,
        "conditioning": solution.conditioning,
    }, indent=2))
    return 0
