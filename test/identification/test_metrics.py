"""Relative error norms, NMSE (UR5e paper Sect. 4.5) and RMS errors, against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.errors import InputError
from pardyn.identification.metrics import (
    columns_from_blocks,
    model_quality,
    nmse,
    nmse_per_joint,
    relative_error_norm,
    relative_error_norms,
    rms_error,
)

# joint 1: tau = [1, -1, 1, -1], error 1 everywhere -> MSE 1, mean |tau| 1, RMS 1
# joint 2: tau = [2, 2, 2, 2], prediction [1, 1, 3, 3] -> MSE 1, mean |tau| 2, RMS 1
MEASURED = np.array([[1.0, 2.0], [-1.0, 2.0], [1.0, 2.0], [-1.0, 2.0]])
PREDICTED = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 3.0], [0.0, 3.0]])


def test_relative_error_norms_by_hand():
    np.testing.assert_allclose(relative_error_norms(MEASURED, PREDICTED), [2 / 2, 2 / 4])
    assert relative_error_norm(MEASURED, PREDICTED) == pytest.approx(np.sqrt(8) / np.sqrt(20))
    assert relative_error_norm(MEASURED[:, 1], PREDICTED[:, 1]) == pytest.approx(0.5)


def test_nmse_by_hand():
    np.testing.assert_allclose(nmse_per_joint(MEASURED, PREDICTED), [1.0, 0.5])
    assert nmse(MEASURED, PREDICTED) == pytest.approx(1.5)
    # a torque unit: scaling torques by k scales the NMSE by k (paper reports N m)
    assert nmse(3 * MEASURED, 3 * PREDICTED) == pytest.approx(4.5)
    assert nmse(MEASURED, MEASURED) == 0.0


def test_rms_and_quality_summary():
    np.testing.assert_allclose(rms_error(MEASURED, PREDICTED), [1.0, 1.0])
    quality = model_quality(MEASURED, PREDICTED, joints=["tau1", "tau2"])
    assert quality.joints == ("tau1", "tau2")
    assert quality.nmse == pytest.approx(1.5)
    assert quality.as_dict()["relative_errors"] == pytest.approx([1.0, 0.5])


def test_stacked_blocks_to_columns():
    stacked = MEASURED.T.reshape(-1)  # joint by joint, as eq. (48)
    np.testing.assert_array_equal(columns_from_blocks(stacked, (4, 4)), MEASURED)
    with pytest.raises(InputError):
        columns_from_blocks(stacked, (3, 5))


def test_errors():
    with pytest.raises(InputError, match="shapes differ"):
        nmse(MEASURED, PREDICTED[:3])
    with pytest.raises(InputError, match="joint column 1"):
        relative_error_norms(np.array([[1.0, 0.0], [2.0, 0.0]]), np.zeros((2, 2)))
    with pytest.raises(InputError, match="NaN"):
        rms_error(np.array([np.nan, 1.0]), np.zeros(2))
    with pytest.raises(InputError, match="names"):
        model_quality(MEASURED, PREDICTED, joints=["a"])
