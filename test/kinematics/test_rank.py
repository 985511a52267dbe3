"""Closure rank helpers on hand-built matrices (pardyn.kinematics.rank)."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.kinematics.rank import RankChange, independent_rows, null_space, numeric_rank, select_columns


def test_independent_rows_keep_the_first_independent_ones_in_order():
    jacobian = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])  # rank 2
    kept = independent_rows([jacobian, 3.0 * jacobian], describe=str)
    assert kept.tolist() == [0, 2]


def test_a_rank_change_between_samples_is_reported_with_both():
    regular = np.array([[1.0, 0.0], [0.0, 1.0]])
    singular = np.array([[1.0, 0.0], [1e-12, 0.0]])  # the second row collapses onto the first
    with pytest.raises(RankChange, match="rank 2 at sample 0 but rank 1"):
        independent_rows([regular, singular], describe=lambda k: f"sample {k}")


def test_null_space_and_column_selection():
    matrix = np.array([[1.0, -1.0, 0.0]])  # x1 = x2, x3 free
    basis = null_space(matrix, 3)
    assert basis.shape == (3, 2) and np.abs(matrix @ basis).max() < 1e-15
    assert numeric_rank(basis[[0, 1]]) == 1  # x1 and x2 move together: one of them parametrizes
    chosen = select_columns(basis, [0, 1, 2], 2)
    assert 2 in chosen and len(set(chosen) & {0, 1}) == 1
