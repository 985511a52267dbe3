"""Model-quality metrics: relative error norms, NMSE, RMS errors.

All functions compare ``measured`` inputs (torques/forces, the ``Y`` of eqs.
39-41) with ``predicted`` ones (``W chi``), both shaped (samples,) for one
joint or (samples, joints) with one column per joint/equation row. A stacked
system ordered row by row (eq. 48) is turned into that layout by
:func:`columns_from_blocks`.

* Relative error norm (Briot et al. 2015, Sect. 5.3 and Table 3):
  ``||Y - W chi|| / ||Y||`` per joint and overall (a fraction: Table 3 gives
  percent).
* NMSE (UR5e paper, Sect. 4.5): "the sum of each joint's mean squared error
  normalized by its average torque magnitude",

      NMSE = sum_j [ (1/N) sum_k (tau_j(k) - tau_hat_j(k))^2 ] / [ (1/N) sum_k |tau_j(k)| ]

  in the torque's unit (the paper reports "a NMSE of 506.8 Nm" and "94.5 Nm":
  squared error in N^2 m^2 over a mean magnitude in N m). The equation itself
  is not legible in our copy of the paper; this is its verbal definition.
* Per-joint RMS error ``sqrt((1/N) sum_k (tau_j(k) - tau_hat_j(k))^2)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.errors import InputError

__all__ = [
    "ModelQuality",
    "columns_from_blocks",
    "relative_error_norm",
    "relative_error_norms",
    "nmse",
    "nmse_per_joint",
    "rms_error",
    "model_quality",
]


def _pair(measured: np.ndarray, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    if measured.shape != predicted.shape:
        raise InputError(f"measured {measured.shape} and predicted {predicted.shape} shapes differ")
    if measured.ndim == 1:
        measured, predicted = measured[:, None], predicted[:, None]
    if measured.ndim != 2 or measured.shape[0] == 0:
        raise InputError(f"expected (samples,) or (samples, joints) arrays, got {measured.shape}")
    if not (np.all(np.isfinite(measured)) and np.all(np.isfinite(predicted))):
        raise InputError("measured or predicted values contain NaN or infinity")
    return measured, predicted


def columns_from_blocks(y: np.ndarray, block_sizes: Sequence[int]) -> np.ndarray:
    """A vector stacked block by block (eq. 48) as (samples, blocks); blocks must have equal sizes."""
    y = np.asarray(y)
    sizes = [int(s) for s in block_sizes]
    if sum(sizes) != y.shape[0] or len(set(sizes)) != 1:
        raise InputError(f"blocks {sizes} do not split {y.shape[0]} rows into equal parts")
    return y.reshape(len(sizes), sizes[0]).T


def _nonzero(values: np.ndarray, what: str) -> np.ndarray:
    zero = np.flatnonzero(values == 0.0)
    if zero.size:
        raise InputError(f"{what} of joint column {int(zero[0])} is zero: the relative error is undefined")
    return values


def relative_error_norms(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per-joint ``||y_j - y_hat_j|| / ||y_j||`` (Briot et al. Table 3, as a fraction), (joints,)."""
    measured, predicted = _pair(measured, predicted)
    norms = _nonzero(np.linalg.norm(measured, axis=0), "measured norm")
    return np.linalg.norm(measured - predicted, axis=0) / norms


def relative_error_norm(measured: np.ndarray, predicted: np.ndarray) -> float:
    """Overall ``||Y - Y_hat|| / ||Y||`` over all samples and joints (Briot et al. Sect. 5.3)."""
    measured, predicted = _pair(measured, predicted)
    norm = float(_nonzero(np.array([np.linalg.norm(measured)]), "measured norm")[0])
    return float(np.linalg.norm(measured - predicted) / norm)


def nmse_per_joint(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Each joint's mean squared error over its mean torque magnitude (UR5e Sect. 4.5), (joints,).

    Unit: the torque's (N m for joints in N m).
    """
    measured, predicted = _pair(measured, predicted)
    magnitude = _nonzero(np.mean(np.abs(measured), axis=0), "mean |measured|")
    return np.mean((measured - predicted) ** 2, axis=0) / magnitude


def nmse(measured: np.ndarray, predicted: np.ndarray) -> float:
    """NMSE of the UR5e paper (Sect. 4.5): the sum over joints of :func:`nmse_per_joint`."""
    return float(np.sum(nmse_per_joint(measured, predicted)))


def rms_error(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per-joint root-mean-square error ``sqrt(mean_k (y - y_hat)^2)``, (joints,)."""
    measured, predicted = _pair(measured, predicted)
    return np.sqrt(np.mean((measured - predicted) ** 2, axis=0))


@dataclass(frozen=True)
class ModelQuality:
    """All metrics of one comparison (fractions, torque units).

    Attributes:
        joints: joint/equation names (joints,).
        relative_errors: per-joint relative error norms (joints,).
        relative_error: overall relative error norm.
        nmse_per_joint: per-joint NMSE terms (joints,), torque unit.
        nmse: UR5e NMSE (their sum), torque unit.
        rms: per-joint RMS error (joints,), torque unit.
    """

    joints: tuple[str, ...]
    relative_errors: np.ndarray
    relative_error: float
    nmse_per_joint: np.ndarray
    nmse: float
    rms: np.ndarray

    def as_dict(self) -> dict:
        """JSON-ready values."""
        return {
            "joints": list(self.joints),
            "relative_errors": self.relative_errors.tolist(),
            "relative_error": self.relative_error,
            "nmse_per_joint": self.nmse_per_joint.tolist(),
            "nmse": self.nmse,
            "rms": self.rms.tolist(),
        }


def model_quality(
    measured: np.ndarray, predicted: np.ndarray, *, joints: Sequence[str] | None = None
) -> ModelQuality:
    """Every metric of this module for (samples, joints) arrays."""
    m, p = _pair(measured, predicted)
    names = tuple(joints) if joints is not None else tuple(f"joint{j}" for j in range(m.shape[1]))
    if len(names) != m.shape[1]:
        raise InputError(f"{len(names)} joint names for {m.shape[1]} columns")
    per_joint = nmse_per_joint(m, p)
    return ModelQuality(
        joints=names,
        relative_errors=relative_error_norms(m, p),
        relative_error=relative_error_norm(m, p),
        nmse_per_joint=per_joint,
        nmse=float(per_joint.sum()),
        rms=rms_error(m, p),
    )
