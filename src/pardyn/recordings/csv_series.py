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

* **a vendor's layout**, described by a :class:`ColumnSchema`: a pattern per
  field such as ``position: Position{i}``, ``effort: Torque{i}`` (``{i}`` the
  joint's index in the schema's joint list, from ``first_index``, 1 by default;
  ``{joint}`` its name), other columns (currents, temperatures, commands) ignored;
  or column indices from 0, ``time=0,position=1-6,velocity=7-12,effort=25-30``
  (a range per field, one column per joint in order), for logs without a header line.
* **MATLAB files** (``.mat``; v5-v7 through :mod:`scipy.io`, v7.3 through ``h5py``): each
  vector variable is a column of that name, each matrix ``M`` (samples x k) gives the
  columns ``M1..Mk``, and a file holding a single matrix is a table without header
  (its columns taken by index); the same schema options as a CSV file.

Column names are stripped of spaces and of a leading ``-`` (as some exporters
write them); ``joint_map`` renames them to the robot's joints (or motors, for a
robot with a ``transmission:``). Time: a column ``t``, ``time``, ``time_s``,
``timestamp`` or ``stamp`` (or the schema's ``time``), the same in every file,
in seconds or in ``time_unit`` (``ms``, ``us``, ``ns``, or ``samples``: a sample
index, with ``rate_hz``); or, without one, ``rate_hz`` (the TX40's logs are
sampled at 5 kHz and have no time column).
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
from pardyn.textio import load_yaml, read_text

__all__ = ["FIELDS", "TIME_COLUMNS", "TIME_UNITS", "ColumnSchema", "CsvSource", "column_schema", "csv_source",
           "read_csv_series"]

FIELDS = ("position", "velocity", "effort")
TIME_COLUMNS = ("t", "time", "time_s", "timestamp", "stamp")
_WORDS = {
    "position": ("position", "positions", "pos", "q"),
    "velocity": ("velocity", "velocities", "vel", "qdot", "dq"),
    "effort": ("effort", "efforts", "torque", "torques", "tau", "current", "curr", "eff"),
}
_TIME_TOLERANCE_S = 1e-6
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "samples": None}
"""Units of a time column: seconds per unit (``samples``: a sample index, times from the sample rate)."""


@dataclass(frozen=True)
class ColumnSchema:
    """Which column holds which field of which joint: a vendor's CSV layout.

    Attributes:
        patterns: ``((field, pattern), ...)``, e.g. ``(("position", "Position{i}"), ("effort", "Torque{i}"))``;
            ``{i}`` is the joint's index in ``joints`` counted from ``first_index``, ``{joint}`` its name.
        joints: the joints in index order; empty: the reader's (the robot's measured joints, or its motors).
        time: the time column's name; None: one of :data:`TIME_COLUMNS`, or none.
        first_index: the index of the first joint (1: ``Position1`` is the first joint's position).
    """

    patterns: tuple[tuple[str, str], ...]
    joints: tuple[str, ...] = ()
    time: str | None = None
    first_index: int = 1
    indices: tuple[tuple[str, tuple[int, ...]], ...] = ()
    time_index: int | None = None

    @property
    def by_index(self) -> bool:
        """Columns given by their index (``position=1-6``): a file without a header line is read."""
        return bool(self.indices)

    def columns(self, joints: Sequence[str]) -> dict[tuple[str, str], str]:
        """``{(field, joint): column name}`` for ``joints`` (the schema's own list when it has one); by index:
        the column names are the indices (:func:`_read_table` names a headerless file's columns so)."""
        joints = self.joints or tuple(joints)
        if self.by_index:
            return {(field, joint): str(index) for field, columns in self.indices
                    for joint, index in zip(joints, columns)}
        return {(field, joint): pattern.format(i=k + self.first_index, joint=joint)
                for field, pattern in self.patterns for k, joint in enumerate(joints)}


