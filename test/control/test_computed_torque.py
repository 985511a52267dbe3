"""Computed torque control: on the exact model the errors follow the chosen linear dynamics.

Reference (independent of the law): the closed form of the critically damped
error dynamics ``e'' + 2 w e' + w^2 e = 0`` from rest (Vivas et al. 2003,
eqs. 36-37), ``e(t) = e0 (1 + w t) exp(-w t)``, against pardyn's constrained
forward dynamics (RK4, dt = 1 ms, with the law evaluated at every stage: a
continuous-time law) with the same parameters as the law's model.

Tolerances: on a non-redundant coordinate set (rrr3 actuated joints, any task
space) feedback linearization is exact, the error is RK4's (< 1e-8 rad). With
more coordinates than degrees of freedom (the DualV's 4 actuated joints, the
rrr3's 6 measured joints) a commanded ``v`` only acts through its least-squares
consistent part (eq. 24): the error stays on the closed manifold and departs
from the linear closed form at second order in ``e0`` (measured: 3e-3 |e0|
for a 2 cm / 20 mrad initial pose error): tolerance 1e-2 |e0|.
"""

from __future__ import annotations


import numpy as np
import pytest

import pardyn
from pardyn.control import JointReference
from pardyn.control.computed_torque import ComputedTorque, ExtendedComputedTorque, MeasuredReference
from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.inverse import null_space_projector
from pardyn.errors import InputError
from pardyn.simulation.runner import run_closed_loop
from pardyn.plants.measurement import MeasurementModel
from pardyn.plants.pinocchio_plant import PinocchioPlant

OMEGA = 20.0  # rad/s
DURATION = 0.4  # s, 8 / OMEGA
POSE_ERROR = np.array([0.02, -0.01, 0.02])  # m, m, rad


def decay(robot, law, indices, reference_indices):
    """Simulate the law holding home from a pose error; the error over ``reference_indices`` and its closed form."""
    home = robot.home
    start = robot.solve_inverse(home[robot.task_indices] + POSE_ERROR, start=home).q
    target = JointReference.hold(home[indices])
    trajectory = simulate(
        ForwardDynamics(robot),
        lambda t, q, qdot: law.torques(q[indices], qdot[indices], target),
        start, np.zeros(robot.nv), duration=DURATION, dt=1e-3,
    )
    error = home[reference_indices] - trajectory.q[:, reference_indices]
    expected = error[0] * ((1.0 + OMEGA * trajectory.t) * np.exp(-OMEGA * trajectory.t))[:, None]
    return error, expected


def test_actuated_ctc_on_the_3rrr_with_gravity_gives_the_critically_damped_error():
    robot = pardyn.load_robot("rrr3")
    law = ComputedTorque(robot, kp=OMEGA**2, kd=2 * OMEGA, limits=[1e6])
    # gravity is in play: holding home needs torque
    assert np.max(np.abs(law.torques(robot.home[robot.actuated_indices], np.zeros(3),
                                     JointReference.hold(robot.home[robot.actuated_indices])))) > 0.1
    error, expected = decay(robot, law, robot.actuated_indices, robot.actuated_indices)
    assert np.max(np.abs(error[0])) > 0.01
    np.testing.assert_allclose(error, expected, rtol=0, atol=1e-8)


def test_actuated_ctc_on_the_redundant_dualv_gives_the_critically_damped_error_without_internal_stress():
    robot = pardyn.load_robot("dualv")
    law = ComputedTorque(robot, kp=OMEGA**2, kd=2 * OMEGA, limits=[1e6])
    error, expected = decay(robot, law, robot.actuated_indices, robot.actuated_indices)
    np.testing.assert_allclose(error, expected, rtol=0, atol=1e-2 * np.max(np.abs(error[0])))
    # minimum norm: no component in the null space of J^T (eq. 50 would not change it)
    q = robot.solve_inverse(robot.home[robot.task_indices] + POSE_ERROR, start=robot.home).q
    tau = law.torques(q[robot.actuated_indices], np.zeros(4), JointReference.hold(robot.home[robot.actuated_indices]))
    jacobian = robot.differential.task_velocity_map(q)[robot.actuated_indices]
    assert np.linalg.norm(null_space_projector(jacobian) @ tau) < 1e-9 * np.linalg.norm(tau)
    assert law.minimum_norm


def test_task_space_ctc_gives_the_critically_damped_task_error():
    robot = pardyn.load_robot("dualv")
    law = ComputedTorque(robot, kp=OMEGA**2, kd=2 * OMEGA, space="task", limits=[1e6])
    error, expected = decay(robot, law, robot.actuated_indices, robot.task_indices)
    np.testing.assert_allclose(error[0], -POSE_ERROR, rtol=0, atol=1e-12)
    np.testing.assert_allclose(error, expected, rtol=0, atol=1e-8)


