"""Where the truth is known (``pardyn demo``, the experiments, simulated runs): identified against true values.

The true standard parameters map onto the identified base parameters through the
same regrouping (``chi_b = K chi_st``, :class:`~pardyn.identification.base_parameters.BaseParameters`),
so each base parameter has its true value, and its error in units of its standard
deviation says whether the estimate is consistent with the noise (|error| of a few
sigma) or biased (tens of sigma: a model the data do not follow, such as Coulomb
friction near zero speed). The true parameters' own held-out error is the floor an
identification can reach with this model on these data (noise, filtering, the
friction model): an identified model near that floor is as good as the model allows.

``truth.json`` (written by :func:`pardyn.closedloop.identification_runs.record_runs`
and ``pardyn demo``): ``standard_parameters`` by name.
"""

from __future__ import annotations

import json
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


def load_truth_values(path: Path | str) -> dict[str, float]:
    """The true standard parameters by name from a ``truth.json``.

    Raises:
        InputError: the file cannot be read or has no ``standard_parameters`` mapping.
    """
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"--truth: cannot read {path}: {error}") from None
    values = document.get("standard_parameters") if isinstance(document, dict) else None
    if not isinstance(values, dict) or not all(isinstance(v, (int, float)) for v in values.values()):
        raise InputError(f"--truth: {path} has no 'standard_parameters' mapping of names to numbers "
                         "(the truth.json of pardyn demo or record_runs)")
    return {str(k): float(v) for k, v in values.items()}