def column_schema(text: str | Path) -> ColumnSchema:
    """A schema from a YAML file or an inline ``position=Position{i},effort=Torque{i}``.

    The YAML file maps ``position``, ``velocity``, ``effort`` to patterns and may give
    ``joints`` (list), ``time`` (column name) and ``first_index``.

    Raises:
        BagError: kind ``"format"``, naming the file or text and what is wrong.
    """
    text = str(text)
    where = text
    if text.endswith((".yaml", ".yml")):
        try:
            document = load_yaml(text, what="column schema")
        except InputError as error:
            raise BagError(f"cannot read the column schema: {str(error).removeprefix(text + ': ')}", bag=text,
                           kind="format") from None
        if not isinstance(document, dict):
            raise BagError("a column schema is a mapping: position: Position{i}, effort: Torque{i}, ...",
                           bag=text, kind="format")
    else:
        document = {}
        for item in text.split(","):
            key, sep, value = item.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise BagError(f"expected FIELD=PATTERN pairs separated by commas, got {item!r}",
                               bag="--columns", kind="format")
            if key.strip() in document:
                raise BagError(f"{key.strip()} given twice ({document[key.strip()]!r} and {value.strip()!r}): one "
                               "pattern per field", bag="--columns", kind="format")
            document[key.strip()] = value.strip()
        where = "--columns"
    unknown = sorted(set(document) - {*FIELDS, "joints", "time", "first_index"})
    if unknown:
        raise BagError(f"unknown keys {unknown} (known: {[*FIELDS, 'joints', 'time', 'first_index']})",
                       bag=where, kind="format")
    if any(_INDEX_RANGE.fullmatch(str(document.get(field, ""))) for field in FIELDS):
        return _index_schema(document, where)
    patterns = []
    for field in FIELDS:
        pattern = document.get(field)
        if pattern is None:
            continue
        try:
            pattern.format(i=1, joint="j")
        except (AttributeError, KeyError, IndexError, ValueError):
            raise BagError(f"{field}: pattern {pattern!r} may only use {{i}} and {{joint}}", bag=where,
                           kind="format") from None
        listed = document.get("joints")
        if "{i}" not in pattern and "{joint}" not in pattern and not (isinstance(listed, list) and len(listed) == 1):
            raise BagError(f"{field}: pattern {pattern!r} has no {{i}} nor {{joint}}: every joint would read the same "
                           f"column (e.g. {field}: {pattern}{{i}})", bag=where, kind="format")
        twice = [other for other, used in patterns if used == pattern]
        if twice:
            raise BagError(f"{field} and {twice[0]} both read the columns {pattern!r}: one pattern per field",
                           bag=where, kind="format")
        patterns.append((field, pattern))
    if not any(field == "position" for field, _ in patterns):
        raise BagError("no position pattern (e.g. position: Position{i})", bag=where, kind="format")
    joints = document.get("joints") or ()
    if not isinstance(joints, (list, tuple)) or not all(isinstance(j, str) for j in joints):
        raise BagError("joints: a list of joint names", bag=where, kind="format")
    first = document.get("first_index", 1)
    if not isinstance(first, int):
        raise BagError(f"first_index: an integer, got {first!r}", bag=where, kind="format")
    time = document.get("time")
    return ColumnSchema(tuple(patterns), tuple(joints), None if time is None else str(time), first)


_INDEX_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*")


def _index_schema(document: dict, where: str) -> ColumnSchema:
    """``time=0,position=1-6,velocity=7-12,effort=25-30``: column indices from 0, a range per field."""
    indices = []
    counts = set()
    for field in FIELDS:
        if field not in document:
            continue
        match = _INDEX_RANGE.fullmatch(str(document[field]))
        if match is None:
            raise BagError(f"{field}: {document[field]!r}: give every field as column indices (FIRST-LAST, from 0) "
                           "or every field as a name pattern, not both", bag=where, kind="format")
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if last < first:
            raise BagError(f"{field}: columns {first}-{last} go backwards", bag=where, kind="format")
        indices.append((field, tuple(range(first, last + 1))))
        counts.add(last - first + 1)
    if not any(field == "position" for field, _ in indices):
        raise BagError("no position columns (e.g. position=1-6)", bag=where, kind="format")
    if len(counts) > 1:
        raise BagError(f"the fields give different numbers of joints: {dict((f, len(c)) for f, c in indices)}",
                       bag=where, kind="format")
    time = document.get("time")
    if time is not None and not re.fullmatch(r"\s*\d+\s*", str(time)):
        raise BagError(f"time: {time!r}: with column indices the time is an index too (time=0)", bag=where,
                       kind="format")
    joints = document.get("joints") or ()
    if not isinstance(joints, (list, tuple)) or not all(isinstance(j, str) for j in joints):
        raise BagError("joints: a list of joint names", bag=where, kind="format")
    return ColumnSchema(patterns=(), joints=tuple(joints), time=None if time is None else str(int(time)),
                        indices=tuple(indices), time_index=None if time is None else int(time))


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


