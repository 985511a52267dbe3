"""The fleet's summary: base parameters per robot and date with sigma, drift, outliers, unusable runs.

**Drift** of base parameter ``p`` of a robot on date ``d``, in sigma, against a reference
``r`` (the robot's first identified run, or its nominal (CAD) model's base parameters,
sigma 0), with the WLS standard deviations of eqs. (45-47)::

    z = (chi_d - chi_r) / sqrt(sigma_d^2 + sigma_r^2)

flagged when ``|z| > threshold`` (default 5); an alert names the first date each
flagged parameter crossed it. Runs of one robot are independent recordings with their
own trajectories: their estimates differ by the noise sigma describes *and* by what
changes with the excitation (filter bias, what the trajectory barely excites), which
sigma does not describe. The sigmas are therefore scaled by the fleet's own
run-to-run factor (a Birge ratio, robust to a few real drifts)::

    k = max(1, median |z_first| / 0.6745)

over every run against its robot's first (``0.6745`` = median of ``|N(0, 1)|``): on the
simulated five-bar fleet of the tests, 8 s runs, ``k`` is about 2.

**Outliers**: on one date, a robot's parameter far from the fleet's: robust z-score
``(chi - median) / (1.4826 MAD)`` over the robots above ``outlier_threshold`` (default
5) and ``|chi - median| > threshold sigma``; needs four robots or more.

Written as ``fleet.md``, ``fleet.html`` (the same tables) and ``fleet.json``.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.fleet.layout import Unusable

__all__ = ["Alert", "FleetSummary", "Outlier", "summarize", "write_summary"]

MIN_ROBOTS_FOR_OUTLIERS = 4


@dataclass(frozen=True)
class Alert:
    """Parameter ``parameter`` of ``robot`` drifted by ``z`` sigma on ``date`` (first date past the threshold)."""

    robot: str
    date: str
    parameter: str
    value: float
    std: float
    reference: float
    z: float


@dataclass(frozen=True)
class Outlier:
    """``robot``'s ``parameter`` on ``date`` is ``z`` robust sigma from the fleet's ``median``."""

    robot: str
    date: str
    parameter: str
    value: float
    median: float
    z: float


@dataclass
class FleetSummary:
    """Per robot, per date: ``{parameter: (value, std, z)}``; alerts, outliers, unusable runs.

    Attributes:
        table: ``{robot: {date: {parameter: (value, std, drift z or None for the reference)}}}``.
        reference: ``"first"`` or ``"nominal"``; threshold: drift flag (sigma);
        scale: the sigma scale factor ``k`` (module docstring).
    """

    table: dict[str, dict[str, dict[str, tuple[float, float, float | None]]]]
    alerts: list[Alert]
    outliers: list[Outlier]
    unusable: list[Unusable]
    reference: str
    threshold: float
    scale: float = 1.0
    notes: list[str] = field(default_factory=list)

    def flagged(self, robot: str, date: str, parameter: str) -> bool:
        z = self.table[robot][date][parameter][2]
        return z is not None and abs(z) > self.threshold

    def as_json(self) -> dict[str, Any]:
        return {
            "reference": self.reference,
            "threshold_sigma": self.threshold,
            "sigma_scale": self.scale,
            "robots": {robot: {date: {p: {"value": v, "std": s, "drift_sigma": z} for p, (v, s, z) in row.items()}
                               for date, row in dates.items()} for robot, dates in self.table.items()},
            "alerts": [vars(a) for a in self.alerts],
            "outliers": [vars(o) for o in self.outliers],
            "unusable": [vars(u) for u in self.unusable],
            "notes": self.notes,
        }


def _z(value: float, std: float, reference: float, reference_std: float) -> float:
    spread = math.hypot(std, reference_std)
    difference = value - reference
    if spread > 0.0:
        return difference / spread
    return 0.0 if difference == 0.0 else math.copysign(math.inf, difference)


def _sigma_scale(runs_by_robot: dict[str, list[dict[str, Any]]]) -> float:
    """``k = max(1, median |z| / 0.6745)`` of every run against its robot's first (module docstring)."""
    zs = []
    for runs in runs_by_robot.values():
        first = {b["name"]: (b["value"], b["std"]) for b in runs[0]["base"]}
        zs += [abs(_z(b["value"], b["std"], *first[b["name"]])) for run in runs[1:] for b in run["base"]
               if b["name"] in first]
    return max(1.0, float(np.median(zs)) / 0.6745) if len(zs) >= 10 else 1.0


