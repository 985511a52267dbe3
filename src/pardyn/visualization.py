"""Drawings of planar robots with matplotlib (used by the demo and the reports)."""

from __future__ import annotations

import numpy as np

from pardyn.robot import Robot

__all__ = ["draw_planar_robot"]


def draw_planar_robot(axes, robot: Robot, q: np.ndarray, *, color: str = "C0", alpha: float = 1.0) -> None:
    """Draw the legs (A_i - B_i - tip) and the platform's attachment points at ``q`` in the xy plane (m)."""
    legs = sorted({name.split("_")[0] for name in robot.joint_names if name.startswith("leg")})
    frames = [f"{leg}_{point}" for leg in legs for point in ("A", "B", "tip")]
    platform = [frame.name for frame in robot.model.frames if frame.name.startswith("platform_c")]
    positions = robot.closures.frame_positions(q, frames + platform + ["platform"])
    for leg in legs:
        chain = np.array([positions[f"{leg}_{point}"][:2] for point in ("A", "B", "tip")])
        axes.plot(chain[:, 0], chain[:, 1], "-o", color=color, alpha=alpha, markersize=3, linewidth=1.5)
        axes.plot(*chain[0], "ks", markersize=5, alpha=alpha)
    if platform:
        outline = np.array([positions[name][:2] for name in platform] + [positions[platform[0]][:2]])
        axes.plot(outline[:, 0], outline[:, 1], "-", color="C3", alpha=alpha, linewidth=2.5)
    axes.plot(*positions["platform"][:2], "+", color="C3", alpha=alpha, markersize=8)
    axes.set_aspect("equal")
    axes.set_xlabel("x (m)")
    axes.set_ylabel("y (m)")