def test_extended_ctc_on_the_3rrr_gives_the_critically_damped_measured_error():
    robot = pardyn.load_robot("rrr3")
    law = ExtendedComputedTorque(robot, kp=OMEGA**2, kd=2 * OMEGA, limits=[1e6])
    assert law.joints == tuple(robot.measured_names) and len(law.joints) == 6
    error, expected = decay(robot, law, robot.measured_indices, robot.measured_indices)
    np.testing.assert_allclose(error, expected, rtol=0, atol=1e-2 * np.max(np.abs(error[0])))


def test_extended_ctc_needs_sensed_joints():
    with pytest.raises(InputError, match="sensed"):
        ExtendedComputedTorque(pardyn.load_robot("dualv"), kp=1.0, kd=1.0)
    with pytest.raises(InputError, match="kp"):
        ExtendedComputedTorque(pardyn.load_robot("rrr3"), kp=[1.0, 2.0], kd=1.0)


def test_measured_reference_closes_the_loops():
    robot = pardyn.load_robot("rrr3")
    q = robot.solve_inverse(robot.home[robot.task_indices] + POSE_ERROR, start=robot.home).q
    xdot, xddot = np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -2.0])
    _, qdot, qddot = robot.differential.task_states(q, xdot, xddot)
    a, m = robot.actuated_indices, robot.measured_indices
    lifted = MeasuredReference(robot)(JointReference(q[a], qdot[a], qddot[a]))
    np.testing.assert_allclose(lifted.position, q[m], atol=1e-10)
    np.testing.assert_allclose(lifted.velocity, qdot[m], atol=1e-10)
    np.testing.assert_allclose(lifted.acceleration, qddot[m], atol=1e-9)


def test_run_closed_loop_feeds_the_extended_ctc_its_sensed_joints():
    robot = pardyn.load_robot("rrr3")
    law = ExtendedComputedTorque(robot, kp=OMEGA**2, kd=2 * OMEGA, limits=[1e6])
    lift = MeasuredReference(robot)
    target = JointReference.hold(robot.home[robot.actuated_indices])
    start = robot.solve_inverse(robot.home[robot.task_indices] + POSE_ERROR, start=robot.home).q
    recording = run_closed_loop(
        robot, PinocchioPlant(robot), law, lambda t: lift(target), duration_s=0.5, start=start,
        measurement=MeasurementModel(robot, torque_noise=0.0, torque_noise_floor=0.0), velocity_cutoff_hz=200.0,
    )
    initial = np.max(np.abs(recording.position[0, :3] - target.position))
    final = np.max(np.abs(recording.position[-1, :3] - target.position))
    assert recording.reference.shape == (recording.t.size, 3)
    assert initial > 0.01 and final < 1e-2 * initial  # closed form: (1 + 10) exp(-10) = 5e-4 of e0 at 0.5 s


def test_ctc_tracks_the_redundant_wu_machine_in_mujoco_without_internal_stress():
    """wu3r (prismatic actuators, counterweights as real MuJoCo bodies): actuated CTC with the nominal
    model tracks a 0.6 s rest-to-rest motion with encoder quantization and torque noise; its forces have
    no internal stress (the eq. 50 projection, computed independently, leaves them unchanged)."""
    from pardyn.control.redundancy import InternalStressProjection  # noqa: PLC0415
    from pardyn.plants.mujoco_plant import MujocoPlant  # noqa: PLC0415
    from pardyn.trajectories import PointToPoint, joint_trajectory  # noqa: PLC0415

    robot = pardyn.load_robot("wu3r")
    start = robot.home[robot.task_indices]
    samples = joint_trajectory(robot, PointToPoint(start, start + [0.08, -0.1, 0.2], duration_s=0.6), rate_hz=1000.0)
    law = ComputedTorque(robot, kp=OMEGA**2, kd=2 * OMEGA)
    recording = run_closed_loop(robot, MujocoPlant(robot), law, samples.select(robot.actuated_indices),
                                duration_s=0.7, start=samples.q[0], measurement=MeasurementModel(robot))
    actuated = recording.q[:, robot.actuated_indices]
    desired = np.array([samples.select(robot.actuated_indices)(t).position for t in recording.t])
    assert np.abs(desired[-1] - desired[0]).max() > 0.05  # m: a real motion
    # [measured 5.9e-4 m: the 50 Hz velocity filter lags ~3 ms behind accelerations of ~2 m/s^2]
    assert np.abs(desired - actuated).max() < 2e-3
    projection = InternalStressProjection(robot, method="newton")  # the law closes the loops by Newton too
    for k in range(1, len(recording.t), 100):
        tau = recording.tau[k]  # the command computed at sample k - 1, applied since
        measured = recording.position[k - 1, :4]  # what the law read (encoders)
        np.testing.assert_allclose(projection(measured, tau), tau, rtol=0, atol=1e-6 * np.abs(tau).max())
