"""Base parameters by QR (Briot et al. eqs. 42-43) and the symmetric column order.

References, none of them the code under test:

* hand-built matrices with known dependencies (``c = a + 2 b``, duplicated and
  zero columns): base set and regrouping coefficients known exactly;
* pinocchio's joint-torque regressor (``computeJointTorqueRegressor``) of a
  planar 2R arm, plus rotor-inertia columns, against the classical regrouping
  ``zz_1R = zz_1 + ia_1 + l_1^2 m_2`` (the paper's ``zz_1iR = zz_1i + ia_1i + d_2^2 m_2i``);
* identical synthetic legs listed in a scrambled order: the eq. (43) order
  must keep the same parameter type in every leg.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pardyn.errors import InputError
from pardyn.identification.base_parameters import base_parameters, symmetric_order
from pardyn.identification.least_squares import LinearSystem

BODY_NAMES = ("xx", "xy", "xz", "yy", "yz", "zz", "mx", "my", "mz", "m")
# pinocchio's regressor columns per joint: [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
STANDARD_FROM_PINOCCHIO = [4, 5, 7, 6, 8, 9, 1, 2, 3, 0]


def dependent_matrix(rng: np.random.Generator, rows: int = 50) -> np.ndarray:
    a, b, d = rng.standard_normal((3, rows))
    return np.column_stack([a, b, a + 2 * b, d, np.zeros(rows), d])  # c = a + 2b, e = 0, f = d


def test_hand_built_dependencies():
    rng = np.random.default_rng(0)
    w = dependent_matrix(rng)
    base = base_parameters(w, names=list("abcdef"))
    np.testing.assert_array_equal(base.independent, [0, 1, 3])
    np.testing.assert_array_equal(base.dependent, [2, 4, 5])
    np.testing.assert_array_equal(base.beta, [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert base.names == ("aR", "bR", "dR")
    assert base.relations == ("aR = a + 1.0*c", "bR = b + 2.0*c", "dR = d + 1.0*f")
    assert base.unidentifiable == ("e",)
    # W_st = W_b K and chi_b = K chi_st
    np.testing.assert_allclose(base.reduce(w) @ base.regrouping, w, atol=1e-12)
    chi = np.arange(1.0, 7.0)
    np.testing.assert_allclose(base.from_standard(chi), [1 + 3, 2 + 2 * 3, 4 + 6])
    np.testing.assert_allclose(base.reduce(w) @ base.from_standard(chi), w @ chi, atol=1e-12)
    assert base.diagonal[[2, 4, 5]].max() < 1e-12


def test_column_order_decides_what_is_kept():
    w = dependent_matrix(np.random.default_rng(1))
    base = base_parameters(w, names=list("abcdef"), order=[2, 0, 1, 3, 4, 5])  # c first: b = (c - a) / 2
    np.testing.assert_array_equal(base.independent, [0, 2, 3])
    assert base.relations == ("aR = a - 0.5*b", "cR = c + 0.5*b", "dR = d + 1.0*f")


def test_tiny_coefficients_are_cleaned():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 40))
    noisy = a + 2 * b + 1e-13 * rng.standard_normal(40)
    almost = a + 1e-14 * b
    base = base_parameters(np.column_stack([a, b, noisy, almost]), names=list("abcd"))
    np.testing.assert_array_equal(base.independent, [0, 1])
    assert base.beta.tolist() == [[1.0, 1.0], [2.0, 0.0]]  # exact after cleaning
    raw = base_parameters(np.column_stack([a, b, noisy, almost]), coefficient_tol=0.0, significant_digits=None)
    assert raw.beta[0, 0] != 1.0 or raw.beta[1, 1] != 0.0  # round-off is really there


def test_stacked_observation_matrices():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 30))
    first = np.column_stack([a, b, 2 * a])  # here column 2 = 2 * column 0 ...
    second = rng.standard_normal((30, 3))  # ... but not on other samples
    assert base_parameters(first).n_base == 2
    both = base_parameters([first, second])
    assert both.n_base == 3 and both.relations == ()


def planar_2r_regressor(samples: int, rng: np.random.Generator, l1: float) -> np.ndarray:
    """Pinocchio torque regressor of a horizontal 2R arm, standard order, plus ia columns: (2 samples, 22)."""
    model = pin.Model()
    j1 = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "joint1")
    model.appendBodyToJoint(j1, pin.Inertia.Random(), pin.SE3.Identity())
    j2 = model.addJoint(j1, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([l1, 0.0, 0.0])), "joint2")
    model.appendBodyToJoint(j2, pin.Inertia.Random(), pin.SE3.Identity())
    data = model.createData()
    rows = []
    for _ in range(samples):
        q, v, a = rng.uniform(-3, 3, (3, 2))
        reg = pin.computeJointTorqueRegressor(model, data, q, v, a)  # (2, 20), gravity along z: no torque
        bodies = np.hstack([reg[:, 10 * k : 10 * k + 10][:, STANDARD_FROM_PINOCCHIO] for k in range(2)])
        rows.append(np.hstack([bodies, np.diag(a)]))  # rotor inertia: tau_j += ia_j qddot_j
    return np.vstack(rows)


def test_planar_2r_arm_regrouping_from_pinocchio():
    names = [f"{p}_link{k}" for k in (1, 2) for p in BODY_NAMES] + ["ia_joint1", "ia_joint2"]
    w = planar_2r_regressor(40, np.random.default_rng(4), l1=0.28)
    base = base_parameters(w, names=names)
    assert base.names == ("zz_link1R", "zz_link2", "mx_link2", "my_link2", "ia_joint2")
    assert base.relations == ("zz_link1R = zz_link1 + 0.0784*m_link2 + 1.0*ia_joint1",)
    assert len(base.unidentifiable) == 22 - 5 - 2
    np.testing.assert_allclose(base.reduce(w) @ base.regrouping, w, atol=1e-9 * np.abs(w).max())


def test_symmetric_order_of_names():
    names = ["zz_leg1_link1", "ia_leg1_joint1", "m_platform", "ia_leg2_joint1", "zz_leg2_link1",
             "mx_leg1_link1", "zz_leg3_link1", "ia_leg3_joint1", "mx_leg2_link1", "mx_leg3_link1"]
    order = symmetric_order(names)
    assert [names[k] for k in order] == [
        "m_platform",
        "zz_leg1_link1", "zz_leg2_link1", "zz_leg3_link1",
        "ia_leg1_joint1", "ia_leg2_joint1", "ia_leg3_joint1",
        "mx_leg1_link1", "mx_leg2_link1", "mx_leg3_link1",
    ]
    # legs not listed are ordinary (non-leg) parameters: first, in their original order
    assert [names[k] for k in symmetric_order(names, legs=["leg2", "leg1"])][:4] == [
        "m_platform", "zz_leg3_link1", "ia_leg3_joint1", "mx_leg3_link1"]
    custom = symmetric_order(names, legs=["leg2", "leg1", "leg3"])
    assert [names[k] for k in custom][1:4] == ["zz_leg2_link1", "zz_leg1_link1", "zz_leg3_link1"]
    with pytest.raises(InputError, match="several legs"):
        symmetric_order(["k_leg1_leg2"])


def test_symmetric_order_keeps_symmetric_base_parameters():
    names = ["zz_leg1_link1", "ia_leg1_joint1", "m_platform", "ia_leg2_joint1", "zz_leg2_link1",
             "mx_leg1_link1", "zz_leg3_link1", "ia_leg3_joint1", "mx_leg2_link1", "mx_leg3_link1"]
    rng = np.random.default_rng(5)
    cols = {name: rng.standard_normal(60) for name in names}
    for leg in (1, 2, 3):  # identical legs: the rotor acts exactly like the link inertia
        cols[f"ia_leg{leg}_joint1"] = cols[f"zz_leg{leg}_link1"]
    w = np.column_stack([cols[n] for n in names])
    naive = base_parameters(w, names=names)
    assert "ia_leg2_joint1R" in naive.names and "zz_leg1_link1R" in naive.names  # asymmetric
    sym = base_parameters(w, names=names, order=symmetric_order(names))
    assert sorted(sym.relations) == [f"zz_leg{k}_link1R = zz_leg{k}_link1 + 1.0*ia_leg{k}_joint1" for k in (1, 2, 3)]
    assert sum(n.startswith("zz_leg") for n in sym.names) == 3 and not any(n.startswith("ia_") for n in sym.names)


def test_reduce_system_and_errors():
    w = dependent_matrix(np.random.default_rng(6))
    base = base_parameters(w, names=list("abcdef"))
    system = LinearSystem(w, w @ np.ones(6), (25, 25), tuple("abcdef"))
    reduced = base.reduce_system(system)
    assert reduced.names == ("aR", "bR", "dR") and reduced.block_sizes == (25, 25)
    assert base.as_dict()["regrouping"]["bR"] == {"b": 1.0, "c": 2.0}
    with pytest.raises(InputError, match="stack more samples"):
        base_parameters(w[:4])
    with pytest.raises(InputError, match="permutation"):
        base_parameters(w, order=[0, 0, 1, 2, 3, 4])
    with pytest.raises(InputError, match="names"):
        base_parameters(w, names=["a"])
    with pytest.raises(InputError, match="zero"):
        base_parameters(np.zeros((10, 2)))



def test_round_off_residue_of_a_dependent_column_does_not_hide_a_later_one():
    """A column equal to 6e-17 times another (a first moment along a joint axis, cos(pi/2))
    is dependent; QR must not let its round-off direction absorb the later, independent column
    (plain Householder QR drops both: |R_22| of ``b`` comes out ~1e-16)."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(2, 50))
    W = np.column_stack([a, 6.123e-17 * b, b])
    base = base_parameters(W, names=["a", "tiny", "b"])
    assert base.independent.tolist() == [0, 2]
    top = np.linalg.norm(a)  # |R_11|, the largest diagonal entry here
    distance = np.linalg.norm(b - a * (a @ b) / (a @ a))  # b's distance from span(a)
    np.testing.assert_allclose(base.diagonal[[0, 2]], [1.0, distance / top], rtol=1e-10)


def test_a_round_off_column_is_unidentifiable_and_in_no_relation():
    """Random states: a column of norm 1e-15 next to columns of norm ~1e2 (a parameter without effect
    whose column is round-off, like the TX40's mz_link_2) is unidentifiable, not regrouped with
    coefficients fitted to its round-off; the exact dependency keeps its exact coefficients."""
    rng = np.random.default_rng(11)
    a, b, c = (100.0 * rng.standard_normal(400) for _ in range(3))
    round_off = 1e-15 * rng.standard_normal(400)  # (r,): zero up to round-off relative to W
    W = np.column_stack([a, b, c, round_off, a - 0.25 * c])
    base = base_parameters(W, names=["a", "b", "c", "ghost", "d"])
    assert base.unidentifiable == ("ghost",)
    assert base.relations == ("aR = a + 1.0*d", "cR = c - 0.25*d")
    assert not np.any((base.beta != 0) & (np.abs(base.beta) < 1e-6))
