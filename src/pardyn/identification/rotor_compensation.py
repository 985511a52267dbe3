"""Rotor dynamics compensation of recorded torques, and rotor inertias by an augmented regressor.

UR5e paper, sections 2 and 3.1. A drive with two encoders (link side ``q``,
motor side ``theta`` reflected through the gear ratio) reports the
current-based torque ``K_tau i``; the torque that reaches the link is

    tau_J = K_tau i - B thetaddot - tau_f(thetadot, tau_J, T)                 # eq. (2) solved for tau_J

computed from the motor-side encoder (:meth:`pardyn.dynamics.rotor.RotorModel.joint_torque`).
The link model is then identified on ``tau_J`` instead of ``K_tau i`` (the
pipeline's ``rotor_model`` setting, CLI ``pardyn identify --rotor-compensation``),
keeping a residual Coulomb + viscous term per joint in the link regressor.

Bags: ``joint_states`` carries the link positions and the current-based torque
(effort, N m); the motor topic (``motor_states`` by default) a second
``sensor_msgs/JointState`` with the rotor positions reflected to the link side
(position, rad) and the same current-based torque (effort). Rotor rates come
from the same zero-phase Butterworth + central differences as the link's
(section 4.1), with a wider band (see :func:`compensate_bag_torques`).

Rotor inertias "could be easily estimated by augmenting the regressor with the
angular acceleration of the rotors" (section 3.1): :func:`augment_with_rotor_inertia`
appends one column per joint, ``thetaddot_j`` on row ``j``, to an observation
matrix, for a right-hand side compensated for friction only
(``joint_torque(..., inertia=False)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.bags.joint_states import read_joint_states
from pardyn.dynamics.rotor import RotorModel
from pardyn.errors import InputError
from pardyn.identification.filtering import estimate_derivatives

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["MOTOR_TOPIC", "augment_with_rotor_inertia", "compensate_bag_torques", "motor_rates"]

MOTOR_TOPIC = "motor_states"
"""Default topic of the motor-side JointState (rotor positions reflected, current-based torque)."""


def motor_rates(
    bag: Path | str, robot: Robot, *, topic: str = MOTOR_TOPIC, cutoff_hz: float, order: int = 4
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(t, theta, thetadot, thetaddot)`` of a bag's motor topic: (N,), (N, n) x 3, actuated order.

    Same band-pass estimate as the link side (zero-phase Butterworth of ``order``
    at ``cutoff_hz``, central differences).
    """
    series = read_joint_states(bag, topic, drop_resent=True)
    theta = series.position[:, series.columns(robot.actuated_names)]
    derivatives = estimate_derivatives(series.t, theta, cutoff_hz=cutoff_hz, order=order)
    return series.t, derivatives.q, derivatives.qdot, derivatives.qddot


def compensate_bag_torques(
    bag: Path | str,
    robot: Robot,
    t: np.ndarray,
    motor_torque: np.ndarray,
    model: RotorModel,
    *,
    topic: str = MOTOR_TOPIC,
    cutoff_hz: float,
    order: int = 4,
    delay_s: float = 0.0,
    temperature_c: np.ndarray | float | None = None,
) -> np.ndarray:
    """Link-side torques ``tau_J`` (N, n_a) from the recorded current-based torques ``K_tau i`` (N, n_a).

    Applied sample by sample at the recording rate, *before* any low-pass: the
    friction is a nonlinear function of the velocity (its sign flips at every
    reversal), so it must be evaluated on the instantaneous rotor velocity, not
    on a velocity band-limited to the dynamics' bandwidth (on the UR5e
    experiment's data this is the difference between ~1.5 N m and ~0.03 N m RMS
    of compensation error). ``cutoff_hz`` is therefore the *wide* band of the
    rotor rates (the pipeline uses its decimation cut-off); the compensated
    torques are low-passed afterwards with everything else.

    Args:
        t: stamps of the efforts (N,), s (the link topic's; the motor topic is interpolated).
        motor_torque: ``K_tau i`` (N, n_a) as recorded.
        delay_s: age of the efforts: the effort stamped ``t`` is the torque at ``t - delay_s``
            (see :class:`pardyn.identification.settings.DataSettings.effort_delay_s`);
            the rotor rates are taken at that time.

    Raises:
        InputError: the rotor model's joints are not the robot's actuated joints, or the
            motor topic does not cover ``t``.
    """
    if tuple(model.joints) != tuple(robot.actuated_names):
        raise InputError(f"rotor model joints {list(model.joints)} differ from the actuated {list(robot.actuated_names)}")
    motor_t, _, velocity, acceleration = motor_rates(bag, robot, topic=topic, cutoff_hz=cutoff_hz, order=order)
    if t[0] < motor_t[0] - 1e-9 or t[-1] > motor_t[-1] + 1e-9:
        raise InputError(
            f"{bag}: topic {topic} covers [{motor_t[0]:.6f}, {motor_t[-1]:.6f}] s, the link topic "
            f"[{t[0]:.6f}, {t[-1]:.6f}] s: the rotor compensation needs both over the same time"
        )
    when = np.asarray(t, dtype=float) - delay_s
    if delay_s or motor_t.shape != when.shape or not np.allclose(motor_t, when, rtol=0.0, atol=1e-9):
        velocity = np.column_stack([np.interp(when, motor_t, column) for column in velocity.T])
        acceleration = np.column_stack([np.interp(when, motor_t, column) for column in acceleration.T])
    return model.joint_torque(motor_torque, velocity, acceleration, temperature_c=temperature_c)


def augment_with_rotor_inertia(
    observation: np.ndarray, theta_ddot: np.ndarray, names: Sequence[str], joints: Sequence[str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Observation matrix with a rotor-inertia column per joint (section 3.1).

    Args:
        observation: ``Y`` (N, n, p), one row per joint (standard model of a serial robot).
        theta_ddot: rotor accelerations (N, n), rad/s^2.
        names: the p parameter names; joints: the n joint names (row order).

    Returns:
        ``[Y, diag(thetaddot)]`` (N, n, p + n) and the names with ``B_<joint>`` appended.
    """
    observation = np.asarray(observation, dtype=float)
    theta_ddot = np.asarray(theta_ddot, dtype=float)
    count, rows, size = observation.shape
    if theta_ddot.shape != (count, rows) or len(joints) != rows or len(names) != size:
        raise InputError(
            f"augment_with_rotor_inertia: Y {observation.shape}, thetaddot {theta_ddot.shape}, "
            f"{len(names)} names and {len(joints)} joints do not match"
        )
    columns = np.zeros((count, rows, rows))
    columns[:, np.arange(rows), np.arange(rows)] = theta_ddot
    return np.concatenate([observation, columns], axis=2), (*names, *(f"B_{joint}" for joint in joints))
