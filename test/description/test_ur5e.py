"""The UR5e: a serial robot (no closures) through the closed-loop engine, and its base parameters."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from pardyn import load_robot
from pardyn.description.config import parse_description
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.errors import DescriptionError
from pardyn.experiments.ur5e_calibration import base_parameter_counts


@pytest.fixture(scope="module")
def ur5e():
    return load_robot("ur5e")


def _dh_flange(q: np.ndarray) -> np.ndarray:
    """Flange pose from Universal Robots' published standard DH table (hand-written, independent of the URDF)."""
    d = (0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996)
    a = (0.0, -0.425, -0.3922, 0.0, 0.0, 0.0)
    alpha = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
    pose = np.eye(4)
    for qi, di, ai, al in zip(q, d, a, alpha):
        ct, st, ca, sa = math.cos(qi), math.sin(qi), math.cos(al), math.sin(al)
        pose = pose @ np.array([[ct, -st * ca, st * sa, ai * ct], [st, ct * ca, -ct * sa, ai * st],
                                [0.0, sa, ca, di], [0.0, 0.0, 0.0, 1.0]])
    return pose


def test_urdf_matches_the_published_dh_parameters(ur5e):
    data = ur5e.model.createData()
    frame = ur5e.model.getFrameId("tool0")
    rng = np.random.default_rng(3)
    for q in [np.zeros(6), *rng.uniform(-math.pi, math.pi, (5, 6))]:
        pin.framesForwardKinematics(ur5e.model, data, q)
        np.testing.assert_allclose(data.oMf[frame].homogeneous, _dh_flange(q), atol=1e-12)
    # UR's zero configuration: x = a2 + a3, y = -(d4 + d6), z = d1 - d5
    pin.framesForwardKinematics(ur5e.model, data, np.zeros(6))
    np.testing.assert_allclose(data.oMf[frame].translation, [-0.8172, -0.2329, 0.0628], atol=1e-12)


def test_serial_robot_is_the_trivial_case_of_the_engine(ur5e):
    """No closures: the task coordinates are the joints, W = I, torques = pinocchio's RNEA."""
    assert ur5e.closures.size == 0
    q = np.array([0.3, -1.2, 1.1, -0.7, 0.4, 0.9])
    np.testing.assert_allclose(ur5e.solve_forward(q).q, q, rtol=0.0, atol=1e-14)  # one Newton step from home
    np.testing.assert_allclose(ur5e.solve_inverse(q).q, q, rtol=0.0, atol=1e-14)
    np.testing.assert_array_equal(ur5e.differential.task_velocity_map(q), np.eye(6))
    qdot, qddot = np.linspace(-1.0, 1.0, 6), np.linspace(2.0, -2.0, 6)
    model = ur5e.model.copy()
    expected = pin.rnea(model, model.createData(), q, qdot, qddot)
    np.testing.assert_allclose(InverseDynamics(ur5e).torques(q, qdot, qddot), expected, rtol=1e-12, atol=1e-12)


def test_serial_robot_task_must_be_its_actuated_joints(tmp_path, ur5e):
    raw = {"name": "bad", "urdf": str(ur5e.description.urdf), "task": {"q1": "shoulder_pan_joint"},
           "actuated": ["shoulder_lift_joint"]}
    with pytest.raises(DescriptionError, match="serial robot"):
        parse_description(raw, source=tmp_path / "bad.yaml")


def test_base_parameter_counts_36_vertical_38_tilted(ur5e):
    """The UR5e paper's counts (section 3, eq. 10 of its ref. [23]: b = 7 n_r + 4 n_p - 4 beta_1 - 2 beta_2).

    Counted numerically (QR on random states) over the *link inertial* parameters only:
    10 standard parameters per link (xx xy xz yy yz zz mx my mz m), 60 in all, as the
    paper's Table 2 / eq. (10) -- no friction, no rotor inertia. Base axis along gravity:
    6 * 7 - 4 - 2 = 36; tilted (gravity not along joint 1, future-work point 1): 38 (the
    shoulder link's two horizontal first moments become identifiable). With the drive
    columns of the link regressor (ia, fv, fs, offset per joint) the numerics give 58
    (vertical): ia of joints 1 and 2 regroup with the link inertias about their axes.
    """
    vertical = base_parameter_counts(ur5e)
    assert vertical["inertial"] == 7 * 6 - 4 - 2 == 36
    assert vertical["with_drives"] == 36 + 4 + 6 + 6 + 6
    tilt = 0.3
    tilted = base_parameter_counts(ur5e, gravity=9.81 * np.array([0.0, -math.sin(tilt), -math.cos(tilt)]))
    assert tilted["inertial"] == 7 * 6 - 4 == 38
    gained = set(n.removesuffix("R") for n in tilted["inertial_names"]) - set(
        n.removesuffix("R") for n in vertical["inertial_names"])
    assert gained == {"mx_shoulder_link", "mz_shoulder_link"}  # first moments normal to the joint-1 axis (y1)
