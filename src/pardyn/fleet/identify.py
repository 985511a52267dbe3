"""Identify every new run of a fleet, in parallel, and write what each found.

Every run of :func:`pardyn.fleet.layout.scan` is one task of the engine
(:mod:`pardyn.distributed`): :func:`pardyn.identification.pipeline.identify` on its bag
or CSV files, one run per identification (the night's parameters). A task writes,
in ``out/<robot>/<date>/``:

* ``RESULT.json``: what ``pardyn identify`` writes;
* ``report/report.md`` and its plots (``report=True``);
* ``RUN.json``: the run's fingerprint, its base parameters with sigma and the nominal
  model's base parameters (the fleet summary's input, :mod:`pardyn.fleet.summary`).

A run whose ``RUN.json`` has the same fingerprint (files, sizes, times, description)
is not identified again: a nightly re-run identifies only the new nights. A run that
fails is written as ``RUN.json`` with ``status: failed`` and the error (its bag, topic,
time...); the other runs go on.
"""

from __future__ import annotations

import functools
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.fleet.layout import FleetRun, Layout, scan
from pardyn.identification.pipeline import IdentificationSettings, identify
from pardyn.distributed import Engine, TaskFailure

__all__ = ["RUN_FILE", "FleetIdentification", "identify_fleet", "identify_run", "read_records"]

RUN_FILE = "RUN.json"


@dataclass(frozen=True)
class FleetIdentification:
    """What :func:`identify_fleet` did: the layout, the runs identified now, skipped (unchanged), failed."""

    layout: Layout
    identified: tuple[str, ...]
    skipped: tuple[str, ...]
    failed: tuple[str, ...]
    records: tuple[dict[str, Any], ...]


@functools.lru_cache(maxsize=8)
def _robot(description: str):
    from pardyn.robot import load_robot  # noqa: PLC0415

    return load_robot(description)


def _nominal_base(robot, result) -> dict[str, float]:
    """The nominal (CAD) model's base parameters in the identified model's regrouping (eq. 43)."""
    nominal = dict(zip(robot.nominal_parameters.names, robot.nominal_parameters.vector().tolist()))
    standard = np.array([nominal.get(name, 0.0) for name in result.base.standard_names])  # offsets: 0
    return dict(zip(result.base.names, result.base.from_standard(standard).tolist()))


