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
from pardyn.identification.diagnostics import MIN_MOTION, min_motion
from pardyn.identification.filtering import decimation_cutoff_hz, zero_phase_lowpass
from pardyn.identification.metrics import nmse, relative_error_norm, relative_error_norms
from pardyn.identification.preparation import motor_columns, prepare_bag
from pardyn.identification.result import Validation
from pardyn.identification.selection import near_reversals
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
    """The three models' torques against ``bag``'s (prepared as the identification's bags).

    With ``settings.filter.rest_speed`` (the fit leaves rests out), the figures leave out the same rests: the
    samples where a joint with dry friction in a model (its own drive, or a passive joint of a loop) moves slower
    than that speed (:func:`_moving_samples`). There the plant's friction holds any torque within ``+-fs`` that no
    function of ``(q, qdot, qddot)`` predicts (MuJoCo's ``frictionloss``, stiction), so the true parameters'
    own error was set by the rests: 34.67 % on a four-bar finger with friction on every joint, 0.39 % without the
    dry friction. The predictions are then low-passed as the measured torques are (the fit's parallel filter): a
    model's ``fs sign(qdot)`` steps at each reversal where the measured torque is smoothed. The series (``t``,
    ``measured``, ``predicted``, ...) stay whole and unfiltered."""
    data = prepare_bag(robot, regressor, bag, settings)
    filters, transmission = settings.filter, settings.model.transmission
    cutoff = decimation_cutoff_hz(data.sample_rate_hz, factor=filters.decimation)
    rate = 1.0 / float(np.median(np.diff(data.t)))

    def lowpass(torques: np.ndarray) -> np.ndarray:
        return zero_phase_lowpass(torques, sample_rate_hz=rate, cutoff_hz=min(cutoff, 0.4 * rate),
                                  order=filters.filter_order)

    measured = lowpass(data.torque)
    predicted = identified.torques_batch(data.q, data.qdot, data.qddot)
    extra = motor_columns(robot, regressor, transmission, data.qdot, data.qddot)
    if extra is not None and motor_values:
        predicted = predicted + extra @ np.array([motor_values[n] for n in transmission.column_names])
    predicted_nominal = nominal.torques_batch(data.q, data.qdot, data.qddot)
    predicted_physical = None if physical is None else physical.torques_batch(data.q, data.qdot, data.qddot)
    kept = _moving_samples(robot, data.t, data.q, data.qdot, settings, (identified, nominal))
    every = slice(None) if kept is None else kept
    def compared(prediction: np.ndarray) -> np.ndarray:
        """Low-passed as the measured torques where rests are left out (the steps of fs sign(qdot))."""
        return prediction if kept is None else lowpass(prediction)

    identified_p, nominal_p = compared(predicted), compared(predicted_nominal)
    physical_figures = None
    if predicted_physical is not None:
        physical_figures = _figures(robot, measured[every], compared(predicted_physical)[every])
    return Validation(
        bag=data.path,
        joints=tuple(robot.actuated_names),
        relative_error_norm=relative_error_norm(measured[every], identified_p[every]),
        per_joint=relative_error_norms(measured[every], identified_p[every]),
        nmse=nmse(measured[every], identified_p[every]),
        nominal=_figures(robot, measured[every], nominal_p[every]),
        t=data.t, measured=measured, predicted=predicted, predicted_nominal=predicted_nominal,
        physical=physical_figures,
        rests_left_out=0 if kept is None else int(kept.size - np.count_nonzero(kept)),
    )


def _moving_samples(robot: Robot, t: np.ndarray, q: np.ndarray, qdot: np.ndarray, settings: IdentificationSettings,
                    models: tuple[InverseDynamics, ...]) -> np.ndarray | None:
    """The samples (N,) where no joint with dry friction in ``models`` is at rest (slower than
    ``settings.filter.rest_speed``, scaled as the fit's for a prismatic joint; joints that hardly move in the run
    are not tested), or within ``settings.filter.reversal_window_s`` of a reversal of its speed; ``None`` without a rest speed, with minimum speeds, or when the rests would be every sample."""
    limit = settings.filter.rest_speed
    if limit is None or settings.filter.min_speed is not None:
        return None
    joints = sorted({drive.joint for model in models for drive in model.params.drives if drive.fs != 0.0}
                    & set(robot.joint_names))
    if not joints:
        return None
    indices = [robot.joint_names.index(name) for name in joints]
    motion = min_motion(robot, joints)
    moving = np.ptp(q[:, indices], axis=0) >= motion
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    resting = (((np.abs(qdot[:, indices]) < limit * motion / MIN_MOTION)
                | near_reversals(qdot[:, indices], period, settings.filter.reversal_window_s)) & moving).any(axis=1)
    return None if resting.all() else ~resting
