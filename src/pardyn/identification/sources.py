"""What identification reads: a bag (pardyn's or any rosbag2 bag) or a series from CSV files, on the joint side.

:func:`joint_side_series` turns one source into the joint-state series the
pipeline uses:

1. read it: a path by the reader of its format (:func:`pardyn.recordings.read_series`: a rosbag2 bag,
   MCAP or sqlite3, the JointState topic of the user's choice, joints in any order, other joints and
   topics ignored; a CSV or MATLAB table), or a
   :class:`~pardyn.bags.joint_states.JointStateSeries` already read (tables with the command's layout
   options, :func:`pardyn.recordings.csv_series.read_csv_series`);
2. non-uniform stamps resampled onto a uniform grid, or refused when a gap is
   too long (:func:`pardyn.bags.resample.resample_uniform`);
3. names mapped to the robot's (``joint_map``);
4. motor side to joint side through the robot's transmission
   (:class:`pardyn.dynamics.transmission.Transmission`);
5. units checked where they can be: positions far outside the URDF joint
   limits (degrees instead of radians, motor angles without a transmission),
   efforts far above the URDF effort limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.bags.errors import BagError
from pardyn.bags.joint_states import JointStateSeries
from pardyn.bags.resample import DEFAULT_MAX_GAP, resample_uniform
from pardyn.dynamics.transmission import Transmission
from pardyn.recordings import ReadOptions, read_series

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["LIMIT_MARGIN", "Source", "check_efforts", "check_units", "joint_side_series", "rename_joints", "source_label"]

Source = Path | str | JointStateSeries
"""A recording's path (any format of :data:`pardyn.recordings.READERS`) or a series already read."""

LIMIT_MARGIN = 0.25
"""Positions beyond the URDF limits by more than this fraction of the joint's range are a units error."""

_EFFORT_FACTOR = 5.0  # efforts above this many times the URDF effort limit are a units error


def source_label(source: Source) -> str:
    """The file or bag a source came from (for messages and report labels)."""
    return str(source.bag_path if isinstance(source, JointStateSeries) else source)


def rename_joints(series: JointStateSeries, joint_map: Mapping[str, str] | None) -> JointStateSeries:
    """``series`` with its joint names mapped through ``joint_map`` (names not in it kept).

    Raises:
        BagError: two names mapped to the same joint.
    """
    if not joint_map:
        return series
    names = tuple(joint_map.get(name, name) for name in series.names)
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise BagError(f"joint map gives several columns the names {twice}", bag=series.bag_path,
                       topic=series.topic, kind="names")
    return replace(series, names=names)


def to_joint_side(series: JointStateSeries, transmission: Transmission) -> JointStateSeries:
    """Motor-side positions, velocities and efforts of ``transmission.motors`` -> its joints.

    ``q = R^-1 theta + q_0``, ``qdot = R^-1 thetadot``, ``tau = R^T tau_m``
    (:class:`~pardyn.dynamics.transmission.Transmission`); other columns are dropped.

    Raises:
        BagError: a motor missing from the data (the message lists what it has).
    """
    missing = [m for m in transmission.motors if m not in series.names]
    if missing:
        raise BagError(
            f"motors {missing} of the robot's transmission are not in the data, which has {list(series.names)} "
            "(map the data's names to the motors with --joint-map)",
            bag=series.bag_path, topic=series.topic, kind="names",
        )
    columns = series.columns(transmission.motors)
    return replace(
        series,
        names=transmission.joints,
        position=transmission.joint_positions(series.position[:, columns]),
        velocity=transmission.joint_velocities(series.velocity[:, columns]),
        effort=transmission.joint_torques(series.effort[:, columns]),
        notes=(*series.notes, f"{Path(series.bag_path).name}: motor side -> joint side through the transmission "
                              f"(motors {list(transmission.motors)})"),
    )


def check_efforts(series: JointStateSeries, names: list[str]) -> None:
    """Every sample has an effort for each of ``names`` (identification needs the actuator torques).

    Raises:
        BagError: kind ``"effort"``, naming the joint (or motor) and the first time without one.
    """
    efforts = series.effort[:, series.columns(names)]
    missing = np.argwhere(~np.isfinite(efforts))
    if missing.size:
        k, j = missing[0]
        raise BagError(
            f"no effort for {names[j]} at t={series.t[k]:.6f} s (identification needs the actuator torques)",
            bag=series.bag_path, topic=series.topic, kind="effort", t_s=float(series.t[k]),
        )