def summarize(records: Sequence[dict[str, Any]], unusable: Sequence[Unusable] = (), *, reference: str = "first",
              threshold: float = 5.0, outlier_threshold: float = 5.0, scale: float | None = None) -> FleetSummary:
    """The summary of the fleet's ``RUN.json`` records (:func:`pardyn.fleet.identify.read_records`).

    ``scale``: the sigma scale factor; ``None``: the fleet's own (module docstring).
    """
    if reference not in ("first", "nominal"):
        raise ValueError(f"reference must be 'first' or 'nominal', got {reference!r}")
    unusable = list(unusable) + [Unusable(r["robot"], r["date"], r["error"]) for r in records
                                 if r["status"] == "failed"]
    robots = sorted({r["robot"] for r in records if r["status"] == "identified"})
    runs_by_robot = {robot: sorted((r for r in records if r["robot"] == robot and r["status"] == "identified"),
                                   key=lambda r: r["date"]) for robot in robots}
    k = _sigma_scale(runs_by_robot) if scale is None else scale
    table: dict[str, dict[str, dict[str, tuple[float, float, float | None]]]] = {}
    alerts: list[Alert] = []
    for robot, runs in runs_by_robot.items():
        first = {b["name"]: (b["value"], b["std"]) for b in runs[0]["base"]}
        table[robot] = {}
        crossed: set[str] = set()
        for index, run in enumerate(runs):
            row = {}
            for entry in run["base"]:
                name, value, std = entry["name"], entry["value"], entry["std"]
                if reference == "nominal":
                    ref = run["nominal"].get(name, 0.0)
                    z = _z(value, std, ref, 0.0) / k
                elif index == 0 or name not in first:
                    z, ref = None, value
                else:
                    z, ref = _z(value, std, *first[name]) / k, first[name][0]
                row[name] = (value, std, z)
                if z is not None and abs(z) > threshold and name not in crossed:
                    crossed.add(name)
                    alerts.append(Alert(robot, run["date"], name, value, std, ref, z))
            table[robot][run["date"]] = row
    outliers = _outliers(table, outlier_threshold, threshold * k)
    notes = [f"σ: the WLS standard deviations (eqs. 45-47); drift and outliers in units of k σ with k = {k:.2f}, "
             "the fleet's run-to-run factor (median |z| against each robot's first run / 0.6745)"]
    if len(robots) < MIN_ROBOTS_FOR_OUTLIERS:
        notes.append(f"outliers need {MIN_ROBOTS_FOR_OUTLIERS} robots or more on a date; the fleet has {len(robots)}")
    return FleetSummary(table, alerts, outliers, unusable, reference, threshold, k, notes)


def _outliers(table: dict, outlier_threshold: float, threshold: float) -> list[Outlier]:
    found = []
    dates = sorted({date for dates in table.values() for date in dates})
    for date in dates:
        rows = {robot: dates[date] for robot, dates in table.items() if date in dates}
        if len(rows) < MIN_ROBOTS_FOR_OUTLIERS:
            continue
        names = sorted(set.intersection(*(set(row) for row in rows.values())))
        for name in names:
            values = np.array([row[name][0] for row in rows.values()])
            median = float(np.median(values))
            mad = 1.4826 * float(np.median(np.abs(values - median)))
            for robot, row in rows.items():
                value, std, _ = row[name]
                if mad > 0.0 and abs(value - median) / mad > outlier_threshold and abs(value - median) > threshold * std:
                    found.append(Outlier(robot, date, name, value, median, (value - median) / mad))
    return found


