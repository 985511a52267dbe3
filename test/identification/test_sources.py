"""``pardyn identify`` on data pardyn did not write: foreign rosbag2 bags and CSV files, good and bad.

A foreign bag is written here with ``rosbags`` directly (sqlite3 storage, as
``ros2 bag record`` on Humble; the topic, joint order and names of another
setup, extra joints and topics). The good one carries the TX40's real data and
must give what the CSV files give; every bad input must give one clear line
(exit 2) naming the file or bag, the topic and the joint at fault.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from pardyn.cli import main


STORE = get_typestore(Stores.ROS2_HUMBLE)
TX40 = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "staubli_tx40"
UR5E = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]


def foreign_bag(path: Path, topic: str, stamps_ns: np.ndarray, names: list[str], position: np.ndarray,
                effort: np.ndarray | None) -> Path:
    """A sqlite3 rosbag2 bag written by rosbags alone, with another topic beside the joint states.

    ``stamps_ns`` (N,) int: header stamps (the bag time is 1 us later, as a receive time).
    """
    types = STORE.types
    position = np.ascontiguousarray(position)
    effort = None if effort is None else np.ascontiguousarray(effort)
    with Writer(path, version=8, storage_plugin=StoragePlugin.SQLITE3) as writer:
        joints = writer.add_connection(topic, "sensor_msgs/msg/JointState", typestore=STORE)
        other = writer.add_connection("/diagnostics_values", "std_msgs/msg/Float64MultiArray", typestore=STORE)
        layout = types["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
        for k, stamp in enumerate(stamps_ns):
            sec, nanosec = divmod(int(stamp), 1_000_000_000)
            header = types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec),
                                                  frame_id="")
            message = types["sensor_msgs/msg/JointState"](
                header=header, name=names, position=position[k], velocity=np.zeros(0),
                effort=np.zeros(0) if effort is None else effort[k])
            writer.write(joints, int(stamp) + 1000, STORE.serialize_cdr(message, "sensor_msgs/msg/JointState"))
            if k % 10 == 0:
                extra = types["std_msgs/msg/Float64MultiArray"](layout=layout, data=np.array([1.0, 2.0]))
                writer.write(other, int(stamp) + 2000, STORE.serialize_cdr(extra, "std_msgs/msg/Float64MultiArray"))
    return path


def fails(arguments: list[str], capsys) -> str:
    assert main(arguments) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("pardyn identify: ") and "\n" not in error and "Traceback" not in error
    return error


@pytest.mark.skipif(not TX40.is_dir(), reason=f"shared datasets absent: {TX40} not found")
def test_foreign_sqlite3_bag_of_the_tx40_gives_what_the_csv_files_give(tmp_path, tx40_arguments):
    positions = np.loadtxt(TX40 / "data" / "pos_read_data.csv", delimiter=",", skiprows=1)
    currents = np.loadtxt(TX40 / "data" / "curr_data.csv", delimiter=",", skiprows=1)
    stamps = 1_700_000_000 * 10**9 + 200_000 * np.arange(len(positions), dtype=np.int64)  # 5 kHz, epoch time
    order = [3, 0, 5, 1, 4, 2]  # another driver's joint order, and a gripper the robot does not have
    names = [f"Joint_{k + 1}" for k in order] + ["gripper"]
    bag = foreign_bag(tmp_path / "tx40_bag", "/tx40/motor_states", stamps, names,
                      np.column_stack([positions[:, order], np.zeros(len(stamps))]),
                      np.column_stack([currents[:, order], np.zeros(len(stamps))]))
    arguments = tx40_arguments(tmp_path)
    start = arguments.index("--csv")
    arguments[start:start + 6] = ["--bag", str(bag), "--topic", "motor_states", "--effort-delay", "0"]
    arguments[arguments.index("--out") + 1] = str(tmp_path / "from_bag.json")
    assert main(arguments) == 0
    from_bag = json.loads((tmp_path / "from_bag.json").read_text())
    (tmp_path / "csv").mkdir()
    assert main(tx40_arguments(tmp_path / "csv")) == 0
    from_csv = json.loads((tmp_path / "csv" / "tx40.json").read_text())
    values = {row["name"]: row["value"] for row in from_csv["base_parameters"]}
    assert {row["name"] for row in from_bag["base_parameters"]} == set(values)
    for row in from_bag["base_parameters"]:
        assert row["value"] == pytest.approx(values[row["name"]], rel=1e-6, abs=1e-9)


def test_bag_with_a_joint_missing_or_without_efforts_is_named(tmp_path, capsys):
    stamps = 2_000_000 * np.arange(200, dtype=np.int64)
    motion = 0.3 * np.sin(np.outer(stamps * 1e-9, np.arange(1, 7)))  # (200, 6) rad
    bag = foreign_bag(tmp_path / "no_wrist", "/arm/joint_states", stamps, UR5E[:5], motion[:, :5], np.ones((200, 5)))
    error = fails(["identify", "--robot", "ur5e", "--bag", str(bag), "--topic", "/arm/joint_states",
                   "--out", str(tmp_path / "r.json")], capsys)
    assert "no_wrist: topic /arm/joint_states: joints ['wrist_3_joint'] not recorded" in error
    bag = foreign_bag(tmp_path / "no_effort", "/arm/joint_states", stamps, UR5E, motion, None)
    error = fails(["identify", "--robot", "ur5e", "--bag", str(bag), "--topic", "joint_states",
                   "--out", str(tmp_path / "r.json")], capsys)
    assert "no_effort: topic /arm/joint_states: no effort for shoulder_pan_joint at t=0.000000 s" in error
    error = fails(["identify", "--robot", "ur5e", "--bag", str(bag), "--topic", "/joint_states",
                   "--out", str(tmp_path / "r.json")], capsys)
    assert "missing topic; the bag has ['/arm/joint_states', '/diagnostics_values']" in error


def write_csv(path: Path, header: list[str], data: np.ndarray) -> str:
    np.savetxt(path, data, delimiter=",", header=",".join(header), comments="")
    return str(path)


@pytest.mark.parametrize("problem", ["missing column", "degrees", "milli newton metres", "nan", "time back"])
def test_bad_csv_files_give_one_clear_line(tmp_path, capsys, problem):
    t = np.arange(300) * 0.004
    position = 0.5 * np.sin(np.outer(t, np.arange(1, 7)))
    effort = 10.0 * np.cos(np.outer(t, np.arange(1, 7)))
    names = list(UR5E)
    if problem == "degrees":
        position = np.degrees(position) * 4
    if problem == "milli newton metres":
        effort = effort * 1000
    if problem == "nan":
        effort[123, 2] = np.nan
    if problem == "time back":
        t[200] = t[150]
    effort_names = names[:5] if problem == "missing column" else names
    arguments = ["identify", "--robot", "ur5e",
                 "--csv", write_csv(tmp_path / "q_position.csv", ["t", *names], np.column_stack([t, position])),
                 "--csv", write_csv(tmp_path / "tau_effort.csv", ["t", *effort_names],
                                    np.column_stack([t, effort[:, :len(effort_names)]])),
                 "--out", str(tmp_path / "r.json")]
    error = fails(arguments, capsys)
    expected = {
        "missing column": "q_position.csv: topic csv: no effort for wrist_3_joint at t=0.000000 s",
        "degrees": "joint 'shoulder_pan_joint': positions from",
        "milli newton metres": "joint 'shoulder_pan_joint': efforts up to",
        "nan": "tau_effort.csv: column 'elbow_joint': nan at line 125",
        "time back": "q_position.csv: column 't': time goes back at line 202",
    }[problem]
    assert expected in error
    if problem == "degrees":
        assert "degrees instead of radians" in error
