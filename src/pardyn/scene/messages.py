"""A :class:`~pardyn.scene.geometry.SceneFrame` as ROS messages: ``visualization_msgs/MarkerArray`` and
``tf2_msgs/TFMessage``, built and serialized (CDR) with the ``rosbags`` typestore.

One implementation for both ends: the ``visualizer`` node publishes the serialized MarkerArray as it is
(rclpy publishes CDR bytes), the recorder writes both into bags. ``tf2_msgs`` has no Python wheel, so ``/tf``
only exists in bags, serialized here; the bag stores its definition (the typestore's), which Foxglove decodes.

Markers (all in the robot's base frame, ``header.frame_id``; one ``ns`` each, so RViz and Foxglove can hide them):

* ``bodies``: one per body, its ellipsoid of inertia (``SPHERE`` scaled) or its mesh (``MESH_RESOURCE``),
  coloured by the configuration's singularity (:func:`pardyn.scene.geometry.singularity_colour`);
* ``platform``: an ``ARROW`` whose pose is the effector frame's (the platform; its x axis);
* ``skeleton``: a ``LINE_LIST`` of the tree, joint to joint;
* ``closing links``: a ``LINE_LIST`` of the closing links (orange);
* ``closures``: a ``SPHERE_LIST`` of the closure frames, green when the loops are closed (residual below
  :data:`CLOSED_RESIDUAL`), red when not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rosbags.typesys.store import Typestore

from pardyn.scene.geometry import SceneFrame, singularity_colour

__all__ = ["CLOSED_RESIDUAL", "MARKERS_TYPE", "TF_TYPE", "marker_array", "message", "serialize", "tf_message",
           "transform_matrix"]

MARKERS_TYPE = "visualization_msgs/msg/MarkerArray"
TF_TYPE = "tf2_msgs/msg/TFMessage"
CLOSED_RESIDUAL = 1e-6
"""Closure residual (m, rad) below which the loops are drawn closed."""

_SPHERE, _ARROW, _LINE_LIST, _SPHERE_LIST, _MESH = 2, 0, 5, 7, 10
_LINE_WIDTH_M = 0.004


def message(typestore: Typestore, msgtype: str, **values: Any) -> Any:
    """A typestore message of ``msgtype``, its fields ``values``, every other field zero or empty."""
    _, fields = typestore.fielddefs[msgtype]
    kwargs = {}
    for name, (kind, detail) in fields:
        if name in values:
            kwargs[name] = values[name]
        elif kind == 2:  # a nested message
            kwargs[name] = message(typestore, detail)
        elif kind == 1:  # a base type
            base = detail[0]
            kwargs[name] = "" if base == "string" else False if base == "bool" else 0.0 if base.startswith(
                "float") else 0
        else:  # sequences and arrays
            inner = detail[0]
            kwargs[name] = (np.zeros(0, dtype=np.uint8) if inner[0] == 1 and inner[1][0] == "uint8" else [])
    return typestore.types[msgtype](**kwargs)


def _stamp(typestore: Typestore, stamp_ns: int) -> Any:
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    return message(typestore, "builtin_interfaces/msg/Time", sec=sec, nanosec=nanosec)


def _header(typestore: Typestore, stamp_ns: int, frame_id: str) -> Any:
    return message(typestore, "std_msgs/msg/Header", stamp=_stamp(typestore, stamp_ns), frame_id=frame_id)


def _quaternion(rotation: np.ndarray) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation matrix (3, 3), w >= 0."""
    import pinocchio as pin  # noqa: PLC0415 - the scene needs it anyway

    coefficients = pin.Quaternion(np.asarray(rotation)).coeffs()  # x, y, z, w
    if coefficients[3] < 0:
        coefficients = -coefficients
    return tuple(float(c) for c in coefficients)


def _pose(typestore: Typestore, matrix: np.ndarray) -> Any:
    x, y, z, w = _quaternion(matrix[:3, :3])
    return message(
        typestore, "geometry_msgs/msg/Pose",
        position=message(typestore, "geometry_msgs/msg/Point", x=float(matrix[0, 3]), y=float(matrix[1, 3]),
                         z=float(matrix[2, 3])),
        orientation=message(typestore, "geometry_msgs/msg/Quaternion", x=x, y=y, z=z, w=w),
    )


