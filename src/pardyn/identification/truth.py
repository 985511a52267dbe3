"""Where the truth is known (``pardyn demo``, the experiments, simulated runs): identified against true values.

The true standard parameters map onto the identified base parameters through the
same regrouping (``chi_b = K chi_st``, :class:`~pardyn.identification.base_parameters.BaseParameters`),
so each base parameter has its true value, and its error in units of its standard
deviation says whether the estimate is consistent with the noise (|error| of a few
sigma) or biased (tens of sigma: a model the data do not follow, such as Coulomb
friction near zero speed). The true parameters' own held-out error is the floor an
identification can reach with this model on these data (noise, filtering, the
friction model): an identified model near that floor is as good as the model allows.

``truth.json`` (written by :func:`pardyn.simulation.identification_runs.record_runs`
and ``pardyn demo``): ``standard_parameters`` by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pardyn.errors import InputError

__all__ = ["TruthComparison", "compare_with_truth", "load_truth_values"]


@dataclass(frozen=True)
class TruthComparison:
    """Identified base parameters against the true ones, and the truth's own held-out errors.

    Attributes:
        names: base parameters (n_b,); identified, std: the estimate and its standard deviations (n_b,);
        true: the true base values (n_b,) (NaN where a regrouped standard parameter has no known value,
            such as the payload's);
        floor: the true parameters' held-out relative error norm on each validation run.
    """

    names: tuple[str, ...]
    identified: np.ndarray
    std: np.ndarray
    true: np.ndarray
    floor: tuple[float, ...] = ()

    def rows(self) -> list[dict]:
        """Per base parameter: name, identified, std, true, error, error / std, |error| / |true| (%)."""
        out = []
        for name, value, std, true in zip(self.names, self.identified, self.std, self.true):
            error = float(value - true)
            out.append({
                "name": name, "identified": float(value), "std": float(std), "true": float(true), "error": error,
                "error_in_std": error / float(std) if std > 0 else float("inf"),
                "error_percent": 100 * abs(error) / abs(float(true)) if true else float("nan"),
            })
        return out

    def as_json(self) -> dict:
        rows = [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
                for row in self.rows()]
        return {"base_parameters": rows, "validation_floor": list(self.floor)}


def compare_with_truth(names: Sequence[str], identified: np.ndarray, std: np.ndarray, regrouping: np.ndarray,
                       true_standard: np.ndarray, floor: Sequence[float] = ()) -> TruthComparison:
    """The true base values ``K chi_st`` beside the identified ones.

    Args:
        names, identified, std: base parameters (n_b,) and their estimate.
        regrouping: ``K`` (n_b, n_st) of the base parameters.
        true_standard: true standard values (n_st,) in the regrouping's column order (NaN: unknown).
        floor: the true parameters' held-out errors (one per validation run).
    """
    known = np.isfinite(true_standard)
    true = regrouping @ np.where(known, true_standard, 0.0)
    unknown = (np.abs(regrouping[:, ~known]) > 0).any(axis=1)
    true[unknown] = np.nan
    return TruthComparison(tuple(names), np.asarray(identified, float), np.asarray(std, float), true, tuple(floor))


def load_truth_values(path: Path | str, robot=None) -> dict[str, float]:
    """The true standard parameters by name from a ``truth.json``, checked before any identification runs.

    With ``robot`` (a :class:`~pardyn.robot.Robot`), every name must be one of its parameters (or a
    ``*_payload`` one), every value a finite number (not ``true``, not a 400-digit integer) and the values
    physical (masses, rotor inertias and friction >= 0, :func:`~pardyn.description.validation.check_parameters`).

    Raises:
        InputError: naming the file and the key at fault: the file cannot be read, has no ``standard_parameters``
            mapping, a value is not a finite number, a name is unknown, a value is not physical.
    """
    from pardyn.description.validation import check_parameters  # noqa: PLC0415
    from pardyn.textio import load_json, shown  # noqa: PLC0415

    where = f"--truth {path}"
    try:
        document = load_json(path, what="truth file")
    except InputError as error:
        raise InputError(f"--truth: {error}") from None
    values = document.get("standard_parameters") if isinstance(document, dict) else None
    if not isinstance(values, dict) or not values:
        raise InputError(f"{where}: no 'standard_parameters' mapping of names to numbers "
                         "(the truth.json of pardyn demo or record_runs)")
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(_as_float(value)):
            raise InputError(f"{where}: standard_parameters: {shown(name)}: expected a finite number, got "
                             f"{shown(value)}")
    if robot is not None:
        nominal = robot.nominal_parameters
        own = {k: v for k, v in values.items() if not (k.endswith("_payload") and k not in nominal.names)}
        unknown = sorted(set(own) - set(nominal.names))
        if unknown:
            raise InputError(f"{where}: standard_parameters: {len(unknown)} unknown names for {robot.name} "
                             f"({shown(unknown)}; its names are like {', '.join(nominal.names[:3])}, ...): "
                             "give the truth of this robot")
        check_parameters(nominal.with_values(own, where=f"{where}: standard_parameters"),
                         f"{where}: standard_parameters", error=InputError)
    return {str(k): float(v) for k, v in values.items()}


def _as_float(value: float) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer of hundreds of digits
        return float("inf")
