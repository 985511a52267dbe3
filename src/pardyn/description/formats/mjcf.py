"""``mjcf``: one MuJoCo XML file (a ``<mujoco>`` root): its joints, its ``<equality>`` closures, its springs and
its fixed-tendon actuators (:mod:`pardyn.description.mjcf`, needs ``mujoco``); also what a pardyn YAML around an
MJCF tree takes from it."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from pardyn.description.config import CLOSURE_TYPES, COMPONENT_NAMES, Closure, RobotDescription, coupling
from pardyn.description.formats.protocol import FORMATS, NoOptions, tree_file
from pardyn.errors import DescriptionError

__all__ = ["Mjcf", "mjcf_closures", "tendon_transmission"]


def mjcf_closures(robot) -> tuple[Closure, ...]:
    """The closures of an MJCF's ``<equality>`` section (``connect``: 3D, ``weld``: 6D), from its
    :class:`~pardyn.description.mjcf.MjcfRobot`."""
    return tuple(
        coupling(c.name, c.frame_a, c.frame_b, *c.coefficients) if c.type == "coupling" else
        Closure(name=c.name, frames=(c.frame_a, c.frame_b), type=c.type,
                components=tuple(COMPONENT_NAMES.index(k) for k in CLOSURE_TYPES[c.type]))
        for c in robot.closures
    )


def tendon_transmission(robot, actuated=None, *, source: Path | None = None):
    """The fixed-tendon actuators of an MJCF as a :class:`~pardyn.dynamics.transmission.Transmission` (motor: the
    tendon's length, ``theta = ratio (q_a - q_0)``); joint motors keep ratio 1. None without tendon actuators.

    ``actuated``: the joints of a pardyn YAML around the MJCF (default: the MJCF's own); a tendon whose driving
    joint is not among them is left out, said once (``source``: that YAML).
    """
    actuated = tuple(robot.actuated if actuated is None else actuated)
    unused = [(actuator, joint) for actuator, joint, _, _ in robot.tendon_drives if joint not in actuated]
    if unused and source is not None:
        warnings.warn(f"{source}: actuated: {list(actuated)} leaves out the joints that the MJCF's tendon actuators "
                      f"drive {[joint for _, joint in unused]} (actuators {[a for a, _ in unused]}): their "
                      "transmissions are not used", stacklevel=4)
    drives = {joint: (actuator, ratio, constant) for actuator, joint, ratio, constant in robot.tendon_drives
              if joint in actuated}
    if not drives:
        return None
    from pardyn.dynamics.transmission import Transmission  # noqa: PLC0415

    motors = [drives[j][0] if j in drives else j for j in actuated]
    ratio = np.diag([drives[j][1] if j in drives else 1.0 for j in actuated])
    offset = np.array([-drives[j][2] / drives[j][1] if j in drives else 0.0 for j in actuated])
    return Transmission(tuple(motors), actuated, ratio, offset)


@FORMATS.plugin
class Mjcf:
    name = "mjcf"
    Options = NoOptions

    def accepts(self, path: Path) -> bool:
        return tree_file(path, "mjcf")

    def load(self, path: Path, options: NoOptions) -> RobotDescription:
        from pardyn.description.mjcf import read_mjcf  # noqa: PLC0415 - needs mujoco

        robot = read_mjcf(path)
        closures = mjcf_closures(robot)
        if not robot.actuated:
            raise DescriptionError(f"{path}: <actuator>: no motor drives a joint; pardyn needs the actuated joints")
        return RobotDescription(
            name=path.stem,
            source=path,
            urdf=path,
            task_names=tuple(robot.actuated),
            task_joints=tuple(robot.actuated),
            actuated=tuple(robot.actuated),
            sensed=(),
            closures=closures,
            working_mode=(),
            assembly_mode=(),
            home_task=(),
            home_joints={},
            tree_format="mjcf",
            springs=robot.springs,
            transmissions=tendon_transmission(robot),
            home_task_given=False,
            description_format="mjcf",
        )
