"""Transmissions: power balance, the round trip motor <-> joint, and the coupled motors' columns by hand."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.dynamics.transmission import Transmission
from pardyn.errors import InputError

TX40 = np.array([  # theta = R (q - q0), the Staubli TX40 (dataset README)
    [32, 0, 0, 0, 0, 0],
    [0, 32, 0, 0, 0, 0],
    [0, 0, 45, 0, 0, 0],
    [0, 0, 0, -48, 0, 0],
    [0, 0, 0, 0, 45, 0],
    [0, 0, 0, 0, 32, 32],
], dtype=float)
JOINTS = tuple(f"joint_{k}" for k in range(1, 7))
MOTORS = tuple(f"motor_{k}" for k in range(1, 7))


@pytest.fixture
def tx40() -> Transmission:
    return Transmission(MOTORS, JOINTS, TX40, np.array([0, -np.pi / 2, np.pi / 2, 0, 0, 0]))


def test_round_trip_and_power_balance(tx40):
    rng = np.random.default_rng(4)
    q, qdot, tau_m = rng.standard_normal((3, 50, 6))
    theta = (q - tx40.offset) @ TX40.T
    np.testing.assert_allclose(tx40.joint_positions(theta), q, atol=1e-12)
    np.testing.assert_allclose(tx40.joint_velocities(qdot @ TX40.T), qdot, atol=1e-12)
    # virtual power: tau^T qdot = tau_m^T thetadot, sample by sample
    power_joint = np.einsum("ni,ni->n", tx40.joint_torques(tau_m), qdot)
    power_motor = np.einsum("ni,ni->n", tau_m, qdot @ TX40.T)
    np.testing.assert_allclose(power_joint, power_motor, rtol=1e-12)


def test_tx40_wrist_columns_are_the_published_ones(tx40):
    """Row 5: [qddot6, qdot6, sign(qdot5 + qdot6)], row 6: [qddot5, qdot5, sign(qdot5 + qdot6)] (FIGAROH)."""
    rng = np.random.default_rng(5)
    qdot, qddot = rng.standard_normal((2, 40, 6))
    assert tx40.coupled == (5,) and tx40.column_names == ("iam_motor_6", "fvm_motor_6", "fsm_motor_6")
    columns = tx40.columns(qdot, qddot)  # (40, 6, 3)
    sign = np.sign(qdot[:, 4] + qdot[:, 5])
    np.testing.assert_array_equal(columns[:, 4], np.column_stack([qddot[:, 5], qdot[:, 5], sign]))
    np.testing.assert_array_equal(columns[:, 5], np.column_stack([qddot[:, 4], qdot[:, 4], sign]))
    assert not columns[:, :4].any()


def test_coupled_motor_torque_is_its_diagonal_part_plus_its_columns():
    """R^T [J thetaddot + Fv thetadot + Fs sign(thetadot)] of a motor driving three joints, derived by hand."""
    rng = np.random.default_rng(6)
    ratio = np.diag([10.0, -20.0, 30.0]) + np.array([[0, 0, 0], [0, 0, 0], [5.0, -7.0, 0]])
    transmission = Transmission(("a", "b", "c"), ("x", "y", "z"), ratio, None)
    inertia, viscous, coulomb = 2e-4, 3e-3, 0.05  # motor side
    qdot, qddot = rng.standard_normal((2, 30, 3))
    row = ratio[2]
    full = row[None, :] * (inertia * qddot @ row + viscous * qdot @ row + coulomb * np.sign(qdot @ row))[:, None]
    diagonal = row**2 * (inertia * qddot + viscous * qdot)  # regrouped with the joints' own ia, fv
    own = ratio[2, 2]
    parameters = np.array([own**2 * inertia, own**2 * viscous, own * coulomb])  # iam, fvm, fsm
    np.testing.assert_allclose(diagonal + transmission.columns(qdot, qddot) @ parameters, full, rtol=1e-12,
                               atol=1e-15)


def test_bad_ratios_are_refused():
    with pytest.raises(InputError, match="square"):
        Transmission(("a",), ("x", "y"), np.ones((1, 2)), None)
    with pytest.raises(InputError, match="singular"):
        Transmission(("a", "b"), ("x", "y"), np.ones((2, 2)), None)
