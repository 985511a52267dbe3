"""Conversions between the messages pardyn's nodes exchange and arrays, shared by the nodes.

* ``sensor_msgs/JointState`` -> positions and velocities of named joints (:func:`joint_readings`);
* actuator torques -> ``std_msgs/Float64MultiArray`` with the lockstep tag in
  ``layout.data_offset`` and the joint names in ``layout.dim[0].label``
  (:func:`command_message`; the receiving side checks commands with
  :func:`pardyn.control.safety.check_command`);
* ``trajectory_msgs/JointTrajectory`` <-> sampled joint references
  (:func:`trajectory_message`, :func:`reference_from_message`).

Every reader raises :class:`pardyn.errors.InputError` naming what is wrong
(missing names, lengths that differ, NaN/inf); the nodes log and drop.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from pardyn.control.safety import joint_label
from pardyn.errors import InputError
from pardyn.nodes.common import ns_to_stamp
from pardyn.nodes.wire import WireState
from pardyn.trajectories import JointSamples
from pardyn.trajectories.joint import reference_from_message  # the core's reading, the nodes' name

__all__ = ["command_message", "joint_readings", "reference_from_message", "trajectory_message"]


def joint_readings(
    message: JointState | WireState, names: tuple[str, ...], *, what: str = "actuated", velocities=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (k,) of the joints ``names`` (a law's ``joints``, every joint of a state) in a
    JointState (a message, or one read from its bytes: :class:`pardyn.nodes.wire.WireState`).

    ``velocities`` (one per message name) replace the message's own: the filled-in ones of
    :class:`pardyn.control.joint_state.JointStateFilter` (estimates where the message has none or NaN).

    Raises:
        InputError: missing names, lengths that differ, NaN/inf.
    """
    given = tuple(message.name)
    velocity_field = message.velocity if velocities is None else velocities
    if len(message.position) != len(given) or len(velocity_field) != len(given):
        raise InputError(
            f"{len(given)} names but {len(message.position)} positions and {len(velocity_field)} velocities"
        )
    where, missing = _positions_of(tuple(names), given)
    if missing:
        raise InputError(f"missing {what} joints {list(missing)}, got {list(given)}")
    position = np.asarray(message.position, dtype=float)[where]
    velocity = np.asarray(velocity_field, dtype=float)[where]
    if not (np.isfinite(position).all() and np.isfinite(velocity).all()):
        bad = [name for name, p, v in zip(names, position, velocity) if not (math.isfinite(p) and math.isfinite(v))]
        raise InputError(f"non-finite position or velocity of {bad}")
    return position, velocity


@functools.lru_cache(maxsize=64)
def _positions_of(names: tuple[str, ...], given: tuple[str, ...]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Where each of ``names`` is in ``given`` and the ones missing from it (a stream's names rarely change:
    computed once per pair)."""
    missing = tuple(name for name in names if name not in given)
    where = np.array([given.index(name) for name in names if name in given], dtype=np.intp)
    where.setflags(write=False)  # shared by every call with these names
    return where, missing


def command_message(tau: np.ndarray, names: tuple[str, ...], tag: int) -> Float64MultiArray:
    """Float64MultiArray of the torques ``tau`` (n_a,), joint names in ``layout.dim[0].label``, tagged ``tag``."""
    message = Float64MultiArray()
    message.layout.dim = [MultiArrayDimension(label=joint_label(names), size=len(names), stride=len(names))]
    message.layout.data_offset = int(tag)
    message.data = [float(v) for v in tau]
    return message


def trajectory_message(samples: JointSamples, indices, names, start_ns: int) -> JointTrajectory:
    """A JointTrajectory of the joints ``indices`` (named ``names``) starting at ``start_ns``."""
    message = JointTrajectory()
    message.header.stamp = ns_to_stamp(start_ns)
    message.joint_names = list(names)
    for k, t in enumerate(samples.times):
        point = JointTrajectoryPoint()
        point.positions = samples.q[k, indices].tolist()
        point.velocities = samples.qdot[k, indices].tolist()
        point.accelerations = samples.qddot[k, indices].tolist()
        whole = int(round(float(t) * 1e9))
        point.time_from_start = Duration(sec=whole // 1_000_000_000, nanosec=whole % 1_000_000_000)
        message.points.append(point)
    return message