def identify_run(shared: tuple[IdentificationSettings, Path, bool, float | None], run: FleetRun) -> dict[str, Any]:
    """One task: identify ``run``, write its RESULT.json, report and RUN.json; the RUN.json record."""
    settings, out, report, rate_hz = shared
    robot = _robot(run.description)
    if run.kind == "bag":
        source = run.sources[0]
    else:  # a log: its format's reader, or a folder of one-field CSV files
        from pardyn.recordings import READERS, ReadOptions  # noqa: PLC0415
        from pardyn.recordings.csv_series import read_csv_series  # noqa: PLC0415

        read = ReadOptions(rate_hz=rate_hz, max_gap=settings.data.max_gap)
        source = (READERS.get(run.kind).read(run.sources[0], read) if len(run.sources) == 1 else
                  read_csv_series(run.sources, **read.table_arguments()))
        if settings.data.effort_delay_s is None:  # logged torques are instantaneous (as pardyn identify --csv)
            settings = settings.replace(effort_delay_s=0.0)
    result = identify(robot, [source], settings=settings.replace(workers=1), show_progress=False)
    folder = Path(out) / run.robot / run.date
    folder.mkdir(parents=True, exist_ok=True)
    data = result.as_json()
    (folder / "RESULT.json").write_text(json.dumps(data, indent=2) + "\n")
    if report:
        from pardyn.identification.report import write_report  # noqa: PLC0415 - matplotlib

        write_report(result, folder / "report")
    record = {
        "robot": run.robot,
        "date": run.date,
        "status": "identified",
        "kind": run.kind,
        "sources": [str(p) for p in run.sources],
        "description": run.description,
        "fingerprint": run.fingerprint,
        "base": [{"name": row["name"], "value": row["value"], "std": row["std"]} for row in data["base_parameters"]],
        "nominal": _nominal_base(robot, result),
        "fit_error": data["fit"]["relative_error_norm"],
        "samples": data["samples"],
    }
    (folder / RUN_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return record


def _failed(run: FleetRun, failure: TaskFailure, out: Path) -> dict[str, Any]:
    folder = out / run.robot / run.date
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "RESULT.json").unlink(missing_ok=True)  # an earlier result of other files
    record = {"robot": run.robot, "date": run.date, "status": "failed", "kind": run.kind,
              "sources": [str(p) for p in run.sources], "description": run.description,
              "fingerprint": run.fingerprint, "error": f"{failure.error}: {failure.message}"}
    (folder / RUN_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return record


def _up_to_date(run: FleetRun, out: Path) -> bool:
    record = _record(out / run.robot / run.date / RUN_FILE)
    return isinstance(record, dict) and record.get("fingerprint") == run.fingerprint


_RECORD_KEYS = {"identified": {"robot": str, "date": str, "fingerprint": str, "base": list, "nominal": dict},
                "failed": {"robot": str, "date": str, "error": str}}


def _record(path: Path) -> dict[str, Any] | str:
    """The record of a ``RUN.json``, or why it is not one (unreadable, truncated, stale: keys missing)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return f"cannot be read ({type(error).__name__}: {error})"
    if not isinstance(record, dict) or record.get("status") not in _RECORD_KEYS:
        return f"not a run record (status {record.get('status') if isinstance(record, dict) else None!r})"
    wrong = [key for key, kind in _RECORD_KEYS[record["status"]].items() if not isinstance(record.get(key), kind)]
    if wrong or (record["status"] == "identified" and not all(
            isinstance(b, dict) and {"name", "value", "std"} <= set(b) for b in record["base"])):
        return f"a stale or damaged run record (keys {wrong or ['base']} missing or of the wrong kind)"
    return record


def read_records(out: Path | str) -> list[dict[str, Any]]:
    """Every ``RUN.json`` under ``out``, by robot then date; one that cannot be used (truncated, stale, of
    another version) is left out with a warning naming it (the run is identified again next time)."""
    records = []
    for path in sorted(Path(out).glob(f"*/*/{RUN_FILE}")):
        record = _record(path)
        if isinstance(record, str):
            warnings.warn(f"{path}: {record}; left out of the summary (delete it: the next fleet identify "
                          "identifies the run again)", stacklevel=2)
            continue
        records.append(record)
    return sorted(records, key=lambda r: (r["robot"], r["date"]))


def identify_fleet(
    root: Path | str,
    out: Path | str,
    *,
    robot: str | None = None,
    settings: IdentificationSettings | None = None,
    engine: Engine | None = None,
    report: bool = True,
    rate_hz: float | None = None,
    show_progress: bool = True,
) -> FleetIdentification:
    """Identify the runs of the fleet folder ``root`` that ``out`` has not seen (module docstring).

    Args:
        root: the fleet folder (:mod:`pardyn.fleet.layout`); out: where results go.
        robot: robot name or YAML for folders without a ``robot.yaml`` (nor one at the top).
        settings: identification settings of every run (default: the papers' recipe).
        engine: where the tasks run (default: serial in this process).
        report: write each run's report (matplotlib plots).
        rate_hz: sample rate of CSV logs without a time column (Hz).
    """
    out = Path(out)
    layout = scan(root, robot=robot)
    todo = [run for run in layout.runs if not _up_to_date(run, out)]
    skipped = tuple(run.name for run in layout.runs if run not in todo)
    engine = engine or Engine(1)
    shared = (settings or IdentificationSettings(), out, report, rate_hz)
    results = engine.map(identify_run, shared, todo, errors="collect",
                         label=f"identifying {len(todo)} runs" if show_progress and todo else None)
    failed = []
    for run, result in zip(todo, results):
        if isinstance(result, TaskFailure):
            _failed(run, result, out)
            failed.append(run.name)
    identified = tuple(run.name for run in todo if run.name not in failed)
    present = {(run.robot, run.date) for run in layout.runs}  # not the results of runs since removed
    records = tuple(r for r in read_records(out) if (r["robot"], r["date"]) in present)
    return FleetIdentification(layout, identified, skipped, tuple(failed), records)
