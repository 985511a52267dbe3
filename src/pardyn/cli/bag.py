"""``pardyn bag from-csv|info|repair``: bag tools.

* ``from-csv``: a rosbag2 MCAP bag of sensor_msgs/JointState from CSV files, to replay with ROS tools;
* ``info BAG``: whether the bag was closed, its storage files, topics, types, message counts and time span, and
  the messages the recorder lost on the way (:mod:`pardyn.bags.gaps`);
* ``repair BAG``: rebuild a killed recorder's MCAP bag from its complete chunks
  (:func:`pardyn.bags.repair_bag`); a file that is not MCAP is an error (nothing to repair).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from rosbags.rosbag2.errors import ReaderError

from pardyn.recordings.csv_series import read_csv_series
from pardyn.bags import bag_status, repair_bag
from pardyn.bags.errors import BagError
from pardyn.bags.gaps import read_gap_records
from pardyn.bags.repair import verify_bag
from pardyn.bags.joint_states import write_joint_states
from pardyn.cli.data import add_data_arguments, csv_options, joint_map
from pardyn.errors import InputError
from pardyn.identification.sources import rename_joints
from pardyn.textio import shown

HELP = ("bag tools: 'from-csv' writes a rosbag2 MCAP bag of JointState messages from CSV files, "
        "'info BAG' describes a bag, 'repair BAG' rebuilds a killed recorder's bag")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("from-csv", "info", "repair"),
                        help="from-csv: CSV files -> a new bag; info: describe BAG; repair: rebuild a killed BAG")
    parser.add_argument("bag", nargs="?", type=Path, help="info, repair: the bag directory or its .mcap file")
    add_data_arguments(parser)
    parser.add_argument("--out", type=Path, help="from-csv: bag directory to create (never overwritten)")
    parser.add_argument("--topic", default="/joint_states", help="topic of the messages (default /joint_states)")
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap", help="storage (default mcap)")


def _info(bag: Path) -> None:
    status = bag_status(bag)
    files = ", ".join(str(file) for file in status.files)
    if status.complete and status.storage == "mcap":
        damage = verify_bag(status)
        if damage:
            print(f"{status.path}: damaged: {damage}")
            print(f"  `pardyn bag repair {status.path}` rebuilds it from the intact chunks")
            return
    if not status.complete:
        print(f"{status.path}: not closed: {status.problem} ({status.storage}: {files})")
        if status.storage == "mcap":
            print(f"  `pardyn bag repair {status.path}` recovers its complete chunks")
        return
    try:
        _describe(status, files)
    except (ReaderError, KeyError, TypeError, ValueError, AttributeError) as error:
        raise BagError(f"cannot read the bag ({type(error).__name__}: {shown(str(error), 160)}); is metadata.yaml "
                       "intact?", bag=status.path, kind="format") from None


def _describe(status, files: str) -> None:
    from rosbags.rosbag2 import Reader  # noqa: PLC0415

    lines = []
    with Reader(status.path if status.path.is_dir() else status.path.parent) as reader:
        held = _mcap_message_count(status) if status.storage == "mcap" else None
        if reader.message_count < 0 or (held is not None and held != reader.message_count):
            print(f"{status.path}: damaged: metadata.yaml says {reader.message_count} messages, the storage files "
                  f"hold {held if held is not None else 'a different number'}\n"
                  f"  move {status.path}/metadata.yaml away, then `pardyn bag repair {status.path}` writes it from the "
                  "intact chunks")
            return
        span = (reader.end_time - reader.start_time) * 1e-9 if reader.message_count else 0.0
        lines.append(f"{status.path}: complete, {status.storage} ({files}), {reader.message_count} messages over {span:.3f} s")
        counts: dict[str, int] = {}
        for connection in reader.connections:
            counts[connection.topic] = counts.get(connection.topic, 0) + connection.msgcount
        types = {connection.topic: connection.msgtype for connection in reader.connections}
        for topic in sorted(counts):
            lines.append(f"  {topic}: {counts[topic]} messages ({types[topic]})")
    # the recorder's count of the messages lost on the way to the bag (pardyn.bags.gaps)
    lines += [f"  losses: {record.describe()}" for record in read_gap_records(status.path if status.path.is_dir()
                                                                              else status.path.parent)]
    print("\n".join(lines))


def _mcap_message_count(status) -> int | None:
    """The messages the MCAP files' own summaries count (None: a file without statistics)."""
    from mcap.reader import make_reader  # noqa: PLC0415

    total = 0
    for file in status.files:
        with open(file, "rb") as stream:
            summary = make_reader(stream).get_summary()
        if summary is None or summary.statistics is None:
            return None
        total += summary.statistics.message_count
    return total


def _repair(bag: Path) -> None:
    report = repair_bag(bag)
    if not report.repaired:
        print(f"{report.bag}: complete, nothing to repair")
        return
    topics = ", ".join(f"{topic}: {count}" for topic, count in sorted(report.messages.items()))
    kept = f"; the damaged file is kept as {report.damaged_file}" if report.damaged_file else ""
    print(f"{report.bag}: {report.problem}; recovered {report.message_count} messages in {report.chunks} complete "
          f"chunks ({topics}), discarded {report.discarded_bytes} bytes after the last complete record{kept}")


def run(args: argparse.Namespace) -> int:
    if args.action in ("info", "repair"):
        if args.bag is None:
            raise InputError(f"bag {args.action}: give the bag (a directory or its .mcap file)")
        (_info if args.action == "info" else _repair)(args.bag)
        return 0
    if args.out is None:
        raise InputError("bag from-csv: give the bag to create: --out DIR")
    if not args.csv:
        raise InputError("give the CSV files: --csv FILE (repeat)")
    series = rename_joints(read_csv_series(args.csv, resample=False, **csv_options(args)), joint_map(args.joint_map))
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
