"""What an experiment is, and the registry ``pardyn experiment NAME`` runs them from.

An experiment is a plug-in (:class:`pardyn.registry.Plugin`) registered in :data:`EXPERIMENTS` with
``@EXPERIMENTS.plugin``: ``name``, ``summary`` (one line), ``Options`` (a frozen dataclass of
:func:`pardyn.registry.option` fields: ``pardyn experiment``'s flags are generated from them), ``run(out, options,
common) -> report`` (writes ``<out>/<name>.json`` and its plots; the report says the paper's claim, whether it held
and the plots written) and ``show(report, out)`` (prints its figures). Adding one is one module of
:mod:`pardyn.experiments` (found by :func:`load_experiments`), see ``test/experiments/gravity_experiment.py``.
Several experiments may read one flag with defaults of their own (``--identification-s``):
:func:`experiment_options`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from pardyn.registry import OptionSpec, Registry, import_modules, option, shared_options

__all__ = ["EXPERIMENTS", "Experiment", "ExperimentCommon", "NoOptions", "experiment_options", "load_experiments",
           "seconds"]


@dataclass(frozen=True)
class ExperimentCommon:
    """What every experiment takes from ``pardyn experiment``: parallel runs (None: one per core) and whether to
    show progress."""

    workers: int | None = None
    show_progress: bool = True

    def settings(self) -> dict[str, Any]:
        """``workers`` and ``show_progress`` by name: the fields every study's own options have."""
        return asdict(self)


def seconds(default: float | None, description: str) -> Any:
    """An option of a run's length in s, positive (``--identification-s``: one flag of several experiments, each
    with its own ``default``; None: the description says it)."""
    return option(default, description, unit="s", low=0.0, high=1e6, low_open=True)


@dataclass(frozen=True)
class NoOptions:
    """An experiment without settings of its own."""


class Experiment(Protocol):
    """An experiment (module docstring)."""

    name: str
    summary: str
    Options: type

    def run(self, out: Path, options: Any, common: ExperimentCommon) -> dict[str, Any]:
        """Run it into ``out``; the report (``paper_claim``, ``claim_held``, ``claim_definition``, ``plots``)."""

    def show(self, report: dict[str, Any], out: Path) -> None:
        """Print its figures."""


EXPERIMENTS: Registry[Experiment] = Registry("experiment")
"""Experiments by name (:func:`load_experiments` registers the modules of :mod:`pardyn.experiments`)."""

ORDER = ("tracking", "robustness", "wu_redundancy", "h4", "ur5e_calibration", "estimator_comparison",
         "estimator_benchmark", "online_identification", "delta_pick_and_place", "hexapod_identification")
"""The modules listed first, in ``pardyn experiment --help``'s order."""


def load_experiments() -> Registry[Experiment]:
    """:data:`EXPERIMENTS` with every module of :mod:`pardyn.experiments` imported (each registers itself; the
    modules import the plants and identification, so only the commands that run one load them)."""
    import_modules("pardyn.experiments", first=ORDER)
    return EXPERIMENTS


def experiment_options() -> list[tuple[OptionSpec, tuple[str, ...]]]:
    """Every experiment's options, each flag once with the experiments reading it, each with its own default."""
    return shared_options(((name, EXPERIMENTS.get(name).Options, "") for name in EXPERIMENTS), own_defaults=True)