def _read_table(path: Path, *, headerless: bool = False) -> tuple[list[str], np.ndarray]:
    """Header names and the numbers (rows, columns) of one CSV (or MATLAB) file.

    ``headerless``: the columns are taken by index (an index schema): a first line of numbers is data, and
    the columns are named by their index (``"0"``, ``"1"``, ...).
    """
    if path.suffix.lower() == ".mat":
        return _read_mat(path, headerless=headerless)
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
    numbers = any(_is_number(name) for name in names)
    if numbers and not headerless:
        raise BagError(f"the first line {header.strip()!r} holds numbers: a header line of column names is needed, "
                       "or give the columns by index (--columns 'time=0,position=1-6,effort=7-12')",
                       bag=path, kind="format")
    try:
        values = np.loadtxt(io.StringIO(text), delimiter=delimiter, skiprows=0 if numbers else 1, ndmin=2,
                            dtype=np.float64)
    except ValueError as error:
        raise BagError(f"not a table of numbers: {_loadtxt_message(error)}", bag=path, kind="data") from None
    if values.shape[0] < 2:
        raise BagError(f"{values.shape[0]} data lines, at least 2 needed", bag=path, kind="count")
    if values.shape[1] != len(names):
        raise BagError(f"{values.shape[1]} values per line for {len(names)} column names", bag=path, kind="lengths")
    return ([str(k) for k in range(len(names))] if headerless else names), values


def _read_mat(path: Path, *, headerless: bool) -> tuple[list[str], np.ndarray]:
    """A MATLAB file as a table: vector variables are named columns, a matrix ``M`` (samples x k) the columns
    ``M1..Mk``; ``headerless`` (an index schema): the file's one matrix, its columns by index."""
    variables = _mat_variables(path)
    numeric = {name: np.asarray(value, dtype=float) for name, value in variables.items()
               if isinstance(value, np.ndarray) and value.dtype.kind in "fiub" and value.ndim <= 2 and value.size > 1}
    if not numeric:
        raise BagError(f"no numeric variable (the file holds {sorted(variables) or 'nothing'})", bag=path,
                       kind="format")
    if headerless:
        matrices = {name: value for name, value in numeric.items() if value.ndim == 2 and min(value.shape) > 1}
        if len(matrices) != 1:
            raise BagError(f"columns by index need one matrix in the file, found {sorted(matrices) or 'none'} "
                           "(name the variables in --columns instead: position=q{i}, ...)", bag=path, kind="format")
        (value,) = matrices.values()
        value = value if value.shape[0] >= value.shape[1] else value.T  # samples along the rows
        return [str(k) for k in range(value.shape[1])], value
    lengths = {max(value.shape) for value in numeric.values()}
    count = max(lengths)
    names, columns = [], []
    for name, value in numeric.items():
        if max(value.shape) != count:
            continue  # parameters stored beside the log (gains, a rate): not a column
        matrix = value.reshape(-1, 1) if value.ndim == 1 or min(value.shape) == 1 else (
            value if value.shape[0] == count else value.T)
        if matrix.shape[1] == 1:
            names.append(name)
        else:
            names += [f"{name}{k}" for k in range(1, matrix.shape[1] + 1)]
        columns.append(matrix.reshape(count, -1))
    return names, np.hstack(columns)


