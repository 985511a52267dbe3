"""How large a motion around home a robot can follow: the demo's circle and ``animate``'s swing sized from the
reachable workspace (issue 41: fixed 5 cm motions left a 3-PRR-sized workspace of ~0.1 m and the commands failed).

A motion is a task path ``x(s, t)`` scaled by ``s`` (the circle's radius, the swing's amplitude factor). The
largest safe ``s`` is the largest of ``s_max, shrink s_max, shrink^2 s_max, ...`` along which every sample
(warm-started at the previous one, as the commands solve it) is reached by the inverse problem, off the
singularities the solver refuses (:class:`~pardyn.errors.SingularityError`: condition number above its bound),
in the robot's working mode and inside every joint's position limits.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import InputError, KinematicsError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["SHRINK", "excitation_box", "first_unreachable", "largest_safe_scale", "path_failure"]

SHRINK = 0.7
"""Factor between two tried scales."""
TRIES = 16
"""Scales tried (down to ``SHRINK^15 ~ 0.5 %`` of the first)."""


def excitation_box(robot: Robot) -> np.ndarray:
    """Half-widths (n,) of the excitation box around home (m, rad): the YAML's ``excitation: amplitude``, else
    the amplitudes derived from the robot's size and limits (:func:`~pardyn.excitation.bounds.derived_excitation`,
    its warning left to the identification, which says it)."""
    from pardyn.excitation.bounds import derived_excitation  # noqa: PLC0415 - imports the dynamics

    settings = robot.description.excitation
    if settings is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            settings = derived_excitation(robot)
    return np.asarray(settings.amplitude, dtype=float)


def first_unreachable(robot: Robot, poses: np.ndarray) -> tuple[int, str] | None:
    """The first sample of ``poses`` (samples, n) the robot cannot follow from home (each sample warm-started at
    the previous one) and why, in a few words; None if it follows them all."""
    lower, upper = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    q = robot.home
    for k, pose in enumerate(poses):
        try:
            q = robot.solve_inverse(pose, start=q).q
        except KinematicsError as error:
            return k, str(error).splitlines()[0]
        outside = np.flatnonzero((q < lower - 1e-9) | (q > upper + 1e-9))
        if outside.size:
            return k, f"joints {[robot.joint_names[i] for i in outside]} beyond their position limits"
    return None


def path_failure(robot: Robot, poses: np.ndarray) -> str | None:
    """Why the robot cannot follow ``poses`` (samples, n) from home (:func:`first_unreachable`); None if it can."""
    failure = first_unreachable(robot, poses)
    if failure is None:
        return None
    k, reason = failure
    return f"sample {k} {np.round(poses[k], 6).tolist()}: {reason}"


def largest_safe_scale(robot: Robot, path: Callable[[float], np.ndarray], largest: float, *,
                       tries: int = TRIES) -> float:
    """The largest scale ``largest * SHRINK^k`` (k < ``tries``) whose path ``path(scale)`` (samples, n) the robot follows
    (:func:`path_failure`).

    Raises:
        InputError: no scale down to ``largest * SHRINK^(tries - 1)`` is followed (home itself at a limit or a
            singularity); names the first failure.
    """
    scale = float(largest)
    first = None
    for _ in range(tries):
        failure = path_failure(robot, path(scale))
        if failure is None:
            return scale
        first = first or failure
        scale *= SHRINK
    raise InputError(f"{robot.name}: no motion around home down to {scale / SHRINK:.3g} of {largest:.3g} is "
                     f"reachable ({first}); check home (home: in {robot.source.name})")
