"""The recursive estimator (pardyn.identification.online) on the DualV's exact closed-loop model.

Reference: the torques of the robot's own inverse dynamics (minimum-norm, eq. 26) along an
exciting motion with the platform's true parameters, the 5.37 kg payload fixed to the platform
halfway through; the windowed least squares must follow the regrouped platform mass ``m_platformR``
(``m_platform + 3.57 sum mx_leg_link2 + m_payload``) to the new value.
"""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.parameters import read_parameter_file, write_parameter_file
from pardyn.errors import InputError
from pardyn.excitation.bounds import excitation_settings
from pardyn.identification.online import OnlineIdentifier, check_estimate_file
from pardyn.excitation.design import design_exciting_trajectory
from pardyn.trajectories.joint import joint_trajectory

RATE = 200.0
PAYLOAD = 5.37


@pytest.fixture(scope="module")
def dualv_stream(load):
    robot = load("dualv")
    design = design_exciting_trajectory(robot, duration_s=8.0, candidates=1, seed=3, **excitation_settings("dualv").design_options())
    samples = joint_trajectory(robot, design.trajectory, rate_hz=RATE)
    nominal = robot.nominal_parameters
    half = len(samples.times) // 2
    unloaded = InverseDynamics(robot, nominal).torques_batch(samples.q[:half], samples.qdot[:half], samples.qddot[:half])
    loaded_params = nominal.with_values({"m_payload": PAYLOAD})
    loaded = InverseDynamics(robot, loaded_params).torques_batch(samples.q[half:], samples.qdot[half:],
                                                                 samples.qddot[half:])
    torques = np.vstack([unloaded, loaded])
    # published as the sim node does: the effort stamped t is the torque held over the period before t
    held = np.vstack([torques[:1], 0.5 * (torques[1:] + torques[:-1])])
    return robot, samples, held, half


def test_online_estimate_follows_the_payload_within_five_percent(dualv_stream, tmp_path):
    robot, samples, torques, half = dualv_stream
    identifier = OnlineIdentifier(robot, rate_hz=RATE, decimation=2, window=6, window_s=2.0, solve_every=5)
    index = identifier.names.index("m_platformR")
    values = robot.nominal_parameters.as_dict()
    before = identifier.base.from_standard(np.array([values[n] for n in identifier.base.standard_names]))[index]
    history = []
    out = tmp_path / "estimate.json"
    for k, (t, q, tau) in enumerate(zip(samples.times, samples.q[:, robot.measured_indices], torques)):
        if identifier.add(t, q, tau):
            history.append((identifier.t, identifier.estimate().chi[index]))
        if k == 100:  # 0.5 s: the 2 s window is not full, nothing may be written
            with pytest.raises(InputError, match=r"not well conditioned \(no estimate yet"):
                identifier.save(out)
            assert not out.exists()
    t, mass = np.array(history).T
    payload_time = samples.times[half]
    assert abs(mass[t < payload_time][-1] - before) < 0.05 * PAYLOAD
    # within 5 % of the payload mass of the loaded value once the 2 s window holds loaded data only
    settled = t >= payload_time + 2.0 + 6 / RATE
    worst = np.abs(mass[settled] - (before + PAYLOAD)).max()
    assert worst < 0.05 * PAYLOAD, (worst, t[settled][np.argmax(np.abs(mass[settled] - before - PAYLOAD))])
    assert identifier.well_conditioned()
    with pytest.raises(InputError, match="expected 4 positions and 4 efforts"):
        identifier.add(0.0, np.zeros(3), np.zeros(4))


def test_saved_estimate_is_the_loaded_robot_and_carries_its_conditioning(dualv_stream, tmp_path):
    """The hand-off file: its model gives the loaded robot's torques; the controller's check reads it."""
    robot, samples, torques, half = dualv_stream
    identifier = OnlineIdentifier(robot, rate_hz=RATE, decimation=2, window=6, window_s=2.0, solve_every=5)
    for t, q, tau in zip(samples.times, samples.q[:, robot.measured_indices], torques):
        identifier.add(t, q, tau)
    out = tmp_path / "estimate.json"
    estimate = identifier.save(out)
    saved = read_parameter_file(out, robot)
    loaded = robot.nominal_parameters.with_values({"m_payload": PAYLOAD})
    tail = slice(len(samples.times) - 200, None)  # the last second: the estimate's window
    expected = InverseDynamics(robot, loaded).torques_batch(samples.q[tail], samples.qdot[tail], samples.qddot[tail])
    got = InverseDynamics(robot, saved).torques_batch(samples.q[tail], samples.qdot[tail], samples.qddot[tail])
    assert np.linalg.norm(got - expected) < 0.02 * np.linalg.norm(expected)
    entry = check_estimate_file(out, max_condition=1e4)
    assert entry["condition"] == pytest.approx(estimate.condition) and 1.0 < entry["condition"] < 1e4
    with pytest.raises(InputError, match="ill-conditioned"):
        check_estimate_file(out, max_condition=0.5 * estimate.condition)
    with pytest.raises(InputError, match="no estimate available"):
        check_estimate_file(tmp_path / "absent.json", max_condition=1e4)
    batch = tmp_path / "batch.json"  # a `pardyn identify` result: no online entry, nothing to check
    write_parameter_file(batch, loaded)
    assert check_estimate_file(batch, max_condition=1e4) == {}


def test_a_detected_change_restarts_the_window(dualv_stream):
    """With change detection the estimate is the loaded robot's min_window_s after the payload, not window_s."""
    robot, samples, torques, half = dualv_stream
    identifier = OnlineIdentifier(robot, rate_hz=RATE, decimation=2, window=6, window_s=3.0, solve_every=5,
                                  min_window_s=0.75, change_threshold=20.0, change_holdoff_s=0.1)
    index = identifier.names.index("m_platformR")
    values = robot.nominal_parameters.as_dict()
    before = identifier.base.from_standard(np.array([values[n] for n in identifier.base.standard_names]))[index]
    history = []
    for t, q, tau in zip(samples.times, samples.q[:, robot.measured_indices], torques):
        if identifier.add(t, q, tau):
            history.append((identifier.t, identifier.estimate().chi[index], identifier.well_conditioned()))
    t, mass, ready = np.array(history).T
    payload_time = samples.times[half]
    assert len(identifier.changes) == 1 and abs(identifier.changes[0] - payload_time) < 0.1, identifier.changes
    assert abs(mass[t < payload_time][-1] - before) < 0.05 * PAYLOAD
    # no estimate of a mixed window is well conditioned; 0.1 + 0.75 s after the change the loaded robot's
    assert not np.any(ready[(t >= payload_time) & (t < payload_time + 0.85)])
    settled = t >= payload_time + 0.85 + 6 / RATE
    assert ready[settled].all()
    assert np.abs(mass[settled] - (before + PAYLOAD)).max() < 0.05 * PAYLOAD