# -- rendering: one table model, two writers ------------------------------------------------------------------


def _tables(summary: FleetSummary) -> list[tuple[str, list[str], list[list[tuple[str, bool]]]]]:
    """``[(title, header, rows of (cell text, flagged))]`` of the summary, in reading order."""
    tables = []
    reference = "first identification" if summary.reference == "first" else "nominal model"
    tables.append((f"Drift alerts (against the {reference}, |z| > {summary.threshold:g} kσ; first date)",
                   ["robot", "date", "parameter", "value ± σ", "reference", "drift (kσ)"],
                   [[(a.robot, False), (a.date, False), (a.parameter, False), (f"{a.value:.5g} ± {a.std:.2g}", False),
                     (f"{a.reference:.5g}", False), (f"{a.z:+.1f}", True)] for a in summary.alerts]))
    tables.append(("Outliers (against the fleet on the same date)",
                   ["robot", "date", "parameter", "value", "fleet median", "robust z"],
                   [[(o.robot, False), (o.date, False), (o.parameter, False), (f"{o.value:.5g}", False),
                     (f"{o.median:.5g}", False), (f"{o.z:+.1f}", True)] for o in summary.outliers]))
    tables.append(("Runs that could not be used", ["robot", "run", "why"],
                   [[(u.robot, False), (u.date, False), (u.reason, True)] for u in summary.unusable]))
    for robot, dates in summary.table.items():
        names = list(dict.fromkeys(name for row in dates.values() for name in row))
        rows = []
        for name in names:
            cells = [(name, False)]
            for date, row in dates.items():
                if name not in row:
                    cells.append(("", False))
                    continue
                value, std, z = row[name]
                drift = "ref" if z is None else f"{z:+.1f}kσ"
                cells.append((f"{value:.5g} ± {std:.2g} ({drift})", summary.flagged(robot, date, name)))
            rows.append(cells)
        tables.append((f"{robot}: base parameters ± σ (drift in kσ)", ["parameter", *dates], rows))
    return tables


def _markdown(summary: FleetSummary, title: str) -> str:
    lines = [f"# {title}", ""]
    lines += [f"- {note}" for note in summary.notes]
    for heading, header, rows in _tables(summary):
        lines += ["", f"## {heading}", ""]
        if not rows:
            lines.append("none")
            continue
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(f"**{text}** ⚠" if flag and text else text.replace("|", "/") for text, flag in row)
                  + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _html(summary: FleetSummary, title: str) -> str:
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>",
        "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse;margin-bottom:2em}",
        "td,th{border:1px solid #ccc;padding:3px 8px;font-size:90%;text-align:right}",
        "td:first-child{text-align:left} .flag{background:#fdd;font-weight:bold}",
        "</style></head><body>", f"<h1>{html.escape(title)}</h1>",
    ]
    parts += [f"<p>{html.escape(note)}</p>" for note in summary.notes]
    for heading, header, rows in _tables(summary):
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if not rows:
            parts.append("<p>none</p>")
            continue
        parts.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td class='flag'>{html.escape(text)}</td>" if flag and text
                                          else f"<td>{html.escape(text)}</td>" for text, flag in row) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_summary(summary: FleetSummary, out: Path | str, *, title: str = "Fleet identification") -> list[Path]:
    """``fleet.md``, ``fleet.html`` and ``fleet.json`` in ``out``; their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "fleet.md", out / "fleet.html", out / "fleet.json"]
    paths[0].write_text(_markdown(summary, title))
    paths[1].write_text(_html(summary, title))
    paths[2].write_text(json.dumps(summary.as_json(), indent=2) + "\n")
    return paths
