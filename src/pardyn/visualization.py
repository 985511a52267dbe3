"""Drawings of robots with matplotlib: planar ones in the plane, spatial ones in 3D (PNG, animated GIF)."""

from __future__ import annotations

import numpy as np

from pardyn.robot import Robot

__all__ = ["animation", "draw_planar_robot", "draw_spatial_robot", "effector_position", "plane_axes", "poses_figure",
           "skeleton"]


def effector_position(robot: Robot, q: np.ndarray) -> np.ndarray:
    """Position (3,) m of what the task moves at ``q``: :attr:`~pardyn.robot.Robot.effector_frame`'s origin."""
    import pinocchio as pin  # noqa: PLC0415

    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(robot.effector_frame)].translation.copy()


def plane_axes(robot: Robot, joints: np.ndarray) -> tuple[int, int] | None:
    """The two world axes a planar robot moves in over the poses ``joints`` (samples, nv), or None if spatial.

    Planar: every skeleton point of every pose (:func:`skeleton`) has the same coordinate along one axis
    (to 1e-9 of the drawing's size).
    """
    points = np.array([p for q in joints for segment in skeleton(robot, q) for p in segment]
                      + [effector_position(robot, q) for q in joints])
    span = points.max(axis=0) - points.min(axis=0)
    flat = int(np.argmin(span))
    if span[flat] > 1e-9 * max(float(span.max()), 1e-9):
        return None
    return tuple(axis for axis in range(3) if axis != flat)  # type: ignore[return-value]


def draw_planar_robot(axes, robot: Robot, q: np.ndarray, *, color: str = "C0", alpha: float = 1.0,
                      plane: tuple[int, int] = (0, 1)) -> None:
    """Draw the tree's skeleton (:func:`skeleton`, frames from the model) at ``q`` in its plane (m): the joints
    as dots, the task point as a cross; ``plane``: the two world axes drawn (:func:`plane_axes`)."""
    a, b = plane
    for segment in skeleton(robot, q):
        axes.plot(segment[:, a], segment[:, b], "-o", color=color, alpha=alpha, markersize=3, linewidth=1.5)
    point = effector_position(robot, q)
    axes.plot(point[a], point[b], "+", color="C3", alpha=alpha, markersize=8)
    axes.set_aspect("equal")
    axes.set_xlabel(f"{'xyz'[a]} (m)")
    axes.set_ylabel(f"{'xyz'[b]} (m)")


# ------------------------------------------------------------------------------- spatial robots
def skeleton(robot: Robot, q: np.ndarray) -> list[np.ndarray]:
    """Segments (2, 3) of m drawing the tree at ``q``: joint to child joint, joint to its markers.

    Every joint's origin is joined to its parent joint's origin (the base's joints to the world
    origin: the base spokes), and every marker frame to its joint's origin; the joints of the
    task's virtual chain are skipped (they are not bodies of the robot).
    """
    import pinocchio as pin  # noqa: PLC0415

    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, q)
    virtual = set()  # the task joints and their ancestors: the virtual chain
    for joint in robot.virtual_joints:
        while joint != 0:
            virtual.add(joint)
            joint = model.parents[joint]
    segments = []
    for j in range(1, model.njoints):
        if j in virtual:
            continue
        start = data.oMi[model.parents[j]].translation if model.parents[j] not in virtual else None
        end = data.oMi[j].translation
        if start is not None and np.linalg.norm(end - start) > 1e-9:
            segments.append(np.array([start, end]))
    for frame, placement in zip(model.frames, data.oMf):
        if frame.type == pin.FrameType.OP_FRAME or (frame.type == pin.FrameType.BODY and frame.parentJoint != 0):
            origin = data.oMi[frame.parentJoint].translation
            if np.linalg.norm(placement.translation - origin) > 1e-9:
                segments.append(np.array([origin, placement.translation]))
    return segments


def draw_spatial_robot(axes, robot: Robot, q: np.ndarray, *, color: str = "C0", alpha: float = 1.0) -> list:
    """Draw the skeleton of :func:`skeleton` on 3D ``axes`` (matplotlib ``projection="3d"``); the artists."""
    artists = []
    for segment in skeleton(robot, q):
        artists += axes.plot(segment[:, 0], segment[:, 1], segment[:, 2], "-", color=color, alpha=alpha, linewidth=1.5)
    return artists


def _equal_box(axes, points: np.ndarray) -> None:
    centre = 0.5 * (points.max(axis=0) + points.min(axis=0))
    half = 0.55 * float(np.max(points.max(axis=0) - points.min(axis=0)))
    for setter, c in zip((axes.set_xlim, axes.set_ylim, axes.set_zlim), centre):
        setter(c - half, c + half)
    axes.set_xlabel("x (m)")
    axes.set_ylabel("y (m)")
    axes.set_zlabel("z (m)")


def poses_figure(robot: Robot, joints: np.ndarray, path, *, count: int = 5, title: str = "") -> None:
    """PNG of ``count`` poses (rows of ``joints`` (samples, nv)) drawn in 3D, fading from first to last."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure = plt.figure(figsize=(7, 6))
    axes = figure.add_subplot(projection="3d")
    picks = np.linspace(0, len(joints) - 1, count).astype(int)
    points = []
    for n, k in enumerate(picks):
        segments = skeleton(robot, joints[k])
        points += [p for s in segments for p in s]
        draw_spatial_robot(axes, robot, joints[k], color=f"C{n % 10}", alpha=0.35 + 0.65 * n / max(count - 1, 1))
    path_points = np.array([effector_position(robot, q) for q in joints])
    axes.plot(path_points[:, 0], path_points[:, 1], path_points[:, 2], "k--", linewidth=1, label="platform path")
    _equal_box(axes, np.array(points))
    axes.set_title(title or f"{robot.name}: {count} poses along the motion")
    axes.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def animation(robot: Robot, times: np.ndarray, joints: np.ndarray, path, *, frames: int = 60, fps: int = 20) -> None:
    """An animated GIF (Pillow, through matplotlib's writer) of the motion ``joints`` (samples, nv) at ``times`` (s).

    A GIF opens in any browser or image viewer, no ROS or viewer install: the reason for it.
    """
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.animation import FuncAnimation, PillowWriter  # noqa: PLC0415

    picks = np.linspace(0, len(joints) - 1, min(frames, len(joints))).astype(int)
    figure = plt.figure(figsize=(6, 5.5))
    axes = figure.add_subplot(projection="3d")
    points = np.array([p for k in picks[:: max(1, len(picks) // 8)] for s in skeleton(robot, joints[k]) for p in s])
    state = {"artists": []}

    def draw(n: int):
        for artist in state["artists"]:
            artist.remove()
        state["artists"] = draw_spatial_robot(axes, robot, joints[picks[n]])
        axes.set_title(f"{robot.name}  t = {times[picks[n]]:.3f} s")
        return state["artists"]

    _equal_box(axes, points)
    FuncAnimation(figure, draw, frames=len(picks), blit=False).save(str(path), writer=PillowWriter(fps=fps))
    plt.close(figure)
