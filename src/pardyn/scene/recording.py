"""A recorded motion to replay in the 3D view: configurations, torques and identification residuals against time.

:func:`recording_from_bag` reads a bag's ``joint_states`` (the actuated joints, the sensed ones when present),
solves the loops at the view's frame rate (warm-started forward kinematics) and keeps the efforts;
:func:`recording_from_demo` takes a run of a ``pardyn demo`` output and adds the identification residuals:
the measured torques minus those the identified model (``result.json``) predicts on that run, as
:func:`pardyn.identification.validation.validate` computes them for the report (low-passed at the decimation
cut-off, eq. 40 of the DualV paper).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pardyn.errors import InputError
from pardyn.progress import progress
from pardyn.robot import Robot

__all__ = ["FRAME_RATE_HZ", "Recording", "demo_robot", "recording_from_bag", "recording_from_demo"]

FRAME_RATE_HZ = 30.0
"""Configurations solved per second of recording (the replay's frames)."""


@dataclass(frozen=True)
class Recording:
    """A motion to replay.

    Attributes:
        name: what it is (the bag's name).
        start_s: the recording's first stamp (s): time 0 of ``t``.
        t: (n,) s from the start: the frames.
        q: (n, nv) the solved configurations.
        torque_t: (N,) s; torque: (N, n_a) the recorded efforts (N m, N), ``joints`` their names.
        residual_t: (M,) s; residual: (M, n_a) measured minus identified-model torques, or None.
        residual_note: how the residuals were obtained (or why there are none).
        relative_error: ``||measured - predicted|| / ||measured||`` of the residuals, or None.
    """

    name: str
    start_s: float
    t: np.ndarray
    q: np.ndarray
    joints: tuple[str, ...]
    torque_t: np.ndarray
    torque: np.ndarray
    residual_t: np.ndarray | None = None
    residual: np.ndarray | None = None
    residual_note: str = ""
    relative_error: float | None = None

    def frame_at(self, time_s: float) -> int:
        """Index of the frame shown at ``time_s`` (the last one at or before it)."""
        return int(np.clip(np.searchsorted(self.t, time_s, side="right") - 1, 0, len(self.t) - 1))


def recording_from_bag(robot: Robot, bag: Path | str, *, rate_hz: float = FRAME_RATE_HZ) -> Recording:
    """The motion of ``bag``'s ``joint_states`` (module docstring).

    Raises:
        BagError: no readable joint_states; InputError: it does not carry the robot's actuated joints.
    """
    from pardyn.bags.joint_states import read_joint_states  # noqa: PLC0415

    series = read_joint_states(bag, drop_resent=True, period_tolerance=None)
    names = list(series.names)
    missing = [name for name in robot.actuated_names if name not in names]
    if missing:
        raise InputError(f"{bag}: joint_states lacks {missing} of robot {robot.name} (it has {names}); "
                         f"give the robot with --robot")
    actuated = [names.index(name) for name in robot.actuated_names]
    sensed = [names.index(name) for name in robot.sensed_names if name in names]
    t = series.t - series.t[0]
    grid = np.arange(0.0, t[-1] + 1e-9, 1.0 / rate_hz)  # the frames' times; each shows the last sample by then
    frames = np.unique((np.searchsorted(t, grid + 1e-9, side="right") - 1).clip(0, len(t) - 1))
    q, configurations = robot.home, []
    for k in progress(frames, total=len(frames), label=f"{Path(bag).name}: solving {len(frames)} frames"):
        position = series.position[k]
        q = robot.solve_forward(position[actuated], sensed=position[sensed] if len(sensed) == len(
            robot.sensed_names) and sensed else None, start=q).q
        configurations.append(q)
    effort = series.effort if series.effort is not None else np.full((len(t), len(names)), np.nan)
    return Recording(Path(bag).name, float(series.t[0]), t[frames], np.array(configurations), tuple(robot.actuated_names), t,
                     np.asarray(effort)[:, actuated])


def demo_robot(out_dir: Path) -> str:
    """The robot of a ``pardyn demo`` output (its ``result.json``, else its kinematics summary)."""
    for name in ("result.json", "kinematics/summary.json"):
        path = out_dir / name
        if path.is_file():
            return json.loads(path.read_text())["robot"]
    raise InputError(f"{out_dir}: not a pardyn demo output (no result.json nor kinematics/summary.json)")


def recording_from_demo(robot: Robot, out_dir: Path, run: str = "validation") -> Recording:
    """Run ``run`` of a demo output (``bags/<run>``), with the identification residuals when it has ``result.json``."""
    bag = out_dir / "bags" / run
    if not bag.exists():
        runs = sorted(p.name for p in (out_dir / "bags").iterdir()) if (out_dir / "bags").is_dir() else []
        raise InputError(f"{out_dir}: no run {run!r} (runs: {runs or 'none: a --kinematics-only demo?'})")
    recording = recording_from_bag(robot, bag)
    result = out_dir / "result.json"
    if not result.is_file():
        return recording
    from dataclasses import replace  # noqa: PLC0415

    from pardyn.dynamics.inverse import InverseDynamics  # noqa: PLC0415
    from pardyn.dynamics.parameters import read_parameter_file  # noqa: PLC0415
    from pardyn.dynamics.regressor import Regressor  # noqa: PLC0415
    from pardyn.identification.settings import IdentificationSettings  # noqa: PLC0415
    from pardyn.identification.validation import validate  # noqa: PLC0415

    identified = read_parameter_file(result, robot)  # identified with the payload: the robot carrying it
    if run != "loaded":
        identified = identified.without_payload()  # the demo's other runs are of the bare robot
    validation = validate(robot, bag, IdentificationSettings(), InverseDynamics(robot, identified),
                          InverseDynamics(robot), Regressor(robot))
    return replace(recording, residual_t=np.asarray(validation.t) - recording.start_s, relative_error=float(
                   validation.relative_error_norm),
                   residual=validation.measured - validation.predicted,
                   residual_note=f"measured - identified model ({result.name}), relative error "
                                 f"{100 * validation.relative_error_norm:.2f} %")