def transform_matrix(translation: Any, rotation: Any) -> np.ndarray:
    """(4, 4) of a message's translation/position (``x, y, z``) and quaternion (``x, y, z, w``)."""
    import pinocchio as pin  # noqa: PLC0415

    matrix = np.eye(4)
    matrix[:3, :3] = pin.Quaternion(rotation.w, rotation.x, rotation.y, rotation.z).normalized().matrix()
    matrix[:3, 3] = (translation.x, translation.y, translation.z)
    return matrix


def _vector(typestore: Typestore, values) -> Any:
    x, y, z = (float(v) for v in values)
    return message(typestore, "geometry_msgs/msg/Vector3", x=x, y=y, z=z)


def _colour(typestore: Typestore, rgb, alpha: float = 1.0) -> Any:
    r, g, b = (float(c) for c in rgb)
    return message(typestore, "std_msgs/msg/ColorRGBA", r=r, g=g, b=b, a=float(alpha))


def _points(typestore: Typestore, points: np.ndarray) -> list:
    return [message(typestore, "geometry_msgs/msg/Point", x=float(p[0]), y=float(p[1]), z=float(p[2]))
            for p in np.asarray(points).reshape(-1, 3)]


def marker_array(typestore: Typestore, frame: SceneFrame, *, stamp_ns: int, frame_id: str) -> Any:
    """The ``visualization_msgs/MarkerArray`` of ``frame`` (module docstring), stamped ``stamp_ns``."""
    header = _header(typestore, stamp_ns, frame_id)
    identity = np.eye(4)
    markers = []

    def marker(ns: str, index: int, kind: int, pose: np.ndarray, scale, colour, **extra) -> None:
        markers.append(message(typestore, "visualization_msgs/msg/Marker", header=header, ns=ns, id=index,
                               type=kind, pose=_pose(typestore, pose), scale=_vector(typestore, scale),
                               color=colour, **extra))

    body_colour = _colour(typestore, singularity_colour(frame.singularity), 0.85)
    for index, (shape, pose) in enumerate(frame.shapes):
        if shape.kind == "mesh":
            marker("bodies", index, _MESH, pose, shape.size, body_colour, mesh_resource=f"file://{shape.mesh}")
        else:
            marker("bodies", index, _SPHERE, pose, shape.size, body_colour)
    marker("platform", 0, _ARROW, frame.platform, (0.06, 0.008, 0.008), _colour(typestore, (0.1, 0.1, 0.1)))
    if len(frame.skeleton):
        marker("skeleton", 0, _LINE_LIST, identity, (_LINE_WIDTH_M, 0, 0), _colour(typestore, (0.35, 0.35, 0.35)),
               points=_points(typestore, frame.skeleton))
    if len(frame.closing):
        marker("closing links", 0, _LINE_LIST, identity, (1.5 * _LINE_WIDTH_M, 0, 0),
               _colour(typestore, (1.0, 0.55, 0.0)), points=_points(typestore, frame.closing))
    if len(frame.closure_points):
        closed = frame.residual < CLOSED_RESIDUAL
        marker("closures", 0, _SPHERE_LIST, identity, (0.012, 0.012, 0.012),
               _colour(typestore, (0.1, 0.7, 0.2) if closed else (0.9, 0.05, 0.05)),
               points=_points(typestore, frame.closure_points))
    return message(typestore, MARKERS_TYPE, markers=markers)


def tf_message(typestore: Typestore, frame: SceneFrame, *, stamp_ns: int, frame_id: str) -> Any:
    """The ``tf2_msgs/TFMessage`` of ``frame``: every moving link's pose in ``frame_id`` (the base)."""
    header = _header(typestore, stamp_ns, frame_id)
    transforms = []
    for name, matrix in frame.links.items():
        pose = _pose(typestore, matrix)
        translation = _vector(typestore, (pose.position.x, pose.position.y, pose.position.z))
        transform = message(typestore, "geometry_msgs/msg/Transform", translation=translation,
                            rotation=pose.orientation)
        transforms.append(message(typestore, "geometry_msgs/msg/TransformStamped", header=header,
                                  child_frame_id=name, transform=transform))
    return message(typestore, TF_TYPE, transforms=transforms)


def serialize(typestore: Typestore, msg: Any) -> bytes:
    """The CDR bytes (little endian, with the encapsulation header) of a typestore message."""
    return bytes(typestore.serialize_cdr(msg, msg.__msgtype__))
