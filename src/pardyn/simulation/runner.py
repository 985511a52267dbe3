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
   (``law.minimum_norm``), saturated at the actuator limits: the controller
   node's step (:class:`~pardyn.control.step.ControlStep`);
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

from pardyn.control import ControlLaw, JointReference
from pardyn.control.differentiator import FilteredDifferentiator
from pardyn.control.step import ControlStep
from pardyn.errors import InputError
from pardyn.plants import Plant
from pardyn.plants.measurement import MeasurementModel
from pardyn.progress import progress
from pardyn.trajectories.joint import SampledReference

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
        qdot: true tree velocities (N, nv).
        command: the torque commanded at ``t`` and held over ``[t, t + T]`` (N, n_a)
            (``tau`` of the next sample): with ``q``, ``qdot`` it gives the true ``qddot``.
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
    qdot: np.ndarray | None = None
    command: np.ndarray | None = None

    def tracking_error(self) -> np.ndarray:
        """Max |q_ref - q| per actuated joint over the run (n_a,) (rad, m), true positions."""
        return np.abs(self.reference - self.position[:, : len(self.actuated)]).max(axis=0)

    def write_bag(self, path: Path | str, *, storage: str = "mcap", reference: SampledReference | None = None) -> Path:
        """Write ``joint_states`` as a rosbag2 bag: measured joints, efforts (0 for sensed passive joints).

        With ``reference`` (the actuated reference the law tracked, time 0 = the first sample) the bag
        also holds it as the ``trajectory`` node publishes it: one ``reference/trajectory``
        (trajectory_msgs/msg/JointTrajectory) message stamped at the first sample, what IDIM-IV
        and DIDIM need to simulate the run (:mod:`pardyn.identification.model_simulation`).
        """
        from pardyn.bags.joint_states import joint_state_message, seconds_to_ns  # noqa: PLC0415 - rosbags
        from pardyn.bags.writer import BagWriter  # noqa: PLC0415

        effort = np.zeros_like(self.position)
        effort[:, : len(self.actuated)] = self.effort
        stamps = seconds_to_ns(self.t)
        with BagWriter(path, storage=storage, validate=False) as bag:
            bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
            if reference is not None:
                bag.add_topic(REFERENCE_TOPIC, "trajectory_msgs/msg/JointTrajectory")
                bag.write(REFERENCE_TOPIC, _trajectory_message(bag.typestore, reference, self.actuated,
                                                               int(stamps[0])))
            for k, stamp in enumerate(stamps):
                bag.write("/joint_states", joint_state_message(bag.typestore, int(stamp), self.names,
                                                               self.position[k], (), effort[k]))
        return Path(path)


REFERENCE_TOPIC = "/reference/trajectory"
"""The reference topic of the ``trajectory`` node (trajectory_msgs/msg/JointTrajectory)."""


def _trajectory_message(typestore, reference: SampledReference, names: tuple[str, ...], start_ns: int):
    """A typestore JointTrajectory of ``reference`` (k joints ``names``), header stamp ``start_ns``."""
    types = typestore.types
    seconds, nanoseconds = divmod(start_ns, 1_000_000_000)
    points = []
    for k, t in enumerate(reference.times):
        whole = int(round(float(t) * 1e9))
        points.append(types["trajectory_msgs/msg/JointTrajectoryPoint"](
            positions=reference.position[k].astype(np.float64), velocities=reference.velocity[k].astype(np.float64),
            accelerations=reference.acceleration[k].astype(np.float64), effort=np.zeros(0),
            time_from_start=types["builtin_interfaces/msg/Duration"](sec=whole // 1_000_000_000,
                                                                     nanosec=whole % 1_000_000_000)))
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=seconds, nanosec=nanoseconds), frame_id="")
    return types["trajectory_msgs/msg/JointTrajectory"](header=header, joint_names=list(names), points=points)


def _sensed_readings(robot: Robot, names: tuple[str, ...]) -> np.ndarray | None:
    """Where ``robot.sensed_names`` are in the measured ``names`` (n_s,), None unless all are measured."""
    if not all(name in names for name in robot.sensed_names):
        return None
    return np.array([names.index(name) for name in robot.sensed_names], dtype=int)


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
    on_sample: Callable[[float, np.ndarray, np.ndarray], None] | None = None,
    exact_configuration: bool = False,
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
        on_sample: called with ``(t, measured positions (n_m,), measured efforts (n_a,))`` after each
            sample is taken, before the law runs (an online estimator, events on the plant or the law).
        exact_configuration: the measurement is exact (a model's simulation): eq. (50) projects at the
            plant's configuration instead of the forward problem's fit to the readings (the same
            configuration to the solver's tolerance, without its cost).
    """
    if measurement.names[: len(robot.actuated_names)] != tuple(robot.actuated_names):
        raise InputError(f"the measurement must start with the actuated joints {list(robot.actuated_names)}")
    period = 1.0 / rate_hz
    count = int(round(duration_s * rate_hz)) + 1
    n_a = len(robot.actuated_names)
    n_m = len(measurement.names)
    step = ControlStep(robot, law, project_internal_stress=project_internal_stress)
    joints = step.joints
    missing = [name for name in joints if name not in measurement.names]
    if missing:
        raise InputError(f"the law reads joints {missing} that the measurement {list(measurement.names)} lacks")
    read = np.array([measurement.names.index(name) for name in joints], dtype=int)
    t = np.arange(count) * period
    position = np.empty((count, n_m))
    effort = np.empty((count, n_a))
    q = np.empty((count, robot.nv))
    qdot = np.empty((count, robot.nv))
    tau = np.empty((count, n_a))
    commands = np.empty((count, n_a))
    references = np.empty((count, n_a))
    sensed = _sensed_readings(robot, measurement.names) if step.reads_sensed else None
    differentiator = FilteredDifferentiator(len(joints), period_s=period, cutoff_hz=velocity_cutoff_hz)
    state = plant.reset(start)
    measurement.reset()
    first = measurement.measure(state)
    differentiator.reset(first.positions[read])
    steps = range(count) if label is None else progress(range(count), total=count, label=label)
    for k in steps:
        sample = first if k == 0 else measurement.measure(state)
        position[k], effort[k], q[k], qdot[k], tau[k] = sample.positions, sample.torques, state.q, state.qdot, state.tau
        if on_sample is not None:
            on_sample(float(t[k]), sample.positions, sample.torques)
        readings = sample.positions[read]
        target = reference(t[k])
        references[k] = np.asarray(target.position)[:n_a]  # law.joints start with the actuated joints
        command = step(readings, differentiator.update(readings), target,
                       sensed=None if sensed is None else sample.positions[sensed],
                       configuration=state.q if exact_configuration else None)
        state = plant.step(command, period)
        commands[k] = state.tau
    return Recording(
        robot=robot.name, t=t, names=tuple(measurement.names), actuated=tuple(robot.actuated_names),
        position=position, effort=effort, q=q, tau=tau, reference=references, qdot=qdot, command=commands,
    )
