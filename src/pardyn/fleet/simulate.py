"""A simulated fleet to try ``pardyn fleet identify`` on: robots of one model, recorded night after night.

Robot ``r`` is its model as built (:func:`pardyn.simulation.identification_runs.as_built_parameters`,
seed ``seed + r``: every body scaled by up to 15 %, rotor inertia and friction by up to
30 %). Every night its drives' viscous friction grows by ``growth`` (relative, wear), and
the ``step`` (robot, night, drive, added viscous friction in N m s/rad) is a fault that
appears on one night and stays: what drift detection should flag from that night on.

Each night is one identification run recorded in closed loop on the MuJoCo plant
(:func:`pardyn.simulation.identification_runs.record_runs`: its own exciting trajectory,
encoder quantization, torque noise), written as ``<root>/<robot>_NN/<date>/`` (a bag)
with the truth behind it in ``<root>/_truth/<robot>_NN/<date>/truth.json``. The runs
are tasks of the engine (:mod:`pardyn.distributed`).
"""

from __future__ import annotations

import datetime
import shutil
from dataclasses import dataclass
from pathlib import Path

from pardyn.dynamics.parameters import DynamicParameters
from pardyn.simulation.identification_runs import Run, as_built_parameters, record_runs
from pardyn.fleet.layout import ROBOT_FILE
from pardyn.distributed import Engine

__all__ = ["FleetSpec", "FrictionStep", "night_parameters", "simulate_fleet"]


@dataclass(frozen=True)
class FrictionStep:
    """Added viscous friction ``added`` (N m s/rad) on drive ``drive`` of robot ``robot`` from night ``night`` on."""

    robot: int
    night: int
    drive: int
    added: float


@dataclass(frozen=True)
class FleetSpec:
    """The simulated fleet.

    Attributes:
        model: robot name (every robot of the fleet is one); robots: how many; nights: runs per robot.
        duration_s: length of each run (s); rate_hz: control and recording rate (Hz).
        seed: robot ``r`` is built with seed ``seed + r``; night ``n`` of robot ``r`` follows
            trajectory seed ``1000 r + n + 1``.
        growth: relative growth of every drive's viscous friction per night.
        step: a friction fault (:class:`FrictionStep`), or ``None``.
        start: the first night's date.
        candidates: random draws of each exciting trajectory.
    """

    model: str = "delta"
    robots: int = 4
    nights: int = 3
    duration_s: float = 10.0
    rate_hz: float = 500.0
    seed: int = 11
    growth: float = 0.01
    step: FrictionStep | None = FrictionStep(robot=1, night=2, drive=0, added=0.15)
    start: datetime.date = datetime.date(2026, 11, 1)
    candidates: int = 2

    def robot_name(self, robot: int) -> str:
        return f"{self.model}_{robot + 1:02d}"

    def date(self, night: int) -> str:
        return (self.start + datetime.timedelta(days=night)).isoformat()


def night_parameters(nominal: DynamicParameters, spec: FleetSpec, robot: int, night: int) -> DynamicParameters:
    """Robot ``robot``'s plant on night ``night`` (module docstring)."""
    built = as_built_parameters(nominal, seed=spec.seed + robot)
    vector = built.vector().copy()
    start = 10 * len(built.bodies)
    for k in range(len(built.drives)):
        vector[start + 4 * k + 1] *= (1.0 + spec.growth) ** night  # [ia fv fs offset] per drive
    step = spec.step
    if step is not None and robot == step.robot and night >= step.night:
        vector[start + 4 * step.drive + 1] += step.added
    return built.with_vector(vector)


def _record_night(shared: tuple[FleetSpec, Path], item: tuple[int, int]) -> Path:
    spec, root = shared
    robot, night = item
    from pardyn.robot import load_robot  # noqa: PLC0415

    nominal = load_robot(spec.model).nominal_parameters
    name, date = spec.robot_name(robot), spec.date(night)
    staging = root / "_truth" / name / date
    if staging.exists():
        shutil.rmtree(staging)
    recorded = record_runs(spec.model, [Run(date, 1000 * robot + night + 1, spec.duration_s)], staging,
                           rate_hz=spec.rate_hz, candidates=spec.candidates, show_progress=False, workers=1,
                           truth=night_parameters(nominal, spec, robot, night))
    target = root / name / date
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        shutil.rmtree(target)
    shutil.move(str(recorded.bags[date]), target)
    return target


def simulate_fleet(root: Path | str, spec: FleetSpec = FleetSpec(), *, engine: Engine | None = None,
                   show_progress: bool = True) -> list[Path]:
    """Record ``spec``'s fleet into ``root`` (module docstring); the bags, robot by robot, night by night."""
    from pardyn.resources import robots_directory  # noqa: PLC0415

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    description = robots_directory() / f"{spec.model}.yaml"
    if description.is_file():  # the fleet's description, so that `pardyn fleet identify root` needs nothing else
        shutil.copyfile(description, root / ROBOT_FILE)
    items = [(robot, night) for robot in range(spec.robots) for night in range(spec.nights)]
    return (engine or Engine(1)).map(_record_night, (spec, root), items,
                                     label=f"recording {len(items)} runs" if show_progress else None,
                                     describe=lambda item: f"{spec.robot_name(item[0])}/{spec.date(item[1])}")
