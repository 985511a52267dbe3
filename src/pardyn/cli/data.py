"""Options shared by the commands that read measured data: CSV files and their layout, sample rate and time unit,
joint-name map, runs (CSV files, bags, folders of them), held-out part."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from pardyn.bags.joint_states import JointStateSeries
from pardyn.bags.resample import DEFAULT_MAX_GAP
from pardyn.cli.options import number
from pardyn.errors import InputError
from pardyn.recordings import READERS, ReadOptions, read_series, reader_for
from pardyn.recordings.csv_series import TIME_UNITS, column_schema, csv_source
from pardyn.textio import load_yaml

__all__ = ["add_data_arguments", "apply_drive_gains", "csv_options", "drive_gains", "joint_map", "known_payload",
           "read_runs", "split_holdout"]



def add_data_arguments(parser: argparse.ArgumentParser, *, runs: bool = False) -> None:
    """The data options; ``runs``: also ``--run`` and ``--validate`` (several runs, CSV files or bags)."""
    parser.add_argument("--csv", action="append", default=[], type=csv_source,
                        help="CSV file of one run (repeat for one file per field: position=FILE, velocity=FILE, "
                             "effort=FILE, or a file name saying pos/vel/effort/torque/current); see README "
                             "'Your own data'")
    if runs:
        parser.add_argument("--run", action="append", default=[], type=Path,
                            help="one run (repeat): a CSV file with every field, a bag, or a folder of runs "
                                 "(each CSV file and bag in it a run)")
        parser.add_argument("--validate", action="append", default=[], type=Path,
                            help="held-out run (repeat): a CSV file, a bag or a folder of runs")
    parser.add_argument("--rate", type=number(1e-3, 1e7, unit="Hz"),
                        help="sample rate in Hz of CSV files without a time column, or whose time counts samples")
    parser.add_argument("--time-unit", choices=tuple(TIME_UNITS),
                        help="unit of the CSV time column (default s); samples: a sample index, with --rate")
    parser.add_argument("--columns",
                        help="the CSV column layout: 'position=Position{i},velocity=Velocity{i},effort=Torque{i}' "
                             "({i}: the joint's index from 1, {joint}: its name), column indices from 0 for a "
                             "file without header ('time=0,position=1-6,effort=7-12'), or a YAML file of that mapping, "
                             "optionally with joints: [...], time: COLUMN, first_index: 0; other columns ignored")
    if runs:
        parser.add_argument("--drive-gains",
                            help="efforts logged as motor currents (A): each joint's drive gain, torque constant x "
                                 "gear ratio (N m/A, N/A for a prismatic joint): 'joint_1=12.5,joint_2=12.5' or a "
                                 "YAML file with drives: {gain: {joint_1: 12.5, ...}} (or drives: [{joints: [...], "
                                 "gain: 12.5}])")
    parser.add_argument("--joint-map",
                        help="names in the data -> the robot's joints (or transmission motors): "
                             "'a=joint_1,b=joint_2' or a YAML file of such a mapping")


def joint_map(text: str | None) -> dict[str, str]:
    """``"a=x,b=y"`` or the path of a YAML mapping -> ``{"a": "x", "b": "y"}``."""
    if not text:
        return {}
    path = Path(text)
    if path.suffix in (".yaml", ".yml"):
        mapping = load_yaml(path, what="--joint-map file")
        if not isinstance(mapping, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in mapping.items()):
            raise InputError(f"--joint-map: {path} must map names to names")
        return dict(mapping)
    out = {}
    for item in text.split(","):
        name, sep, target = item.partition("=")
        if not sep or not name.strip() or not target.strip():
            raise InputError(f"--joint-map: expected NAME=JOINT pairs separated by commas, got {item!r}")
        out[name.strip()] = target.strip()
    return out


def drive_gains(text: str | None) -> dict[str, float]:
    """``--drive-gains``: ``"j1=12.5,j2=9"`` or a YAML file with ``drives: {gain: {j1: 12.5}}`` or
    ``drives: [{joints: [j1, j2], gain: 12.5}]`` -> ``{joint: gain}`` (N m/A, or N/A)."""
    if not text:
        return {}
    path = Path(text)
    if path.suffix in (".yaml", ".yml"):
        document = load_yaml(path, what="--drive-gains file")
        drives = document.get("drives") if isinstance(document, dict) else None
        if isinstance(drives, dict) and isinstance(drives.get("gain"), dict):
            pairs = list(drives["gain"].items())
        elif isinstance(drives, list) and all(isinstance(d, dict) and "joints" in d and "gain" in d for d in drives):
            pairs = [(joint, d["gain"]) for d in drives for joint in d["joints"]]
        else:
            raise InputError(f"--drive-gains: {path}: expected drives: {{gain: {{JOINT: N m/A, ...}}}} or "
                             "drives: [{joints: [...], gain: N m/A}]")
    else:
        pairs = [item.partition("=")[::2] for item in text.split(",")]
    gains = {}
    for joint, value in pairs:
        try:
            gain = float(value)
        except (TypeError, ValueError):
            gain = float("nan")
        if not str(joint).strip() or not np.isfinite(gain) or gain == 0.0:
            raise InputError(f"--drive-gains: {joint}={value}: a joint name and a non-zero gain in N m/A")
        gains[str(joint).strip()] = gain
    return gains


def known_payload(path: Path, frame: str):
    """``--payload``: a YAML file ``payload: {mass: KG, com: [x, y, z], inertia: [ixx, iyy, izz, ixy, ixz, iyz],
    frame: NAME}`` (com in m from the frame's origin, inertia in kg m^2 about the com in the frame's axes, both
    optional: a point mass at the origin; frame optional: ``frame``) -> a
    :class:`~pardyn.plants.payload.Payload`.

    Raises:
        InputError: a missing file, a missing or non-numeric field, an inertia no body has (naming the file).
    """
    from pardyn.plants.payload import Payload  # noqa: PLC0415

    document = load_yaml(path, what="--payload file")
    fields = document.get("payload", document) if isinstance(document, dict) else None
    if not isinstance(fields, dict) or "mass" not in fields:
        raise InputError(f"--payload: {path}: expected payload: {{mass: KG, com: [X, Y, Z], inertia: [IXX, IYY, IZZ, "
                         "IXY, IXZ, IYZ], frame: NAME}} (com in m, inertia in kg m^2 about the com; mass required)")
    unknown = sorted(set(fields) - {"mass", "com", "inertia", "frame"})
    if unknown:
        raise InputError(f"--payload: {path}: unknown fields {unknown} (mass, com, inertia, frame)")
    try:
        mass = float(fields["mass"])
        com = np.array(fields.get("com", [0.0, 0.0, 0.0]), dtype=float)
        six = np.array(fields.get("inertia", [0.0] * 6), dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"--payload: {path}: mass, com and inertia must be numbers") from None
    if six.shape != (6,):
        raise InputError(f"--payload: {path}: inertia: 6 numbers, ixx iyy izz ixy ixz iyz (kg m^2), got {six.tolist()}")
    xx, yy, zz, xy, xz, yz = six
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    try:
        return Payload(mass, com, inertia, str(fields.get("frame", frame)))
    except InputError as error:
        raise InputError(f"--payload: {path}: {error}") from None


def apply_drive_gains(runs: list, gains: dict[str, float], *, topic: str, what: str) -> list:
    """Efforts logged as currents (A) -> joint torques: each joint's effort times its gain (N m/A); a data note
    says so. Bags are read into series (``topic``) for it.

    Raises:
        InputError: a run whose joints the gains do not cover, or a gain for a joint no run has.
    """
    if not gains:
        return runs
    out = []
    for run in runs:
        series = read_series(run, ReadOptions(topic=topic))
        missing = [name for name in series.names if name not in gains]
        unknown = sorted(set(gains) - set(series.names))
        if missing or unknown:
            raise InputError(f"--drive-gains: {series.bag_path}: "
                             + (f"no gain for {missing}" if missing else f"no joint {unknown} in the data")
                             + f" (the data's joints: {list(series.names)})")
        factor = np.array([gains[name] for name in series.names])
        note = (f"{series.bag_path.name}: efforts logged in A, times the drive gains ({what}, N m/A): "
                + ", ".join(f"{name} {gain:g}" for name, gain in zip(series.names, factor)))
        out.append(replace(series, effort=series.effort * factor, notes=(*series.notes, note)))
    return out


def csv_options(args: argparse.Namespace, joints: tuple[str, ...] = ()) -> dict:
    """Keyword arguments of :func:`~pardyn.recordings.csv_series.read_csv_series` from the data options.

    ``joints``: what a ``--columns`` schema without its own joint list indexes ({i} = 1 is the first).
    """
    from pardyn.bags.errors import BagError  # noqa: PLC0415

    try:
        schema = column_schema(args.columns) if args.columns else None
    except BagError as error:
        raise InputError(f"--columns: {str(error).removeprefix('--columns: ')}") from None
    return {"rate_hz": args.rate, "time_unit": args.time_unit, "schema": schema, "joints": joints,
            "max_gap": getattr(args, "max_gap", DEFAULT_MAX_GAP)}


def read_runs(paths: list[Path], options: dict) -> list:
    """Runs from paths, each by the reader of its format (:func:`pardyn.recordings.reader_for`): a table (CSV,
    MATLAB: every field in it) is read into a series, a bag stays a path (read with the topic setting), a folder
    of runs gives each recording in it (name order).

    Raises:
        InputError: a path that does not exist, or a folder without runs.
        BagError: a CSV file that cannot be read (naming file, column, line).
    """
    out: list = []
    for path in paths:
        if not path.exists():
            raise InputError(f"{path}: no such file or folder (a run is a CSV file, a bag or a folder of runs)")
        reader = reader_for(path)
        if reader is None:  # a folder of runs
            inside = sorted(p for p in path.iterdir() if reader_for(p, default=False) is not None)
            if not inside:
                raise InputError(f"{path}: a folder without runs (no recording of {list(READERS)} in it)")
            out += read_runs(inside, options)
        elif reader.by_topic:
            out.append(path)
        else:
            out.append(reader.read(path, ReadOptions(**options)))
    return out


def _cut(series: JointStateSeries, keep: np.ndarray, tag: str) -> JointStateSeries:
    return replace(series, stamp_ns=series.stamp_ns[keep], t=series.t[keep], bag_time_ns=series.bag_time_ns[keep],
                   position=series.position[keep], velocity=series.velocity[keep], effort=series.effort[keep],
                   bag_path=Path(f"{series.bag_path}{tag}"))


def split_holdout(runs: list, fraction: float, *, topic: str) -> tuple[list[JointStateSeries], list[JointStateSeries]]:
    """Each run split in time: the first ``1 - fraction`` to identify, the last ``fraction`` to validate."""
    if not 0.0 < fraction < 0.9:
        raise InputError(f"--holdout: a fraction between 0 and 0.9, got {fraction}")
    fitted, held = [], []
    for run in runs:
        series = read_series(run, ReadOptions(topic=topic))
        split = series.t[0] + (1.0 - fraction) * (series.t[-1] - series.t[0])
        first = series.t < split
        fitted.append(_cut(series, first, " (first part)"))
        held.append(_cut(series, ~first, " (held out)"))
    return fitted, held
