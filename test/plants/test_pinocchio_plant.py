"""PinocchioPlant: pardyn's forward dynamics behind the Plant interface, cross-checked with MuJoCo.

The two plants share nothing but the dynamic parameters they are given: MuJoCo closes
the loops with stiff equality constraints and its own RK4, pardyn with the
reduced (projected) equations, RK4 and a projection. Under the same torque
history (1 ms zero-order hold; a PD hold around home computed from the
PinocchioPlant's state plus sinusoids, replayed identically on MuJoCo) their
joint trajectories over 0.5 s agree to 1e-8 rad for dualv and five_bar
[measured 1.3e-10, 1.1e-11] and 2e-7 rad for rrr3 [1.0e-8; MuJoCo runs it open
loop, and the 3-RRR under gravity is unstable without feedback]. Coulomb
friction is left out of that comparison (MuJoCo's frictionloss has stiction,
eq. (5) has not; see test_mujoco_plant.py::test_coulomb_friction_matches_eq5).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError
from pardyn.plants.mujoco_plant import MujocoPlant
from pardyn.plants.payload import Payload
from pardyn.plants.pinocchio_plant import PinocchioPlant

PERIOD = 1e-3  # s


def without_coulomb(params: DynamicParameters) -> DynamicParameters:
    return params.with_values({f"fs_{drive.joint}": 0.0 for drive in params.drives})


def hold_torques(robot: pardyn.Robot, q: np.ndarray, params: DynamicParameters | None = None) -> np.ndarray:
    """Least-norm actuator torques balancing gravity and drive offsets at rest: ``W_a^T tau_a = W^T (g + tau_off)``."""
    params = robot.nominal_parameters if params is None else params
    model = params.apply(robot.model.copy())
    velocity_map = robot.differential.task_velocity_map(q)
    gravity = pin.computeGeneralizedGravity(model, model.createData(), q) + params.offset_vector()
    return np.linalg.lstsq(velocity_map[robot.actuated_indices].T, velocity_map.T @ gravity, rcond=None)[0]


def run_both(robot: pardyn.Robot, first, second, duration: float, *, amplitude: float = 2.0) -> np.ndarray:
    """Drive two plants with the same torques (PD on ``first``'s state + sinusoids); max |q1 - q2| per period."""
    a = robot.actuated_indices
    hold = hold_torques(robot, robot.home)
    frequencies = 1.0 + 0.37 * np.arange(len(a))
    state = first.state()
    errors = []
    for k in range(int(round(duration / PERIOD))):
        tau = (hold + amplitude * np.sin(2 * np.pi * frequencies * k * PERIOD)
               - 100.0 * (state.q[a] - robot.home[a]) - 4.0 * state.qdot[a])
        state = first.step(tau, PERIOD)
        other = second.step(tau, PERIOD)
        np.testing.assert_array_equal(state.tau, other.tau)
        errors.append(np.abs(state.q - other.q).max())
    return np.array(errors)


@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar"])
def test_agrees_with_mujoco_plant(name):
    robot = pardyn.load_robot(name)
    params = without_coulomb(robot.nominal_parameters)  # dualv keeps rotor inertia and viscous friction
    pinocchio_plant, mujoco_plant = PinocchioPlant(robot, params), MujocoPlant(robot, params)
    errors = run_both(robot, pinocchio_plant, mujoco_plant, 0.5)
    assert np.abs(pinocchio_plant.state().q - robot.home).max() > 0.02  # it moved [0.04-0.1]
    assert pinocchio_plant.state().time == pytest.approx(mujoco_plant.state().time, abs=1e-12)
    assert errors.max() < (2e-7 if name == "rrr3" else 1e-8)


def test_registry_plants_agree_on_a_machine_with_counterweights():
    """wu3r: the registry's pinocchio plant (the sim node's) adds the counterweights' offsets ``-m_c g``, MuJoCo has them as bodies."""
    from pardyn.plants.registry import make_plant  # noqa: PLC0415

    robot = pardyn.load_robot("wu3r")
    params = without_coulomb(robot.nominal_parameters)
    offsets = params.offset_vector()
    assert np.abs(offsets).max() == pytest.approx(495.0 * 9.81)  # N, the 495 kg counterweights
    pinocchio_plant = make_plant(robot, "pinocchio", params)
    errors = run_both(robot, pinocchio_plant, make_plant(robot, "mujoco", params), 0.3, amplitude=200.0)
    assert np.abs(pinocchio_plant.state().q - robot.home).max() > 1e-3  # it moved
    assert errors.max() < 1e-7
    # without the offsets the sliders fall behind the counterweights' pull
    no_offsets = params.with_values({f"offset_{drive.joint}": 0.0 for drive in params.drives})
    assert run_both(robot, make_plant(robot, "pinocchio", no_offsets), make_plant(robot, "mujoco", params), 0.3,
                    amplitude=200.0).max() > 1e-3


def test_payload_agrees_with_mujoco_plant():
    """An off-centre payload on the DualV platform, in both engines."""
    robot = pardyn.load_robot("dualv")
    params = without_coulomb(robot.nominal_parameters)
    payload = Payload(1.2, np.array([0.03, -0.05, 0.0]), np.diag([1e-3, 1e-3, 2e-3]))
    loaded = PinocchioPlant(robot, params, payload=payload)
    errors = run_both(robot, loaded, MujocoPlant(robot, params, payload=payload), 0.3)
    assert errors.max() < 1e-8
    bare = run_both(robot, PinocchioPlant(robot, params), MujocoPlant(robot, params, payload=payload), 0.3)
    assert bare.max() > 1e-4  # the payload changes the motion
    # the robot's own model is untouched
    assert robot.model.inertias[robot.model.getJointId("platform_phi")].mass == pytest.approx(1.92)


def test_state_stays_closed_and_steps_hold_torques():
    robot = pardyn.load_robot("rrr3")
    plant = PinocchioPlant(robot)
    tau = hold_torques(robot, robot.home) + np.array([0.5, -0.3, 0.2])
    for _ in range(5):
        state = plant.step(tau, PERIOD)
    assert state.time == pytest.approx(5 * PERIOD)
    np.testing.assert_array_equal(state.tau, tau)
    residual, jacobian = robot.closures.residual_and_jacobian(state.q)
    assert np.abs(residual).max() < 1e-12
    assert np.abs(jacobian @ state.qdot).max() < 1e-12
    # one 5 ms hold = five 1 ms holds of the same torque (zero-order hold, 1 ms RK4 steps)
    other = PinocchioPlant(robot)
    np.testing.assert_allclose(other.step(tau, 5 * PERIOD).q, state.q, atol=1e-12)


def test_reset_projects_and_validates():
    robot = pardyn.load_robot("five_bar")
    plant = PinocchioPlant(robot)
    q = robot.home.copy()
    q[0] += 1e-6
    state = plant.reset(q, np.ones(robot.nv))
    assert np.abs(robot.closures.residual(state.q)).max() < 1e-12
    assert np.abs(robot.closures.jacobian(state.q) @ state.qdot).max() < 1e-10
    assert state.time == 0.0
    with pytest.raises(InputError):
        plant.step(np.zeros(3), PERIOD)
    with pytest.raises(InputError):
        plant.step(np.zeros(2), -1.0)
    with pytest.raises(InputError):
        PinocchioPlant(robot, timestep=0.0)
    with pytest.raises(InputError, match="payload"):
        PinocchioPlant(robot, payload=Payload(1.0, frame="no_such_frame"))
