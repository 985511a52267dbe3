"""``pardyn bag from-csv``: a rosbag2 MCAP bag of sensor_msgs/JointState from CSV files, to replay with ROS tools."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from pardyn.bags.csv_series import read_csv_series
from pardyn.bags.joint_states import write_joint_states
from pardyn.cli.data import add_data_arguments, joint_map
from pardyn.errors import InputError
from pardyn.identification.sources import rename_joints

HELP = "bag tools: 'from-csv' writes a rosbag2 MCAP bag of JointState messages from CSV files"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("from-csv",), help="from-csv: CSV files -> a new bag")
    add_data_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help="bag directory to create (never overwritten)")
    parser.add_argument("--topic", default="/joint_states", help="topic of the messages (default /joint_states)")
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap", help="storage (default mcap)")


def run(args: argparse.Namespace) -> int:
    if not args.csv:
        raise InputError("give the CSV files: --csv FILE (repeat)")
    series = rename_joints(read_csv_series(args.csv, rate_hz=args.rate, resample=False), joint_map(args.joint_map))
    for note in series.notes:
        print(f"note: {note}")
    fields = {}
    for name in ("velocity", "effort"):
        values = getattr(series, name)
        complete = np.all(np.isfinite(values), axis=0)
        if complete.all():
            fields[name] = values
        elif complete.any():
            print(f"note: {name} of {[n for n, c in zip(series.names, complete) if not c]} missing: "
                  f"no {name} written (JointState carries all joints' {name} or none)")
    path = write_joint_states(args.out, series.t, series.names, series.position, fields.get("velocity"),
                              fields.get("effort"), topic=args.topic, storage=args.storage)
    print(f"wrote {path}: {len(series)} messages on {args.topic}, joints {list(series.names)}, "
          f"t = {series.t[0]:.6g} to {series.t[-1]:.6g} s")
    return 0
