"""What the identification found, and RESULT.json, its written form (:meth:`IdentificationResult.as_json`).

RESULT.json's field names are fixed (the issue that introduced them; ``pardyn dynamics --params``
reads ``standard_parameters``): a change here is a change of the file format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pardyn.dynamics.parameters import DynamicParameters
from pardyn.identification.base_parameters import BaseParameters
from pardyn.identification.estimators import DEFAULT_ESTIMATOR, EstimatorResult
from pardyn.identification.filtering import decimation_cutoff_hz
from pardyn.identification.least_squares import EssentialParameters, Estimate
from pardyn.identification.settings import IdentificationSettings

if TYPE_CHECKING:
    from pardyn.identification.drive_gains import DriveGains
    from pardyn.identification.identifiability import Identifiability
    from pardyn.identification.physical import PhysicalEstimate
    from pardyn.identification.truth import TruthComparison

__all__ = ["IdentificationResult", "Validation"]


@dataclass(frozen=True)
class Validation:
    """Torque prediction on one held-out bag (paper's Table 3 layout).

    Attributes:
        bag: the bag; joints: actuated joint names (n_a,);
        relative_error_norm: overall ``||tau - tau_hat|| / ||tau||``; per_joint: (n_a,);
        nmse: UR5e paper's metric (N m); nominal: the same three figures for the nominal model;
        t, measured, predicted, predicted_nominal: the series compared (N,), (N, n_a);
        physical: the three figures for the physically consistent model (``settings.fit.physical``), else ``None``;
        rests_left_out: samples the figures leave out (rests of joints with dry friction, ``filter.rest_speed``, and
            their reversals, ``filter.reversal_window_s``).
    """

    bag: Path
    joints: tuple[str, ...]
    relative_error_norm: float
    per_joint: np.ndarray
    nmse: float
    nominal: dict[str, Any]
    t: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    predicted_nominal: np.ndarray
    physical: dict[str, Any] | None = None
    rests_left_out: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = {
            "bag": str(self.bag),
            "relative_error_norm": self.relative_error_norm,
            "per_joint": dict(zip(self.joints, self.per_joint.tolist())),
            "nmse": self.nmse,
            "nominal": self.nominal,
        }
        if self.physical is not None:
            out["physical"] = self.physical
        if self.rests_left_out:
            out["rests_left_out"] = self.rests_left_out
        return out


@dataclass(frozen=True)
class IdentificationResult:
    """Everything the identification found (``as_json`` gives RESULT.json).

    ``identifiability``: the runs' base parameters against the model's structural ones
    (:mod:`pardyn.identification.identifiability`); ``truth``: the identified base parameters against
    the true ones, when they are known (:mod:`pardyn.identification.truth`); ``drive_gains``: the gains the
    logged currents were multiplied by (:mod:`pardyn.identification.drive_gains`), ``None`` for efforts logged
    in N m or N.
    """

    robot: str
    model: str
    settings: IdentificationSettings
    samples: int
    equations: int
    base: BaseParameters
    estimate: Estimate
    essential: EssentialParameters
    parameters: DynamicParameters
    row_names: tuple[str, ...]
    fit_blocks: tuple[str, ...]
    cutoff_hz: float
    sample_rate_hz: float
    payload: dict[str, float] | None
    validation: tuple[Validation, ...]
    fit_series: dict[str, np.ndarray]
    timings: dict[str, float]
    physical: PhysicalEstimate | None = None
    estimator: EstimatorResult | None = None
    motor_parameters: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    identifiability: Identifiability | None = None
    truth: TruthComparison | None = None
    drive_gains: DriveGains | None = None

    def _rows(self, estimate: Estimate) -> list[dict[str, float]]:
        return [
            {"name": n, "value": float(v), "std": float(s), "std_pct": float(p)}
            for n, v, s, p in zip(estimate.names, estimate.chi, estimate.std, estimate.relative_std)
        ]

    def _validation_json(self) -> dict[str, Any] | None:
        if not self.validation:
            return None
        joints = self.validation[0].joints
        validation = {
            "relative_error_norm": float(np.mean([v.relative_error_norm for v in self.validation])),
            "per_joint": {name: float(np.mean([v.per_joint[j] for v in self.validation]))
                          for j, name in enumerate(joints)},
            "nmse": float(np.mean([v.nmse for v in self.validation])),
            "nominal": _mean_figures([v.nominal for v in self.validation], joints),
            "bags": [v.as_dict() for v in self.validation],
        }
        left_out = sum(v.rests_left_out for v in self.validation)
        if left_out:
            validation["rests_left_out"] = left_out
        if self.physical is not None:
            validation["physical"] = _mean_figures([v.physical for v in self.validation], joints)
        return validation

    def as_json(self) -> dict[str, Any]:
        """RESULT.json: the fixed field names of the issue, and what ``pardyn dynamics --params`` reads."""
        validation = self._validation_json()
        physical = None
        if self.physical is not None:
            physical = self.physical.as_dict(self.estimate, block_labels=self.fit_blocks)
            if validation is not None:
                physical["validation"] = validation["physical"]
        essential_names = set(self.essential.estimate.names)
        filters, fit = self.settings.filter, self.settings.fit
        return {
            "robot": self.robot,
            "model": self.model,
            "dynamic_model": self.settings.model.dynamic_model,
            "samples": self.samples,
            "equations": self.equations,
            "base_parameters": [
                dict(row, essential=row["name"] in essential_names) for row in self._rows(self.estimate)
            ],
            "essential_parameters": self._rows(self.essential.estimate),
            # how base_parameters were estimated: the estimator's name, iterations, convergence
            "estimator": (self.estimator or EstimatorResult(self.estimate, DEFAULT_ESTIMATOR)).as_dict(),
            "regrouping": list(self.base.relations),
            "unidentifiable": list(self.base.unidentifiable),
            "payload": self.payload,
            # efforts logged as currents: their unit and each joint's gain (given or identified)
            "drive_gains": None if self.drive_gains is None else self.drive_gains.as_dict(),
            "fit": {
                "relative_error_norm": self.estimate.relative_error,
                "per_joint": dict(zip(self.fit_blocks, self.estimate.block_relative_errors.tolist())),
                "essential_relative_error_norm": self.essential.estimate.relative_error,
                "condition_number": self.estimate.condition_number,
            },
            "validation": validation,
            "identifiability": None if self.identifiability is None else {
                "structural_base_parameters": self.identifiability.structural.n_base,
                "not_identified": [{"name": name, "reason": reason} for name, reason in self.identifiability.lost],
                "data_relations": list(self.identifiability.data_relations),
            },
            "truth": None if self.truth is None else self.truth.as_json(),
            "filter": {
                "derivative_cutoff_hz": self.cutoff_hz,
                "filter_order": filters.filter_order,
                "decimation": filters.decimation,
                "decimation_cutoff_hz": decimation_cutoff_hz(self.sample_rate_hz, factor=filters.decimation),
                "model_rate_hz": filters.model_rate_hz,
                "r_sigma": fit.r_sigma,
                "essential_tolerance": fit.essential_tolerance,
                "essential_stopped_by": self.essential.stopped_by,
                "rank_eps": fit.rank_eps,
                "rotor_compensation": self.settings.data.rotor_model is not None,
            },
            "timings_s": self.timings,
            # the coupled motors' parameters (transmission), joint-side scaled
            "motor_parameters": self.motor_parameters,
            # what was done to the data on the way (resampling, transmission), one sentence each
            "data_notes": list(self.notes),
            # settings.fit.physical: the physically consistent estimate beside the unconstrained one
            "physical": physical,
            # Read by pardyn dynamics --params (pardyn.dynamics.parameters.read_parameter_file).
            "standard_parameters": dict(zip(self.parameters.names, self.parameters.vector().tolist())),
            "unlisted": "zero",
        }


def _mean_figures(figures: Sequence[dict[str, Any]], joints: Sequence[str]) -> dict[str, Any]:
    """Mean over bags of ``{relative_error_norm, per_joint: {joint: ...}, nmse}`` figures."""
    return {
        key: (float(np.mean([f[key] for f in figures])) if key != "per_joint" else {
            name: float(np.mean([f["per_joint"][name] for f in figures])) for name in joints
        })
        for key in ("relative_error_norm", "per_joint", "nmse")
    }
