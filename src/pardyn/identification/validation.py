"""Step 9 of :mod:`pardyn.identification.pipeline`: the identified model's torques on held-out recordings.

Actuator torques predicted by the identified model -- the minimum-norm, zero-internal-stress torques
on a redundant robot, as the paper's Table 3 -- against the measured ones (low-passed at the
decimation cut-off, where the model is meant to be valid, eq. 40), and the same for the nominal (CAD)
model and the physically consistent one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.regressor import Regressor
from pardyn.identification.filtering import decimation_cutoff_hz, zero_phase_lowpass
from pardyn.identification.metrics import nmse, relative_error_norm, relative_error_norms
from pardyn.identification.preparation import motor_columns, prepare_bag
from pardyn.identification.result import Validation
from pardyn.identification.settings import IdentificationSettings
from pardyn.identification.sources import Source

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["validate"]


def _figures(robot: Robot, measured: np.ndarray, predicted: np.ndarray) -> dict[str, Any]:
    """Relative error norm, per joint, NMSE of one model's predicted torques (N, n_a)."""
    return {
        "relative_error_norm": relative_error_norm(measured, predicted),
        "per_joint": dict(zip(robot.actuated_names, relative_error_norms(measured, predicted).tolist())),
        "nmse": nmse(measured, predicted),
    }


def validate(robot: Robot, bag: Source, settings: IdentificationSettings, identified: InverseDynamics,
             nominal: InverseDynamics, regressor: Regressor, physical: InverseDynamics | None = None,
             motor_values: dict[str, float] | None = None) -> Validation:
    """The three models' torques against ``bag``'s (prepared as the identification's bags)."""
    data = prepare_bag(robot, regressor, bag, settings)
    filters, transmission = settings.filter, settings.model.transmission
    cutoff = decimation_cutoff_hz(data.sample_rate_hz, factor=filters.decimation)
    rate = 1.0 / float(np.median(np.diff(data.t)))
    measured = zero_phase_lowpass(data.torque, sample_rate_hz=rate, cutoff_hz=min(cutoff, 0.4 * rate),
                                  order=filters.filter_order)
    predicted = identified.torques_batch(data.q, data.qdot, data.qddot)
    extra = motor_columns(robot, regressor, transmission, data.qdot, data.qddot)
    if extra is not None and motor_values:
        predicted = predicted + extra @ np.array([motor_values[n] for n in transmission.column_names])
    predicted_nominal = nominal.torques_batch(data.q, data.qdot, data.qddot)
    per_joint = relative_error_norms(measured, predicted)
    physical_figures = None
    if physical is not None:
        physical_figures = _figures(robot, measured, physical.torques_batch(data.q, data.qdot, data.qddot))
    return Validation(
        bag=data.path,
        joints=tuple(robot.actuated_names),
        relative_error_norm=relative_error_norm(measured, predicted),
        per_joint=per_joint,
        nmse=nmse(measured, predicted),
        nominal=_figures(robot, measured, predicted_nominal),
        t=data.t, measured=measured, predicted=predicted, predicted_nominal=predicted_nominal,
        physical=physical_figures,
    )
