"""Options shared by the commands that read measured data: CSV files, sample rate, joint-name map, held-out part."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np
from pardyn.bags.csv_series import csv_source
from pardyn.bags.joint_states import JointStateSeries, read_joint_states
from pardyn.cli.options import number
from pardyn.errors import InputError
from pardyn.textio import load_yaml

__all__ = ["add_data_arguments", "joint_map", "split_holdout"]


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--csv", action="append", default=[], type=csv_source,
                        help="CSV file of one run (repeat for one file per field: position=FILE, velocity=FILE, "
                             "effort=FILE, or a file name saying pos/vel/effort/torque/current); see README "
                             "'Your own data'")
    parser.add_argument("--rate", type=number(1e-3, 1e7, unit="Hz"), help="sample rate in Hz of CSV files without a time column")
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
        series = run if isinstance(run, JointStateSeries) else read_joint_states(run, topic, drop_resent=True,
                                                                                  period_tolerance=None)
        split = series.t[0] + (1.0 - fraction) * (series.t[-1] - series.t[0])
        first = series.t < split
        fitted.append(_cut(series, first, " (first part)"))
        held.append(_cut(series, ~first, " (held out)"))
    return fitted, held