_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _mat_variables(path: Path) -> dict[str, np.ndarray]:
    """The variables of a MATLAB file: v5-v7 through scipy.io, v7.3 (HDF5) through h5py."""
    from scipy import io as matio  # noqa: PLC0415

    try:
        return {k: v for k, v in matio.loadmat(path, squeeze_me=True).items() if not k.startswith("__")}
    except NotImplementedError:  # v7.3: an HDF5 file
        pass
    except (ValueError, OSError) as error:
        with path.open("rb") as handle:  # an HDF5 file (v7.3, MATLAB's 512-byte header or none)
            head = handle.read(520)
        if _HDF5_SIGNATURE not in (head[:8], head[512:520]):
            raise BagError(f"not a MATLAB file scipy can read: {error}", bag=path, kind="format") from None
    try:
        import h5py  # noqa: PLC0415
    except ImportError:
        raise BagError("a MATLAB v7.3 file (HDF5): install h5py (pip install 'pardyn[mat]') or save it with "
                       "save(..., '-v7')", bag=path, kind="format") from None
    with h5py.File(path, "r") as handle:  # MATLAB writes column-major: the arrays come transposed
        return {name: np.asarray(item[()]).T.squeeze() for name, item in handle.items()
                if isinstance(item, h5py.Dataset) and not name.startswith("#")}


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


def _time(path: Path, names: list[str], values: np.ndarray, rate_hz: float | None, time_unit: str | None = None,
          time_column: str | None = None) -> tuple[np.ndarray, int | None]:
    """Times (N,) s and the time column's index (None when built from ``rate_hz``)."""
    if time_unit is not None and time_unit not in TIME_UNITS:
        raise BagError(f"time unit {time_unit!r}: one of {list(TIME_UNITS)}", bag=path, kind="stamps")
    if time_column is not None:
        found = [k for k, name in enumerate(names) if name == time_column]
        if not found:
            raise BagError(f"no time column {time_column!r} (the columns: {_some(names)})", bag=path, kind="names")
    else:
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
    if time_unit == "samples":
        if rate_hz is None or not rate_hz > 0:
            raise BagError(f"column {names[column]!r} counts samples: give the sample rate (--rate HZ)",
                           bag=path, kind="stamps")
        t = t / float(rate_hz)
    elif time_unit is not None:
        t = t * TIME_UNITS[time_unit]
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
    _check_time_unit(path, names[column], values[:, column], t, time_unit)
    return t, column


MIN_INTERVAL_S = 1.0 / 50_000.0
"""Shortest median sample interval believed (s): no robot controller logs joint states faster than 50 kHz."""
MAX_INTERVAL_S = 0.5
"""Longest median sample interval believed (s): a log at 2 Hz or slower has its times in another unit."""
MAX_TIME_S = 1e10
"""Largest time believed (s, 317 years): beyond it the stamps are epoch nanoseconds or microseconds."""


def _check_time_unit(path: Path, column: str, raw: np.ndarray, t: np.ndarray, time_unit: str | None) -> None:
    """Refuse a time column whose declared (or assumed) unit contradicts its own rate and magnitude.

    ``raw`` is the column as written, ``t`` the times in seconds after ``time_unit``. A log in seconds declared
    ms/us/ns comes out faster than 50 kHz; one in ms declared seconds slower than 2 Hz; epoch stamps in ns
    declared seconds (or ms) centuries long; a sample index holds whole numbers. Each refusal names the unit
    the data's own steps suggest.
    """
    declared = "seconds (no --time-unit)" if time_unit is None else f"--time-unit {time_unit}"
    raw_step = float(np.median(np.diff(raw)))
    suggestion = _unit_for_step(raw_step, float(np.max(np.abs(raw))))
    hint = f"its median step {raw_step:.6g} looks like {suggestion}" if suggestion else "check its unit"
    if time_unit == "samples":
        fractional = np.flatnonzero(np.abs(raw - np.rint(raw)) > 1e-6)
        if fractional.size:
            k = int(fractional[0])
            raise BagError(f"column {column!r}: {raw[k]:.9g} at line {k + 2} is not a whole sample index "
                           f"(--time-unit samples); {hint}: give --time-unit {suggestion or 's'}", bag=path,
                           kind="stamps")
        return
    median = float(np.median(np.diff(t)))
    largest = float(np.max(np.abs(t)))
    if largest > MAX_TIME_S:
        raise BagError(f"column {column!r}: time {largest:.6g} s with {declared} is {largest / 3.15576e7:.3g} years; "
                       f"the stamps look like {suggestion or 'epoch nanoseconds'}: give --time-unit "
                       f"{suggestion or 'ns'}", bag=path, kind="stamps")
    if median < MIN_INTERVAL_S or median >= MAX_INTERVAL_S:
        rate = f"{1.0 / median:.6g} Hz" if median > 0 else "an infinite rate"
        fix = (f"give --time-unit {suggestion}" if suggestion else "give its unit: --time-unit s, ms, us, ns")
        if abs(raw_step - round(raw_step)) < 1e-9 and raw_step >= 1:
            fix += " (or samples with --rate HZ if it counts samples)"
        raise BagError(f"column {column!r}: median interval {median:.6g} s with {declared} ({rate}, not a "
                       f"robot log's 2 Hz to 50 kHz); {hint}: {fix}", bag=path, kind="stamps")


