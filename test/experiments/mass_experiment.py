"""An experiment of its own, as a user adds one: this file is the whole experiment, with a setting of its own.

``robot_mass``: the mass of a robot's links (its pinocchio model) against a stated budget; the flag
``--mass-budget`` is generated from ``Options``. The module registers nothing at import: :func:`register` does
(the test), as a module of ``pardyn.experiments`` would with ``@EXPERIMENTS.plugin`` on the class.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pardyn.experiments.registry import EXPERIMENTS, ExperimentCommon
from pardyn.registry import option
from pardyn.robot import load_robot


class RobotMass:
    name = "robot_mass"
    summary = "the mass of a robot's links against a budget"

    @dataclass(frozen=True)
    class Options:
        mass_budget: float = option(10.0, "the most the links may weigh in kg", unit="kg", low=0.0, high=1e6)

    def run(self, out: Path, options: Options, common: ExperimentCommon) -> dict[str, Any]:
        mass = float(sum(inertia.mass for inertia in load_robot("dualv").mechanism.model.inertias))
        report = {"experiment": self.name, "mass_kg": mass, "options": {"mass_budget": options.mass_budget},
                  "paper_claim": "the DualV's links weigh less than the budget",
                  "claim_definition": "mass_kg <= mass_budget", "claim_held": mass <= options.mass_budget,
                  "plots": []}
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{self.name}.json").write_text(json.dumps(report))
        return report

    def show(self, report: dict[str, Any], out: Path) -> None:
        print(f"links: {report['mass_kg']:.2f} kg")


def register() -> str:
    """Register the experiment (what ``@EXPERIMENTS.plugin`` on the class does in a module of the package)."""
    EXPERIMENTS.plugin(RobotMass)
    return RobotMass.name
