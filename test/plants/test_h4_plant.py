"""The H4 in MuJoCo (an independent engine): spatial arms, distance-rod forearms, the
two half-bars of the nacelle with their rotation closure, Table 1 inertias.

References: pinocchio's frame placements (sites), pardyn's constrained forward
dynamics (RK4 1 ms + projection, itself tested against pinocchio's
``constraintDynamics`` and, for the H4, against the paper's eq. 13 in
test/dynamics/test_h4_dynamics.py), the robot's own closure equations.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.plants.mujoco_plant import MujocoPlant
from pardyn.plants.payload import Payload


@pytest.fixture(scope="module")
def h4():
    robot = pardyn.load_robot("h4")
    return robot


def test_sites_and_inertias(h4):
    plant = MujocoPlant(h4)
    q = h4.solve_inverse([0.02, -0.03, -0.38, 0.2]).q
    plant.reset(q)
    data = h4.model.createData()
    pin.framesForwardKinematics(h4.model, data, q)
    import mujoco

    for site in range(plant.model.nsite):
        frame = h4.model.getFrameId(mujoco.mj_id2name(plant.model, mujoco.mjtObj.mjOBJ_SITE, site))
        np.testing.assert_allclose(plant.data.site_xpos[site], data.oMf[frame].translation, atol=1e-12)
    armature = [plant.model.dof_armature[plant.model.jnt_dofadr[mujoco.mj_name2id(
        plant.model, mujoco.mjtObj.mjOBJ_JOINT, f"motor{i}")]] for i in range(1, 5)]
    np.testing.assert_allclose(armature, [0.0167, 0.0164, 0.0176, 0.0234])  # Table 1 I_mot


def test_agrees_with_forward_model_and_stays_closed(h4):
    """0.3 s under the gravity hold + 0.05 N m sinusoids: MuJoCo vs pardyn's forward model."""
    hold = InverseDynamics(h4).torques(h4.home, np.zeros(h4.nv), np.zeros(h4.nv))
    frequencies = 1.0 + 0.37 * np.arange(4)
    torque = lambda t: hold + 0.05 * np.sin(2 * np.pi * frequencies * t)  # noqa: E731
    plant = MujocoPlant(h4)
    dt, states, worst = plant.timestep, [plant.state().q], 0.0
    for k in range(int(round(0.3 / dt))):
        states.append(plant.step(torque((k + 0.5) * dt), dt).q)
        worst = max(worst, plant.closure_violation())
    mujoco_q = np.array(states)[::10]
    reference = simulate(ForwardDynamics(h4), lambda t, q, qdot: torque(t), h4.home, np.zeros(h4.nv),
                         duration=0.3, dt=1e-3)
    assert np.abs(reference.q[-1] - h4.home).max() > 1e-2  # a real motion (rad, m)
    assert np.abs(mujoco_q - reference.q).max() < 1e-6
    assert worst < 1e-8


def test_payload_weight_is_carried_by_the_motors(h4):
    """With a 4 kg load at D, eq. (13)'s static torques J^T M (-G) with M_nac + 4 kg hold the nacelle still."""
    jacobian = h4.analytic.jacobian(h4.home[h4.task_indices], h4.home[h4.actuated_indices])
    hold = jacobian.T @ np.array([0.0, 0.0, (0.984 + 4.0) * 9.81, 0.0])
    plant = MujocoPlant(h4, payload=Payload(4.0, frame="nacelle"))
    for _ in range(200):
        state = plant.step(hold, 1e-3)
    assert np.abs(state.q - h4.home).max() < 1e-6
