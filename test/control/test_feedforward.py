"""The DualV augmented PD (Briot et al. 2015, Fig. 4) against hand-derived references.

* gains: ``Kp = J w^2``, ``Kd = 2 xi J w`` with ``J`` the inertia seen by each
  drive computed here from the kinetic energy (pinocchio's CRBA of the tree,
  ``J_i = qdot^T M qdot`` for the least-squares motion of a unit speed of
  drive ``i``);
* the derivative filter: for an error ramp of slope ``r`` the filtered
  derivative is ``r (1 - exp(-2 pi f_c t_k))`` at the samples (the first-order
  low-pass step response), so with the feedforward off ``tau_k = Kp e_k + Kd r (1 - exp(-2 pi f_c t_k))``;
* the feedforward alone (zero error) equals the minimum-norm inverse dynamics
  of the reference written from its task-space motion (eqs. 9-10, 19/26).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.control import JointReference
from pardyn.control.feedforward import AugmentedPD
from pardyn.dynamics.inverse import InverseDynamics

BANDWIDTH_HZ = 70.0
PERIOD_S = 1e-3


@pytest.fixture(scope="module")
def dualv():
    return pardyn.load_robot("dualv")


def test_gains_are_the_drive_inertia_times_the_bandwidth(dualv):
    law = AugmentedPD(dualv, bandwidth_hz=BANDWIDTH_HZ, damping=0.7, period_s=PERIOD_S)
    model = dualv.nominal_parameters.apply(dualv.model.copy())
    mass = pin.crba(model, model.createData(), dualv.home)
    mass = np.triu(mass) + np.triu(mass, 1).T
    inertia = []
    for i in range(4):
        unit = np.eye(4)[i]
        qdot = dualv.differential.velocities_from(dualv.home, dualv.actuated_indices, unit)  # least squares
        inertia.append(qdot @ mass @ qdot)  # 2 x kinetic energy (kg m^2)
    omega = 2 * math.pi * BANDWIDTH_HZ
    np.testing.assert_allclose(law.kp, np.array(inertia) * omega**2, rtol=1e-10)
    np.testing.assert_allclose(law.kd, 2 * 0.7 * np.array(inertia) * omega, rtol=1e-10)
    assert not law.minimum_norm  # the PD part needs the eq. (50) projection


def test_feedforward_off_is_the_pd_with_a_first_order_filtered_derivative(dualv):
    law = AugmentedPD(dualv, feedforward=False, bandwidth_hz=BANDWIDTH_HZ, period_s=PERIOD_S, limits=[1e9])
    position = dualv.home[dualv.actuated_indices]
    slope = np.array([0.5, -0.2, 0.1, 1.0])  # rad/s, the error ramp
    times = np.arange(40) * PERIOD_S
    for _ in range(2):  # the second pass checks reset()
        law.reset()
        for t in times:
            reference = JointReference(position + slope * t, slope, np.zeros(4))
            tau = law.torques(position, np.zeros(4), reference)
            expected = law.kp * slope * t + law.kd * slope * (1.0 - math.exp(-2 * math.pi * BANDWIDTH_HZ * t))
            np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12)


def test_feedforward_alone_is_the_inverse_dynamics_of_the_reference(dualv):
    law = AugmentedPD(dualv, bandwidth_hz=BANDWIDTH_HZ, period_s=PERIOD_S, limits=[1e9])
    x = dualv.home[dualv.task_indices] + np.array([0.01, 0.02, -0.05])
    xdot, xddot = np.array([0.2, -0.1, 0.5]), np.array([3.0, 1.0, -4.0])
    q = dualv.solve_inverse(x, start=dualv.home).q
    _, qdot, qddot = dualv.differential.task_states(q, xdot, xddot)
    a = dualv.actuated_indices
    reference = JointReference(q[a], qdot[a], qddot[a])
    expected = InverseDynamics(dualv).torques_from_task(q, xdot, xddot)
    assert np.max(np.abs(expected)) > 0.1
    for _ in range(3):  # zero error at every sample: the PD part stays zero
        np.testing.assert_allclose(law.torques(q[a], qdot[a], reference), expected, rtol=1e-8, atol=1e-10)