def _unit_for_step(step: float, largest: float) -> str | None:
    """The time unit in which a median step of ``step`` (and stamps up to ``largest``) is a 2 Hz-50 kHz log."""
    for unit in ("s", "ms", "us", "ns"):
        seconds = step * TIME_UNITS[unit]
        if MIN_INTERVAL_S <= seconds < MAX_INTERVAL_S and largest * TIME_UNITS[unit] <= MAX_TIME_S:
            return unit
    return None


def _some(names: Sequence[str], count: int = 8) -> str:
    """The first ``count`` names, for messages about a file of many columns."""
    shown = ", ".join(names[:count])
    return shown + (f", ... ({len(names)} columns)" if len(names) > count else "")


def _columns(source: CsvSource, names: list[str], time_column: int | None, schema: ColumnSchema | None,
             joints: Sequence[str]) -> list[tuple[int, str, str, str | None]]:
    """``(index, column name, joint, field)`` of the file's data columns (field None: unknown).

    With a schema, exactly its columns (of ``source.field`` only, when the file holds one field), each
    required; without, every column but the time, its field from its name's suffix or from the file.
    """
    if schema is not None:
        wanted = [(column, joint, field) for (field, joint), column in schema.columns(joints).items()
                  if source.field in (None, field)]
        if not wanted:
            raise BagError("the column schema has no joints (give its joints: list)", bag=source.path,
                           kind="names")
        index = {name: k for k, name in enumerate(names)}
        missing = [column for column, _, _ in wanted if column not in index]
        if missing:
            raise BagError(f"no column {missing[0]!r} of the column schema ({len(missing)} missing; the file has "
                           f"{_some(names)})", bag=source.path, kind="names")
        return [(index[column], column, joint, field) for column, joint, field in wanted]
    out = []
    for k, column in enumerate(names):
        if k == time_column:
            continue
        joint, field = _split_field(column)
        if source.field is not None:
            if field not in (None, source.field):
                joint = column  # a joint name that happens to end like a field
            field = source.field
        out.append((k, column, joint, field))
    return out


SWAP_EVIDENCE = (0.5, 0.9)
"""Correlations: below the first, d/dt of the positions is not the velocity; above the second, d/dt of the
velocity columns is the position columns (then the two fields are exchanged)."""


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    scale = float(np.sqrt((a @ a) * (b @ b)))
    return float(a @ b) / scale if scale > 0 else 0.0