OUTLIER_SHARE = 0.01
"""At most this share of the samples (and at most 10) far outside the range, the rest inside: outliers, not a unit."""


def _refuse_outliers(series: JointStateSeries, name: str, field: str, outside: np.ndarray, bound: str) -> None:
    """A few isolated samples far outside ``bound`` while the others lie within it are corrupt values (a logger's
    glitch, 1e300), not a unit mistake (which moves every sample): named with their time and sample number.

    Raises:
        BagError: kind ``"outlier"``, naming the joint, the field, the first such sample, its time and value.
    """
    count = int(np.count_nonzero(outside))
    if not 0 < count <= min(10, OUTLIER_SHARE * outside.size):
        return
    k = int(np.flatnonzero(outside)[0])
    value = float((series.position if field == "position" else series.effort)[k, series.columns([name])[0]])
    more = f" (and {count - 1} more samples)" if count > 1 else ""
    raise BagError(
        f"joint {name!r}: {field} {value:.6g} at t={series.t[k]:.6f} s (sample {k}, row {k + 1} of the data){more} "
        f"is far outside {bound} while the other {outside.size - count} samples lie within: an outlier or corrupt "
        "value, not a unit problem; remove or repair that sample",
        bag=series.bag_path, topic=series.topic, kind="outlier", t_s=float(series.t[k]),
    )


def check_units(series: JointStateSeries, robot: Robot, joints: list[str]) -> None:
    """Positions within the URDF limits (up to :data:`LIMIT_MARGIN` of the range), efforts within 5 x the effort limits.

    Raises:
        BagError: kind ``"units"``, naming the joint, what was seen and the likely cause.
    """
    model = robot.model
    columns = series.columns(joints)
    for name, column in zip(joints, columns):
        index = robot.joint_names.index(name)
        lower, upper = float(model.lowerPositionLimit[index]), float(model.upperPositionLimit[index])
        values = series.position[:, column]
        if np.isfinite(lower) and np.isfinite(upper) and upper > lower:
            margin = LIMIT_MARGIN * (upper - lower)
            low, high = float(values.min()), float(values.max())
            _refuse_outliers(series, name, "position", (values < lower - margin) | (values > upper + margin),
                             f"its URDF limits [{lower:.6g}, {upper:.6g}] (rad or m)")
            if low < lower - margin or high > upper + margin:
                raise BagError(
                    f"joint {name!r}: positions from {low:.6g} to {high:.6g}, far outside its URDF limits "
                    f"[{lower:.6g}, {upper:.6g}] (rad or m): degrees instead of radians, or motor-side angles "
                    "without a transmissions: section in the robot description?",
                    bag=series.bag_path, topic=series.topic, kind="units",
                )
        limit = float(model.effortLimit[index])
        efforts = series.effort[:, column]
        if limit > 0 and np.isfinite(limit) and np.all(np.isfinite(efforts)):
            _refuse_outliers(series, name, "effort", np.abs(efforts) > _EFFORT_FACTOR * limit,
                             f"{_EFFORT_FACTOR:g} times its URDF effort limit {limit:.6g} (N m or N)")
            peak = float(np.abs(efforts).max())
            if peak > _EFFORT_FACTOR * limit:
                raise BagError(
                    f"joint {name!r}: efforts up to {peak:.6g}, {peak / limit:.0f} times its URDF effort limit "
                    f"{limit:.6g} (N m or N): another unit (mN m, per-mille of the rated torque)?",
                    bag=series.bag_path, topic=series.topic, kind="units",
                )


def joint_side_series(
    source: Source,
    robot: Robot,
    *,
    topic: str = "joint_states",
    joint_map: Mapping[str, str] | None = None,
    transmission: Transmission | None = None,
    max_gap: float = DEFAULT_MAX_GAP,
) -> JointStateSeries:
    """One source as the joint-side series of the robot's joints (module docstring, steps 1-5).

    Raises:
        BagError: naming the bag (topic) or file, and what is wrong.
    """
    series = resample_uniform(read_series(source, ReadOptions(topic=topic, max_gap=max_gap)), max_gap=max_gap)
    series = rename_joints(series, joint_map)
    driven = transmission.motors if transmission is not None else robot.actuated_names
    check_efforts(series, [name for name in driven if name in series.names])
    if transmission is not None:
        series = to_joint_side(series, transmission)
    measured = [name for name in robot.measured_names if name in series.names]
    check_units(series, robot, measured)
    return series
