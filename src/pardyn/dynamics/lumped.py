"""Simplified dynamic model of two-end bars: each bar's mass split between its ends (Codourey 1998).

The classical model of the Delta used for identification and control (Codourey, "Dynamic
modeling of parallel robots for computed-torque control implementation", IJRR 17(12),
1998) replaces each forearm bar of mass ``m_b`` by two point masses ``m_b / 2``: one at
its upper end (on the arm, at the elbow), one at its lower end (on the platform), and
neglects its rotational inertia. The arms then carry ``I_arm + m_b L^2`` per bar pair
and the platform ``m_p + 6 m_b / 2``: a 3-dof model with no forearm body.

On pardyn's tree this is a change of the standard parameters only (the tree, closures and
kinematics stay the exact ones): the bar bodies get zero parameters, and the point
masses are added to the bodies at the two ends, in their frames::

    chi(point m at c) = [m (c_y^2 + c_z^2), -m c_x c_y, -m c_x c_z, m (c_x^2 + c_z^2), -m c_y c_z,
                         m (c_x^2 + c_y^2), m c_x, m c_y, m c_z, m]                   # (10,)

(:func:`split_bar_masses`). A robot YAML names its two-end bars in ``dynamics: two_end_bars:``;
:func:`simplified_parameters` is then its simplified model (for control), and identifying that
model (``pardyn identify --dynamic-model simplified``) drops the bars' columns
(:func:`bar_parameter_names`): the point masses at the ends regroup with the end bodies' own
parameters, so the bodies at the ends absorb them. The ends are found on the model: the upper end is the origin
of the bar's first joint below the nearest ancestor carrying a body (the elbow's universal
joint centre), the lower end the other frame of the point closure on the bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from pardyn.description.dynamics import standard_from_com
from pardyn.dynamics.parameters import INERTIAL_NAMES, DynamicParameters
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism
    from pardyn.robot import Robot

__all__ = ["DYNAMIC_MODELS", "bar_ends", "bar_parameter_names", "simplified_parameters", "split_bar_masses",
           "two_end_bars"]

DYNAMIC_MODELS: tuple[str, ...] = ("exact", "simplified")
"""The dynamic models of a robot: every body of the tree, or the two-end bars split (:func:`simplified_parameters`)."""


def _body_on(params: DynamicParameters, joint: int, exclude: str) -> int | None:
    for k, body in enumerate(params.bodies):
        if body.joint == joint and body.name != exclude:
            return k
    return None


def bar_ends(robot: Mechanism, params: DynamicParameters, bar: str) -> tuple[tuple[int, np.ndarray], tuple[int, np.ndarray]]:
    """``((body index, point), (body index, point))``: the upper and lower end of ``bar``, points (3,) m in body frames.

    Raises:
        InputError: ``bar`` is not a body, or an end has no body / closure to go to.
    """
    model = robot.model
    names = [b.name for b in params.bodies]
    if bar not in names:
        raise InputError(f"{robot.name}: no body {bar!r}; bodies: {names}")
    body = params.bodies[names.index(bar)]
    # upper end: climb the chain of the bar's joints to the first ancestor joint carrying another body
    joint, chain = body.joint, []
    while joint != 0 and (not chain or _body_on(params, joint, bar) is None):
        chain.append(joint)
        joint = model.parents[joint]
    upper = _body_on(params, joint, bar)
    if upper is None:
        raise InputError(f"{robot.name}: {bar}: no body above it to receive its upper half")
    top = model.jointPlacements[chain[-1]].translation  # first joint below the ancestor, ancestor's frame
    upper_point = params.bodies[upper].placement.actInv(top)
    # lower end: the point closure on the bar
    for closure in robot.description.closures:
        frames = [model.frames[model.getFrameId(name)] for name in closure.frames]
        on_bar = [f.parentJoint == body.joint for f in frames]
        if closure.type in ("3D", "2D") and any(on_bar) and not all(on_bar):
            other = frames[on_bar.index(False)]
            lower = _body_on(params, other.parentJoint, bar)
            if lower is None:
                raise InputError(f"{robot.name}: {bar}: no body at the other end of closure {closure.name!r}")
            return (upper, upper_point), (lower, params.bodies[lower].placement.actInv(other.placement.translation))
    raise InputError(f"{robot.name}: {bar}: no point closure on this body")


def split_bar_masses(robot: Mechanism, params: DynamicParameters, bars: Sequence[str]) -> DynamicParameters:
    """Codourey's simplified parameters: each bar's mass halved to its two ends, its inertia dropped.

    Args:
        robot: the robot (tree, closures).
        params: the exact model's parameters (every bar a body).
        bars: the bar bodies to replace (e.g. the Delta's ``leg{i}_bar{k}``).

    Returns:
        A copy where each bar has zero parameters and its ends' bodies carry ``m_b / 2`` each.
    """
    standard = [body.standard.copy() for body in params.bodies]
    names = [b.name for b in params.bodies]
    for bar in bars:
        (upper, upper_point), (lower, lower_point) = bar_ends(robot, params, bar)
        half = 0.5 * float(params.bodies[names.index(bar)].standard[9])
        standard[upper] += standard_from_com(half, upper_point, np.zeros((3, 3)))
        standard[lower] += standard_from_com(half, lower_point, np.zeros((3, 3)))
        standard[names.index(bar)][:] = 0.0
    bodies = tuple(replace(body, standard=values) for body, values in zip(params.bodies, standard))
    return replace(params, bodies=bodies)


def two_end_bars(robot: Mechanism) -> tuple[str, ...]:
    """The robot YAML's ``dynamics: two_end_bars:``.

    Raises:
        InputError: the robot has no simplified model (no two-end bars).
    """
    bars = robot.description.dynamics.two_end_bars
    if not bars:
        raise InputError(f"{robot.source}: dynamics: no two_end_bars, so no simplified model; "
                         f"dynamic models: 'exact' only")
    return bars


def simplified_parameters(robot: Robot, params: DynamicParameters | None = None) -> DynamicParameters:
    """The simplified model of ``params`` (the nominal parameters by default): :func:`split_bar_masses` of the
    robot's two-end bars."""
    return split_bar_masses(robot.mechanism, robot.nominal_parameters if params is None else params,
                            two_end_bars(robot.mechanism))


def bar_parameter_names(robot: Mechanism) -> tuple[str, ...]:
    """The standard-parameter names of the two-end bars (10 per bar), absent from the simplified model."""
    return tuple(f"{name}_{bar}" for bar in two_end_bars(robot) for name in INERTIAL_NAMES)
