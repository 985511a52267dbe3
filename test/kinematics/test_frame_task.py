"""Task coordinates from a frame give the same answers as the virtual chain they replace.

The DualV's platform hangs on a virtual chain (platform_x, platform_y,
platform_phi); the same robot described with ``task: {frame: platform,
coordinates: [x, y, rz]}`` reads its task from the platform frame instead
(the chain's joints become ordinary passive joints). Both descriptions must
agree on the inverse and forward problems, the velocity and acceleration maps
and the inverse dynamics; the frame-task maps are also checked against finite
differences of the frame pose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

import pardyn
from pardyn.dynamics import InverseDynamics
from pardyn.resources import robots_directory


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    raw = yaml.safe_load((robots_directory() / "dualv.yaml").read_text())
    raw["urdf"] = str((robots_directory() / "dualv.yaml").parent.parent.parent / "urdf" / "dualv.urdf")
    raw["task"] = {"frame": "platform", "coordinates": ["x", "y", "rz"]}
    raw["home"]["task"] = {"x": 0.0, "y": 0.0, "rz": 0.0}
    raw.pop("analytic", None)
    raw.pop("excitation", None)  # given per task coordinate of the virtual chain
    path = Path(tmp_path_factory.mktemp("frame_task")) / "dualv_frame.yaml"
    path.write_text(yaml.safe_dump(raw))
    return pardyn.load_robot("dualv"), pardyn.load_robot(path)


def test_same_inverse_and_forward_problems(pair):
    chain, frame = pair
    assert frame.frame_task is not None and frame.task_names == ("x", "y", "rz")
    rng = np.random.default_rng(4)
    for _ in range(20):
        task = rng.uniform([-0.05, -0.05, -0.2], [0.05, 0.05, 0.2])
        ours, theirs = frame.solve_inverse(task).q, chain.solve_inverse(task).q
        assert np.abs(ours - theirs).max() < 1e-10
        assert np.abs(frame.task_values(ours) - task).max() < 1e-10
        forward = frame.solve_forward(ours[frame.actuated_indices], start=frame.home)
        assert np.abs(forward.q - theirs).max() < 1e-10


def test_same_maps_and_inverse_dynamics(pair):
    chain, frame = pair
    rng = np.random.default_rng(5)
    dynamics_chain, dynamics_frame = InverseDynamics(chain), InverseDynamics(frame)
    for _ in range(10):
        q = chain.solve_inverse(rng.uniform(-0.04, 0.04, 3)).q
        velocity, acceleration = rng.uniform(-0.5, 0.5, 3), rng.uniform(-2.0, 2.0, 3)
        w_chain, qdot_chain, qddot_chain = chain.differential.task_states(q, velocity, acceleration)
        w_frame, qdot_frame, qddot_frame = frame.differential.task_states(q, velocity, acceleration)
        assert np.abs(w_chain - w_frame).max() < 1e-9
        assert np.abs(qddot_chain - qddot_frame).max() < 1e-8
        assert np.abs(
            dynamics_chain.torques_from_task(q, velocity, acceleration)
            - dynamics_frame.torques_from_task(q, velocity, acceleration)
        ).max() < 1e-8


def test_frame_task_maps_against_finite_differences(pair):
    _, robot = pair
    model, data = robot.model, robot.model.createData()
    assert np.abs(robot.task_values(robot.home)).max() < 1e-12  # home task (0, 0, 0) from the YAML
    frame_id = model.getFrameId("platform")
    q = robot.solve_inverse([0.02, -0.01, 0.1]).q
    velocity, acceleration = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -2.0])
    _, qdot, qddot = robot.differential.task_states(q, velocity, acceleration)

    def pose(x):
        pin.framesForwardKinematics(model, data, x)
        placement = data.oMf[frame_id]
        return np.array([*placement.translation[:2], pin.log3(placement.rotation)[2]])

    h = 1e-6
    # first order: d pose / dt along qdot = task velocity
    rate = (pose(pin.integrate(model, q, qdot * h)) - pose(pin.integrate(model, q, -qdot * h))) / (2 * h)
    assert np.abs(rate - velocity).max() < 1e-7
    # second order along the motion q(t) = q + qdot t + qddot t^2 / 2
    def at(t):
        return pose(q + qdot * t + 0.5 * qddot * t * t)

    h = 1e-4
    second = (at(h) - 2 * at(0.0) + at(-h)) / h**2
    assert np.abs(second - acceleration).max() < 1e-4
