"""Joint-state series from CSV files, the same :class:`~pardyn.bags.joint_states.JointStateSeries` a bag gives.

What a vendor controller logs, in one file or several:

* **one file**: a time column and, per joint, ``<joint>_position``,
  ``<joint>_velocity``, ``<joint>_effort`` (``_pos``/``_vel``/``_torque``/...
  accepted, ``.`` or ``/`` as separator too);
* **several files**, one field each (``positions.csv``, ``efforts.csv``): the
  field is given as ``FIELD=FILE`` (``position=``, ``velocity=``, ``effort=``) or
  read from the file name (a word ``position``/``pos``, ``velocity``/``vel``,
  ``effort``/``torque``/``current``/``curr``); the columns are the joints
  (``<joint>`` or ``<joint>_<field>``).

Column names are stripped of spaces and of a leading ``-`` (as some exporters
write them); ``joint_map`` renames them to the robot's joints (or motors, for a
robot with a ``transmission:``). Time: a column ``t``, ``time``, ``time_s``,
``timestamp`` or ``stamp`` in seconds, the same in every file; or, without one,
``rate_hz`` (the TX40's logs are sampled at 5 kHz and have no time column).
Non-uniform stamps are resampled (:func:`pardyn.bags.resample.resample_uniform`),
missing velocities stay NaN (identification derives them from the positions).

Every problem is a :class:`~pardyn.bags.errors.BagError` naming the file, the
column and the line: a missing time column, a cell that is not a number, NaN,
time that does not increase, files of different lengths or times.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pardyn.bags.errors import BagError
from pardyn.bags.joint_states import JointStateSeries
from pardyn.bags.resample import DEFAULT_MAX_GAP, resample_uniform
from pardyn.errors import InputError
from pardyn.textio import read_text

__all__ = ["FIELDS", "TIME_COLUMNS", "CsvSource", "csv_source", "read_csv_series"]

FIELDS = ("position", "velocity", "effort")
TIME_COLUMNS = ("t", "time", "time_s", "timestamp", "stamp")
_WORDS = {
    "position": ("position", "positions", "pos", "q"),
    "velocity": ("velocity", "velocities", "vel", "qdot", "dq"),
    "effort": ("effort", "efforts", "torque", "torques", "tau", "current", "curr", "eff"),
}
_TIME_TOLERANCE_S = 1e-6


@dataclass(frozen=True)
class CsvSource:
    """One CSV file and the field its columns hold (None: each column names its field)."""

    path: Path
    field: str | None = None


def csv_source(text: str | Path) -> CsvSource:
    """``"effort=curr.csv"`` or ``"curr_data.csv"`` (field from the name when it says one) -> a source."""
    text = str(text)
    head, sep, tail = text.partition("=")
    if sep and head in FIELDS:
        return CsvSource(Path(tail), head)
    path = Path(text)
    words = set(re.split(r"[^a-z]+", path.stem.lower()))
    found = [field for field, names in _WORDS.items() if words & set(names)]
    return CsvSource(path, found[0] if len(found) == 1 else None)


def _clean(name: str) -> str:
    return name.strip().lstrip("-# ").strip()


def _split_field(column: str) -> tuple[str, str | None]:
    """``arm_1_joint_position`` -> (``arm_1_joint``, ``position``); no field suffix -> (column, None)."""
    for field, words in _WORDS.items():
        for word in words:
            for separator in ("_", ".", "/"):
                suffix = separator + word
                if column.lower().endswith(suffix) and len(column) > len(suffix):
                    return column[: -len(suffix)], field
    return column, None


def _read_table(path: Path) -> tuple[list[str], np.ndarray]:
    """Header names and the numbers (rows, columns) of one CSV file."""
    try:
        text = read_text(path, what="CSV file")  # UTF-8, a spreadsheet's byte-order mark removed; others named
    except InputError as error:
        raise BagError(str(error).removeprefix(f"{path}: "), bag=path, kind="format") from None
    header = text.partition("\n")[0]
    if not header.strip():
        raise BagError("empty file (a header line of column names is needed)", bag=path, kind="format")
    delimiter = next((d for d in (",", ";", "\t") if d in header), None)
    names = [_clean(name) for name in (header.split(delimiter) if delimiter else header.split())]
    if any(not name for name in names):
        raise BagError(f"empty column name in the header {header.strip()!r}", bag=path, kind="format")
    if any(_is_number(name) for name in names):
        raise BagError(f"the first line {header.strip()!r} holds numbers: a header line of column names is needed",
                       bag=path, kind="format")
    try:
        values = np.loadtxt(io.StringIO(text), delimiter=delimiter, skiprows=1, ndmin=2, dtype=np.float64)
    except ValueError as error:
        raise BagError(f"not a table of numbers: {_loadtxt_message(error)}", bag=path, kind="data") from None
    if values.shape[0] < 2:
        raise BagError(f"{values.shape[0]} data lines, at least 2 needed", bag=path, kind="count")
    if values.shape[1] != len(names):
        raise BagError(f"{values.shape[1]} values per line for {len(names)} column names", bag=path, kind="lengths")
    return names, values


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _loadtxt_message(error: ValueError) -> str:
    """numpy's message with the line number of the file (numpy counts data rows from 0 after the header)."""
    text = str(error).splitlines()[0]
    match = re.search(r"at row (\d+), column (\d+)", text)
    if match:
        row, column = int(match.group(1)), int(match.group(2))
        text = text[: match.start()] + f"at line {row + 2}, column {column}" + text[match.end():]
    return text