def _check_not_swapped(path: Path, t: np.ndarray, position: np.ndarray, velocity: np.ndarray,
                       schema: ColumnSchema | None) -> None:
    """Refuse position and velocity columns that are each other's: for most joints (samples, joints) with both,
    the time derivative of the 'velocity' columns follows the 'position' columns (correlation above
    ``SWAP_EVIDENCE[1]``) while that of the 'position' columns does not follow the 'velocity' ones (below
    ``SWAP_EVIDENCE[0]``; for an oscillation it follows minus the position). Correlation ignores units."""
    both = [j for j in range(position.shape[1]) if np.all(np.isfinite(velocity[:, j]))]
    if len(t) < 8 or not both or not np.all(np.diff(t) > 0):
        return
    forward = [_correlation(np.gradient(position[:, j], t), velocity[:, j]) for j in both]
    backward = [_correlation(np.gradient(velocity[:, j], t), position[:, j]) for j in both]
    swapped = sum(f < SWAP_EVIDENCE[0] and b > SWAP_EVIDENCE[1] for f, b in zip(forward, backward))
    if 2 * swapped <= len(both):
        return
    if schema is not None and not schema.by_index:
        given = dict(schema.patterns)
        where = (f"--columns position={given.get('position')},velocity={given.get('velocity')}: exchange the two "
                 "patterns")
    elif schema is not None:
        where = "--columns: exchange the position and velocity column ranges"
    else:
        where = "check the column names, or give --columns position=...,velocity=..."
    raise BagError(
        f"the position and velocity columns look swapped for {swapped} of {len(both)} joints: d/dt of the "
        f"'velocity' columns follows the 'position' ones (correlation {np.median(backward):.2f}), d/dt of the "
        f"'position' columns does not follow the 'velocity' ones ({np.median(forward):.2f}); {where}",
        bag=path, kind="names",
    )


def read_csv_series(
    sources: Sequence[CsvSource | str | Path],
    *,
    rate_hz: float | None = None,
    joint_map: Mapping[str, str] | None = None,
    max_gap: float = DEFAULT_MAX_GAP,
    resample: bool = True,
    time_unit: str | None = None,
    schema: ColumnSchema | None = None,
    joints: Sequence[str] = (),
) -> JointStateSeries:
    """One joint-state series from CSV files (module docstring for the conventions).

    Args:
        sources: the files (:func:`csv_source` strings or :class:`CsvSource`).
        rate_hz: sample rate when the files have no time column, or when ``time_unit`` is ``samples`` (Hz).
        time_unit: unit of the time column (:data:`TIME_UNITS`); None: seconds, and a median interval
            of 0.5 or more is refused as probably another unit.
        schema: the vendor's column layout (:class:`ColumnSchema`); None: the naming conventions.
        joints: the joints a schema without its own list indexes (the robot's measured joints or motors).
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
        names, values = _read_table(source.path, headerless=schema is not None and schema.by_index)
        t, time_column = _time(source.path, names, values, rate_hz, time_unit, schema.time if schema else None)
        if times is None:
            times = t
        elif len(t) != len(times) or np.max(np.abs(t - times)) > _TIME_TOLERANCE_S:
            raise BagError(
                f"{len(t)} samples from t={t[0]:.6g} to {t[-1]:.6g} s, but {first.name} has {len(times)} from "
                f"{times[0]:.6g} to {times[-1]:.6g} s: the files must share their time stamps",
                bag=source.path, kind="stamps",
            )
        for k, column, joint, field in _columns(source, names, time_column, schema, joints):
            if field is None:
                raise BagError(
                    f"column {column!r}: which field is it? name it <joint>_position, _velocity or _effort, "
                    "give one file per field as position=FILE, velocity=FILE, effort=FILE, or describe the "
                    "columns (--columns position=Position{i},effort=Torque{i})",
                    bag=source.path, kind="names",
                )
            joint = joint_map.get(joint, joint)
            if joint in fields[field]:
                raise BagError(f"column {column!r}: {field} of {joint!r} given twice (also in "
                               f"{origin[(field, joint)].name}; several runs: give each as --run FILE)",
                               bag=source.path, kind="names")
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
    _check_not_swapped(first, times, stack("position"), stack("velocity"), schema)
    stamps = np.rint(times * 1e9).astype(np.int64)
    series = JointStateSeries(
        bag_path=first, topic="csv", names=names, stamp_ns=stamps, t=times, bag_time_ns=stamps,
        position=stack("position"), velocity=stack("velocity"), effort=stack("effort"), notes=notes,
    )
    return resample_uniform(series, max_gap=max_gap) if resample else series
