"""Run a control law on a plant at a fixed rate and record what the robot publishes.

One control period ``T = 1 / rate_hz``, sample ``k`` at ``t_k = k T``:

1. the plant's state at ``t_k`` goes through the measurement model (quantized
   encoders of the measured joints; the torque applied over the previous
   period, with noise): this is sample ``k`` of the recording, as the ``sim``
   node publishes it on ``joint_states``;
2. the law computes the torque from the measured positions of the joints it
   reads (``law.joints``: the actuated joints, or actuated + sensed passive
   joints for the extended CTC) and their filtered backward difference
   (:class:`~pardyn.control.differentiator.FilteredDifferentiator`), with the
   internal-stress projection of eq. (50) on actuation-redundant robots for
   the laws that do not already give minimum-norm torques
   (``law.minimum_norm``), saturated at the actuator limits;
3. the plant holds that torque over ``[t_k, t_k + T]``.

Deterministic for a given measurement seed: this is the in-process twin of the
``sim`` + ``controller`` nodes, for tests, benchmarks and identification runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.control import ControlLaw, JointReference, saturate
from pardyn.control.differentiator import FilteredDifferentiator
from pardyn.control.redundancy import InternalStressProjection
from pardyn.errors import InputError
from pardyn.plants import Plant
from pardyn.plants.measurement import MeasurementModel
from pardyn.progress import progress

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["Recording", "run_closed_loop"]


@dataclass(frozen=True)
class Recording:
    """What a run published, and the truth behind it.

    Attributes:
        robot: robot name.
        t: sample times (N,) (s).
        names: measured joint names (n_m,): actuated, then sensed passive joints.
        position: quantized measured positions (N, n_m) (rad, m).
        effort: measured actuator torques (N, n_a) (N m, N), ``robot.actuated_names`` order:
            the torque applied over the period that ends at ``t``, with noise.
        q: true tree configuration (N, nv); tau: true applied torques (N, n_a);
        reference: actuated joint references (N, n_a) (the actuated part of the law's reference).
    """

    robot: str
    t: np.ndarray
    names: tuple[str, ...]
    actuated: tuple[str, ...]
    position: np.ndarray
    effort: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    reference: np.ndarray

    def tracking_error(self) -> np.ndarray:
        """Max |q_ref - q| per actuated joint over the run (n_a,) (rad, m), true positions."""
        return np.abs(self.reference - self.position[:, : len(self.actuated)]).max(axis=0)

    def write_bag(self, path: Path | str, *, storage: str = "mcap") -> Path:
        """Write ``joint_states`` as a rosbag2 bag: measured joints, efforts (0 for sensed passive joints)."""
        from pardyn.bags.joint_states import write_joint_states  # noqa: PLC0415 - rosbags only when writing

        effort = np.zeros_like(self.position)
        effort[:, : len(self.actuated)] = self.effort
        return write_joint_states(path, self.t, self.names, self.position, effort=effort, storage=storage)


def run_closed_loop(
    robot: Robot,
    plant: Plant,
    law: ControlLaw,
    reference: Callable[[float], JointReference],
    *,
    duration_s: float,
    start: np.ndarray,
    measurement: MeasurementModel,
    rate_hz: float = 1000.0,
    velocity_cutoff_hz: float = 50.0,
    project_internal_stress: bool = True,
    label: str | None = None,
) -> Recording:
    """Run ``law`` on ``plant`` for ``duration_s`` at ``rate_hz`` and record it.

    Args:
        robot: the robot (the law and the plant belong to it).
        plant: the simulated robot, reset here to ``start``.
        law: the control law; it reads the measured joints ``law.joints`` (the
            actuated joints when empty), which the measurement must contain.
        reference: ``reference(t)`` gives the reference over ``law.joints`` at ``t`` (s),
            e.g. a :class:`pardyn.trajectories.joint.SampledReference` of the actuated
            joints, or a :class:`pardyn.control.computed_torque.MeasuredReference`
            of it for the extended CTC.
        duration_s: run length (s); ``round(duration_s * rate_hz) + 1`` samples.
        start: closed configuration to start from, at rest (nv,).
        measurement: encoders and torque noise (reset here).
        velocity_cutoff_hz: first-order low-pass of the velocity estimate (Hz).
        project_internal_stress: apply eq. (50) on actuation-redundant robots
            (never to a law with ``minimum_norm``: its torques have no internal stress).
        label: progress display label (none when ``None``).
    """
    if measurement.names[: len(robot.actuated_names)] != tuple(robot.actuated_names):
        raise InputError(f"the measurement must start with the actuated joints {list(robot.actuated_names)}")
    period = 1.0 / rate_hz
    count = int(round(duration_s * rate_hz)) + 1
    n_a = len(robot.actuated_names)
    n_m = len(measurement.names)
    joints = tuple(law.joints) if law.joints else tuple(robot.actuated_names)
    missing = [name for name in joints if name not in measurement.names]
    if missing:
        raise InputError(f"the law reads joints {missing} that the measurement {list(measurement.names)} lacks")
    read = np.array([measurement.names.index(name) for name in joints], dtype=int)
    t = np.arange(count) * period
    position = np.empty((count, n_m))
    effort = np.empty((count, n_a))
    q = np.empty((count, robot.nv))
    tau = np.empty((count, n_a))
    references = np.empty((count, n_a))
    projection = InternalStressProjection(robot) if project_internal_stress and not law.minimum_norm else None
    differentiator = FilteredDifferentiator(len(joints), period_s=period, cutoff_hz=velocity_cutoff_hz)
    state = plant.reset(start)
    measurement.reset()
    first = measurement.measure(state)
    differentiator.reset(first.positions[read])
    steps = range(count) if label is None else progress(range(count), total=count, label=label)
    for k in steps:
        sample = first if k == 0 else measurement.measure(state)
        position[k], effort[k], q[k], tau[k] = sample.positions, sample.torques, state.q, state.tau
        actuated = sample.positions[:n_a]
        readings = sample.positions[read]
        target = reference(t[k])
        references[k] = np.asarray(target.position)[:n_a]  # law.joints start with the actuated joints
        command = law.torques(readings, differentiator.update(readings), target)
        if projection is not None:
            sensed = sample.positions[n_a:] if n_m > n_a else None
            command = saturate(projection(actuated, command, sensed=sensed), law.limits)
        state = plant.step(command, period)
    return Recording(
        robot=robot.name, t=t, names=tuple(measurement.names), actuated=tuple(robot.actuated_names),
        position=position, effort=effort, q=q, tau=tau, reference=references,
    )