def _time(path: Path, names: list[str], values: np.ndarray, rate_hz: float | None) -> tuple[np.ndarray, int | None]:
    """Times (N,) s and the time column's index (None when built from ``rate_hz``)."""
    found = [k for k, name in enumerate(names) if name.lower() in TIME_COLUMNS]
    if len(found) > 1:
        raise BagError(f"several time columns {[names[k] for k in found]}", bag=path, kind="format")
    if not found:
        if rate_hz is None:
            raise BagError(
                f"no time column (one of {list(TIME_COLUMNS)}, in s); give the sample rate instead (--rate HZ)",
                bag=path, kind="stamps",
            )
        if not rate_hz > 0:
            raise BagError(f"sample rate must be > 0 Hz, got {rate_hz}", bag=path, kind="stamps")
        return np.arange(values.shape[0]) / float(rate_hz), None
    column = found[0]
    t = values[:, column]
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise BagError(f"column {names[column]!r}: {t[bad[0]]} at line {bad[0] + 2}", bag=path, kind="non_finite")
    dt = np.diff(t)
    back = np.flatnonzero(dt <= 0)
    if back.size:
        k = int(back[0]) + 1
        what = "repeated" if dt[k - 1] == 0 else "goes back"
        raise BagError(
            f"column {names[column]!r}: time {what} at line {k + 2} (t={t[k]:.9g} s after t={t[k - 1]:.9g} s); "
            "time must increase",
            bag=path, kind="stamps", t_s=float(t[k]),
        )
    median = float(np.median(dt))
    if median >= 0.5:
        raise BagError(
            f"column {names[column]!r}: median interval {median:g} between samples: is the time in seconds? "
            "(milliseconds or nanoseconds would explain it)",
            bag=path, kind="stamps",
        )
    return t, column


def read_csv_series(
    sources: Sequence[CsvSource | str | Path],
    *,
    rate_hz: float | None = None,
    joint_map: Mapping[str, str] | None = None,
    max_gap: float = DEFAULT_MAX_GAP,
    resample: bool = True,
) -> JointStateSeries:
    """One joint-state series from CSV files (module docstring for the conventions).

    Args:
        sources: the files (:func:`csv_source` strings or :class:`CsvSource`).
        rate_hz: sample rate when the files have no time column (Hz).
        joint_map: column joint name -> robot joint (or motor) name.
        max_gap: longest interval resampled, in median intervals (:func:`resample_uniform`).
        resample: False keeps the stamps as they are (to write them into a bag).

    Raises:
        BagError: naming the file, column and line at fault.
    """
    sources = [s if isinstance(s, CsvSource) else csv_source(s) for s in sources]
    if not sources:
        raise BagError("no CSV file given", bag="<csv>", kind="format")
    joint_map = dict(joint_map or {})
    fields: dict[str, dict[str, np.ndarray]] = {field: {} for field in FIELDS}
    origin: dict[tuple[str, str], Path] = {}
    times: np.ndarray | None = None
    first = sources[0].path
    for source in sources:
        names, values = _read_table(source.path)
        t, time_column = _time(source.path, names, values, rate_hz)
        if times is None:
            times = t
        elif len(t) != len(times) or np.max(np.abs(t - times)) > _TIME_TOLERANCE_S:
            raise BagError(
                f"{len(t)} samples from t={t[0]:.6g} to {t[-1]:.6g} s, but {first.name} has {len(times)} from "
                f"{times[0]:.6g} to {times[-1]:.6g} s: the files must share their time stamps",
                bag=source.path, kind="stamps",
            )
        for k, column in enumerate(names):
            if k == time_column:
                continue
            joint, field = _split_field(column)
            if source.field is not None:
                if field not in (None, source.field):
                    joint = column  # a joint name that happens to end like a field
                field = source.field
            elif field is None:
                raise BagError(
                    f"column {column!r}: which field is it? name it <joint>_position, _velocity or _effort, "
                    "or give one file per field as position=FILE, velocity=FILE, effort=FILE",
                    bag=source.path, kind="names",
                )
            joint = joint_map.get(joint, joint)
            if joint in fields[field]:
                raise BagError(f"column {column!r}: {field} of {joint!r} given twice (also in "
                               f"{origin[(field, joint)].name})", bag=source.path, kind="names")
            data = values[:, k]
            bad = np.flatnonzero(~np.isfinite(data))
            if bad.size:
                line = int(bad[0]) + 2
                raise BagError(
                    f"column {column!r}: {data[bad[0]]} at line {line} (t={times[bad[0]]:.6g} s; {bad.size} "
                    "non-finite values)",
                    bag=source.path, kind="non_finite", t_s=float(times[bad[0]]),
                )
            fields[field][joint] = data
            origin[(field, joint)] = source.path
    if not fields["position"]:
        raise BagError(
            "no position column in " + ", ".join(str(s.path) for s in sources)
            + " (positions are needed: a file position=FILE or columns <joint>_position)",
            bag=first, kind="names",
        )
    names = tuple(fields["position"])
    count = len(times)

    def stack(field: str) -> np.ndarray:
        out = np.full((count, len(names)), np.nan)
        for j, name in enumerate(names):
            if name in fields[field]:
                out[:, j] = fields[field][name]
        return out

    stray = sorted({name for field in ("velocity", "effort") for name in fields[field]} - set(names))
    notes = ()
    if stray:
        notes = (f"{first.name}: columns without positions ignored: {stray}",)
    stamps = np.rint(times * 1e9).astype(np.int64)
    series = JointStateSeries(
        bag_path=first, topic="csv", names=names, stamp_ns=stamps, t=times, bag_time_ns=stamps,
        position=stack("position"), velocity=stack("velocity"), effort=stack("effort"), notes=notes,
    )
    return resample_uniform(series, max_gap=max_gap) if resample else series
