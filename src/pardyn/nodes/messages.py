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

import array
import math

import numpy as np
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from pardyn.control.safety import joint_label
from pardyn.errors import InputError
from pardyn.nodes.common import NANOSECONDS, ns_to_stamp
from pardyn.trajectories import JointSamples
from pardyn.trajectories.joint import reference_from_message  # the core's reading, the nodes' name

__all__ = ["CommandBuffer", "JointStateBuffer", "command_message", "joint_readings", "reference_from_message", "trajectory_message"]


def joint_readings(
    message: JointState, names: tuple[str, ...], *, what: str = "actuated", velocities=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (k,) of the joints ``names`` (a law's ``joints``, every joint of a state) in a JointState.

    ``velocities`` (one per message name) replace the message's own: the filled-in ones of
    :class:`pardyn.control.joint_state.JointStateFilter` (estimates where the message has none or NaN).

    Raises:
        InputError: missing names, lengths that differ, NaN/inf.
    """
    given = list(message.name)
    velocity_field = message.velocity if velocities is None else velocities
    if len(message.position) != len(given) or len(velocity_field) != len(given):
        raise InputError(
            f"{len(given)} names but {len(message.position)} positions and {len(velocity_field)} velocities"
        )
    missing = [name for name in names if name not in given]
    if missing:
        raise InputError(f"missing {what} joints {missing}, got {given}")
    where = [given.index(name) for name in names]
    position = np.array([message.position[i] for i in where], dtype=float)
    velocity = np.array([velocity_field[i] for i in where], dtype=float)
    bad = [name for name, p, v in zip(names, position, velocity) if not (math.isfinite(p) and math.isfinite(v))]
    if bad:
        raise InputError(f"non-finite position or velocity of {bad}")
    return position, velocity


def command_message(tau: np.ndarray, names: tuple[str, ...], tag: int) -> Float64MultiArray:
    """Float64MultiArray of the torques ``tau`` (n_a,), joint names in ``layout.dim[0].label``, tagged ``tag``."""
    message = Float64MultiArray()
    message.layout.dim = [MultiArrayDimension(label=joint_label(names), size=len(names), stride=len(names))]
    message.layout.data_offset = int(tag)
    message.data = [float(v) for v in tau]
    return message


class CommandBuffer:
    """One command message built once and refilled per state: :func:`command_message`'s fields without a new
    message, layout or list per answer (the 1 kHz path allocates nothing it can keep).

    ``message.data`` is an ``array('d')`` of ``len(names)`` values written in place through a numpy view;
    a caller that keeps a published message must copy it (the next :meth:`fill` overwrites it).
    """

    def __init__(self, names: tuple[str, ...]) -> None:
        self.message = Float64MultiArray()
        self.message.layout.dim = [MultiArrayDimension(label=joint_label(names), size=len(names), stride=len(names))]
        self.message.data = array.array("d", bytes(8 * len(names)))
        self._values = np.frombuffer(self.message.data, dtype=float)  # a view: writes land in the message

    def fill(self, tau, tag: int) -> Float64MultiArray:
        """The message holding the torques ``tau`` (n_a,) tagged ``tag`` (the same object every call)."""
        self._values[:] = tau
        self.message.layout.data_offset = int(tag)
        return self.message


class JointStateBuffer:
    """One ``JointState`` built once and refilled per state (the sim's 1 kHz publish), as :class:`CommandBuffer`.

    ``names`` are set once; each of ``fields`` (``position``, ``velocity``, ``effort``) is an ``array('d')`` of
    ``len(names)`` values written in place through a numpy view; :meth:`fill` sets the stamp's two integers.
    A new message per state cost ~80 us of Python in the sim (its header, stamp, name list and the field
    setters' conversion of lists). A caller that keeps a published message must copy it.
    """

    def __init__(self, names, fields: tuple[str, ...] = ("position", "velocity", "effort")) -> None:
        self.message = JointState()
        self.message.name = list(names)
        self._views = {}
        for field in fields:
            setattr(self.message, field, array.array("d", bytes(8 * len(names))))
            self._views[field] = np.frombuffer(getattr(self.message, field), dtype=float)

    def fill(self, stamp_ns: int, **values) -> JointState:
        """The message stamped ``stamp_ns`` (>= 0) holding ``values`` (field name -> (len(names),)): the same object."""
        stamp = self.message.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(stamp_ns), NANOSECONDS)
        for field, value in values.items():
            self._views[field][:] = value
        return self.message


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
