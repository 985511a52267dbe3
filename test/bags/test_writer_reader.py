"""Tests of pardyn.bags: rosbag2 bags written and read with rosbags, validation, crash repair.

Independent references:

* the CDR bytes are compared with those of rclpy's C type support
  (``rclpy.serialization``), a separate implementation of the ROS 2 wire format,
  and bags written from rclpy bytes are read back by rosbags (and conversely);
* the type hashes stored in the bag are compared with the RIHS01 hashes the ROS
  build generated (``share/<pkg>/msg/<Type>.json`` of the installed interfaces),
  the stored definitions with the installed ``.msg`` files: what ``ros2 bag
  play`` checks before publishing;
* values round-trip bit for bit (float64 compared as uint64 bit patterns);
* crash safety: the file sizes observed after every flushed chunk tell which
  messages a truncated file must give back.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import yaml
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.rosbag2 import Reader

from pardyn.bags import (
    BagError,
    BagIncompleteError,
    BagWriter,
    FlushPolicy,
    bag_status,
    read_joint_states,
    read_messages,
    repair_bag,
    write_joint_states,
)
from pardyn.bags.cdr import deserialize_cdr, stamp_ns_from_cdr, typestore_for
from pardyn.bags.checks import check_stamps
from pardyn.bags.errors import format_time
from pardyn.bags.joint_states import joint_state_message
from pardyn.bags.repair import scan_mcap
from pardyn.bags.writer import available_bag_path
from pardyn.errors import InputError

STORAGES = ["mcap", "sqlite3"]
TYPES = [
    "sensor_msgs/msg/JointState",
    "std_msgs/msg/Float64MultiArray",
    "geometry_msgs/msg/PoseStamped",
    "rosgraph_msgs/msg/Clock",
    "trajectory_msgs/msg/JointTrajectory",
]
TOPICS = {
    "sensor_msgs/msg/JointState": "/joint_states",
    "std_msgs/msg/Float64MultiArray": "/effort_controller/commands",
    "geometry_msgs/msg/PoseStamped": "/platform/pose",
    "rosgraph_msgs/msg/Clock": "/clock",
    "trajectory_msgs/msg/JointTrajectory": "/trajectory",
}
# awkward doubles: subnormal, extremes, negative zero, pi, a value with all mantissa bits set
DOUBLES = [5e-324, -1.7976931348623157e308, -0.0, np.pi, 1.0 - 2**-53, 123456.789e-12]


# --------------------------------------------------------------------------- helpers
def ts_messages(store, k: int) -> dict[str, object]:
    """One message of each type, values depending on ``k``, stamps at 1000 + k ms."""
    t = store.types
    sec, nanosec = 1000 + k // 1000, (k % 1000) * 1_000_000

    def header(frame: str):
        return t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec), frame_id=frame)

    values = np.roll(np.array(DOUBLES, dtype=np.float64), k)
    joint_state = t["sensor_msgs/msg/JointState"](
        header=header("sensors"),
        name=["leg1_joint1", "leg2_joint1", "ünïcode"],
        position=values[:3].copy(),
        velocity=values[3:].copy(),
        effort=np.array([], dtype=np.float64) if k % 2 else values[::-1][:3].copy(),
    )
    commands = t["std_msgs/msg/Float64MultiArray"](
        layout=t["std_msgs/msg/MultiArrayLayout"](
            dim=[t["std_msgs/msg/MultiArrayDimension"](label="joints", size=4, stride=4)], data_offset=k
        ),
        data=np.array([k, -k, 0.1 * k, DOUBLES[k % len(DOUBLES)]], dtype=np.float64),
    )
    pose = t["geometry_msgs/msg/PoseStamped"](
        header=header("base_link"),
        pose=t["geometry_msgs/msg/Pose"](
            position=t["geometry_msgs/msg/Point"](x=0.1 * k, y=-2.5, z=DOUBLES[k % len(DOUBLES)]),
            orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=np.sin(0.01 * k), w=np.cos(0.01 * k)),
        ),
    )
    clock = t["rosgraph_msgs/msg/Clock"](clock=t["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec))
    point = t["trajectory_msgs/msg/JointTrajectoryPoint"]
    trajectory = t["trajectory_msgs/msg/JointTrajectory"](
        header=header("base_link"),
        joint_names=["a", "b"],
        points=[
            point(
                positions=np.array([0.1 * i, k], dtype=np.float64),
                velocities=np.array([1.0, -1.0]),
                accelerations=np.array([], dtype=np.float64),
                effort=np.array([DOUBLES[i % len(DOUBLES)], 2.0]),
                time_from_start=t["builtin_interfaces/msg/Duration"](sec=i, nanosec=250_000_000 * i),
            )
            for i in range(3)
        ],
    )
    return dict(zip(TYPES, [joint_state, commands, pose, clock, trajectory], strict=True))


def assert_same(a, b, where: str = "message") -> None:
    """Field-by-field equality, float64 arrays bit for bit."""
    if hasattr(a, "__msgtype__"):
        assert getattr(b, "__msgtype__", None) == a.__msgtype__, where
        for name in a.__dataclass_fields__:
            if name != "__msgtype__":
                assert_same(getattr(a, name), getattr(b, name), f"{where}.{name}")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype == np.float64:
            assert np.array_equal(a.view(np.uint64), b.view(np.uint64)), where
        else:
            assert np.array_equal(a, b), where
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert np.float64(a).view(np.uint64) == np.float64(b).view(np.uint64), where
    else:
        assert a == b and type(a) is type(b), where


def rclpy_class(msgtype: str) -> type:
    package, kind, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def to_rclpy(message):
    """The rclpy message with the same field values as a typestore message."""
    result = rclpy_class(message.__msgtype__)()
    for name in result.get_fields_and_field_types():
        value = getattr(message, name)
        if hasattr(value, "__msgtype__"):
            value = to_rclpy(value)
        elif isinstance(value, list) and value and hasattr(value[0], "__msgtype__"):
            value = [to_rclpy(v) for v in value]
        elif isinstance(value, np.ndarray):
            value = value.tolist()
        setattr(result, name, value)
    return result


def share_dir(package: str) -> Path:
    """The installed share directory of a ROS package (AMENT_PREFIX_PATH, else this environment)."""
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p] + [sys.prefix]
    for prefix in prefixes:
        candidate = Path(prefix) / "share" / package
        if candidate.is_dir():
            return candidate
    raise AssertionError(f"ROS package {package} is not installed under {prefixes}")


def msg_fields(text: str) -> list[tuple[str, str]]:
    """(type without package, field name) of the fields of a .msg text (top-level section only)."""
    fields = []
    for line in text.split("=" * 80)[0].splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or "=" in line.split()[1 if len(line.split()) > 1 else 0]:
            continue
        kind, name = line.split()[:2]
        fields.append((kind.split("/")[-1], name))
    return fields


@pytest.fixture(scope="module")
def store():
    return typestore_for("kilted")


# --------------------------------------------------------------------------- message types and hashes
@pytest.mark.parametrize("msgtype", TYPES)
@pytest.mark.parametrize("distro", ["jazzy", "kilted"])
def test_type_hashes_and_definitions_are_those_of_ros(msgtype, distro):
    """The hash and definition stored for each type are the ones the ROS build generated."""
    store = typestore_for(distro)
    package, _, name = msgtype.split("/")
    generated = json.loads((share_dir(package) / "msg" / f"{name}.json").read_text())
    expected = next(h["hash_string"] for h in generated["type_hashes"] if h["type_name"] == msgtype)
    assert store.hash_rihs01(msgtype) == expected
    definition, _ = store.generate_msgdef(msgtype, ros_version=2)
    assert msg_fields(definition) == msg_fields((share_dir(package) / "msg" / f"{name}.msg").read_text())


@pytest.mark.parametrize("msgtype", TYPES)
def test_cdr_bytes_agree_with_rclpy_serialization(store, msgtype):
    """The bytes the writer stores are the ones a ROS publisher sends (rclpy's C type support).

    Same values both ways; the bytes themselves may differ in alignment padding
    (Fast CDR leaves it uninitialized, rosbags writes zeros) and trailing bytes.
    """
    for k in (0, 7):
        message = ts_messages(store, k)[msgtype]
        ours = bytes(store.serialize_cdr(message, msgtype))
        theirs = serialize_message(to_rclpy(message))
        assert deserialize_message(ours, rclpy_class(msgtype)) == to_rclpy(message)
        assert_same(message, deserialize_cdr(store, theirs, msgtype), msgtype)


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("storage", STORAGES)
def test_round_trip_of_every_type_exact(tmp_path, store, storage):
    """Typestore messages and rclpy-serialized bytes come back exactly, in order, with their timestamps."""
    path = tmp_path / "bag"
    written: dict[str, list] = {msgtype: [] for msgtype in TYPES}
    with BagWriter(path, storage=storage, flush=FlushPolicy(chunk_messages=7)) as bag:
        for msgtype in TYPES:
            bag.add_topic(TOPICS[msgtype], msgtype)
        for k in range(25):
            for msgtype, message in ts_messages(store, k).items():
                stamp = 1_000_000_000_000 + k * 1_000_000
                if k % 2:  # the recorder's path: serialized bytes from rclpy
                    data = serialize_message(to_rclpy(message))
                    # the stamp read from the CDR header must be the message's own
                    if msgtype != "std_msgs/msg/Float64MultiArray":
                        assert stamp_ns_from_cdr(data) == stamp
                    bag.write(TOPICS[msgtype], data, timestamp_ns=stamp + 17)
                    written[msgtype].append((stamp + 17, message))
                elif msgtype == "std_msgs/msg/Float64MultiArray":
                    bag.write(TOPICS[msgtype], message, timestamp_ns=stamp)
                    written[msgtype].append((stamp, message))
                else:  # timestamp from the header (or Clock's clock)
                    assert bag.write(TOPICS[msgtype], message) == stamp
                    written[msgtype].append((stamp, message))
        assert bag.message_count == 25 * len(TYPES)

    status = bag_status(path)
    assert status.complete and status.storage == storage
    metadata = yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert metadata["version"] == 9 and metadata["storage_identifier"] == storage
    assert metadata["message_count"] == 25 * len(TYPES)
    topics = {t["topic_metadata"]["name"]: t for t in metadata["topics_with_message_count"]}
    for msgtype in TYPES:
        entry = topics[TOPICS[msgtype]]
        assert entry["message_count"] == 25 and entry["topic_metadata"]["type"] == msgtype
        package, _, name = msgtype.split("/")
        generated = json.loads((share_dir(package) / "msg" / f"{name}.json").read_text())
        assert entry["topic_metadata"]["type_description_hash"] == generated["type_hashes"][0]["hash_string"]

    for msgtype in TYPES:
        read = read_messages(path, TOPICS[msgtype])
        assert [m.timestamp_ns for m in read] == [stamp for stamp, _ in written[msgtype]]
        for got, (_, expected) in zip(read, written[msgtype], strict=True):
            assert got.msgtype == msgtype
            assert_same(expected, got.message, msgtype)
    # the bytes in the bag deserialize with rclpy's C type support to the same values, and
    # with rosbags' strict reader (the over-allocated tail of serialize_message was dropped)
    expected = {msgtype: iter(written[msgtype]) for msgtype in TYPES}
    with Reader(path) as reader:
        for connection, _, data in reader.messages():
            original = next(expected[connection.msgtype])[1]
            assert deserialize_message(data, rclpy_class(connection.msgtype)) == to_rclpy(original)
            assert_same(original, store.deserialize_cdr(data, connection.msgtype))


@pytest.mark.parametrize("storage", STORAGES)
def test_joint_state_series_round_trip(tmp_path, storage):
    rng = np.random.default_rng(1)
    n_samples, names = 300, ["leg1_joint1", "leg2_joint1", "leg3_joint1"]
    t = 12.5 + 0.002 * np.arange(n_samples)  # s
    position = rng.normal(size=(n_samples, 3))
    effort = rng.normal(size=(n_samples, 3)) * 1e3
    path = write_joint_states(tmp_path / "series", t, names, position, effort=effort, storage=storage)
    series = read_joint_states(path)  # relative "joint_states" matches "/joint_states"
    assert series.bag_path == path and series.topic == "/joint_states" and series.names == tuple(names)
    assert len(series) == n_samples
    assert np.array_equal(series.stamp_ns, 12_500_000_000 + 2_000_000 * np.arange(n_samples))
    assert np.array_equal(series.bag_time_ns, series.stamp_ns)
    assert np.allclose(series.t, t, rtol=0, atol=1e-12)
    assert np.array_equal(series.position, position) and np.array_equal(series.effort, effort)
    assert series.velocity.shape == (n_samples, 3) and np.isnan(series.velocity).all()
    assert series.columns(["leg3_joint1", "leg1_joint1"]) == [2, 0]
    # the single storage file can be read too
    storage_file = next(path.glob("*.mcap" if storage == "mcap" else "*.db3"))
    assert np.array_equal(read_joint_states(storage_file).position, position)


def test_jazzy_definitions_read_back(tmp_path):
    path = write_joint_states(tmp_path / "jazzy", [1.0, 2.0, 3.0], ["a"], [[1.0], [2.0], [3.0]], distro="jazzy")
    assert np.array_equal(read_joint_states(path, distro="jazzy").position[:, 0], [1.0, 2.0, 3.0])


# --------------------------------------------------------------------------- writer errors
def test_existing_bag_is_never_overwritten(tmp_path):
    path = write_joint_states(tmp_path / "run", [1.0, 2.0], ["a"], [[1.0], [2.0]])
    before = {p.name: p.read_bytes() for p in path.iterdir()}
    with pytest.raises(BagError, match="exists already") as error:
        BagWriter(path).open()
    assert error.value.kind == "exists" and str(path) in str(error.value)
    assert {p.name: p.read_bytes() for p in path.iterdir()} == before
    moment = datetime(2025, 1, 31, 14, 25, 1)
    free = available_bag_path(path, now=moment)
    assert free == tmp_path / "run_20250131-142501" and not free.exists()
    free.mkdir()
    assert available_bag_path(path, now=moment) == tmp_path / "run_20250131-142501_2"
    assert available_bag_path(tmp_path / "new") == tmp_path / "new"


def test_bad_input_is_refused_and_leaves_the_bag_valid(tmp_path, store):
    path = tmp_path / "bag"
    good = ts_messages(store, 3)["sensor_msgs/msg/JointState"]
    with BagWriter(path) as bag:
        bag.add_topic("/joint_states", "sensor_msgs/JointState")
        bag.add_topic("/commands", "std_msgs/msg/Float64MultiArray")
        bag.write("/joint_states", good)
        cases = [
            (lambda: bag.write("/joint_states", b"\x00\x01\x00\x00\x01\x02"), "malformed", "data"),
            (lambda: bag.write("/joint_states", b"garbage!"), "not CDR", "data"),
            (lambda: bag.write("/joint_states", ts_messages(store, 3)["rosgraph_msgs/msg/Clock"]), "expects", "type"),
            (lambda: bag.write("/unknown", good), "add_topic first", "topic"),
            (lambda: bag.write("/commands", ts_messages(store, 3)["std_msgs/msg/Float64MultiArray"]), "no header", "timestamp"),
            (lambda: bag.write("/joint_states", good, timestamp_ns=-1), "out of range", "timestamp"),
            (lambda: bag.add_topic("/joint_states", "std_msgs/msg/String"), "already recorded", "type"),
            (lambda: bag.add_topic("/x", "pardyn_msgs/msg/Nothing"), "not in the typestore", "type"),
            (lambda: bag.add_topic("/x", "sensor_msgs/msg/JointState", type_hash="RIHS01_" + "ab" * 32), "differs", "type"),
            (lambda: bag.add_topic("/x", "JointState"), "malformed message type", "type"),
        ]
        for action, text, kind in cases:
            with pytest.raises(BagError, match=text) as error:
                action()
            assert error.value.kind == kind and str(path) in str(error.value)
        bag.write("/joint_states", bytes(store.serialize_cdr(good, "sensor_msgs/msg/JointState")), timestamp_ns=5)
    read = read_messages(path, "/joint_states")
    assert [m.timestamp_ns for m in read] == [5, 1_000_003_000_000]
    for message in read:
        assert_same(good, message.message)
    with pytest.raises(BagError, match="closed"):
        bag.write("/joint_states", good)


def test_flush_policy_validation():
    bad_values = [{"chunk_messages": 0}, {"chunk_bytes": 0}, {"period_s": 0.0}, {"period_s": float("nan")}]
    for bad in [*bad_values, {"metadata_period_s": -1.0}]:
        with pytest.raises(InputError):
            FlushPolicy(**bad)


# --------------------------------------------------------------------------- reader errors
def _series_bag(tmp_path, name, t, names=("a", "b"), position=None, **kwargs) -> Path:
    t = np.asarray(t, dtype=float)
    position = np.zeros((len(t), len(names))) if position is None else position
    return write_joint_states(tmp_path / name, t, list(names), position, **kwargs)


@pytest.mark.parametrize("storage", STORAGES)
def test_reader_errors_name_bag_topic_and_time(tmp_path, storage):
    base = 1.0 + 0.001 * np.arange(10)
    duplicated = base.copy()
    duplicated[5] = duplicated[4]
    bag = _series_bag(tmp_path, "dup", duplicated, storage=storage)
    with pytest.raises(BagError) as error:
        read_joint_states(bag)
    assert str(bag) in str(error.value) and "topic /joint_states" in str(error.value)
    assert "duplicated stamp at t=1.004 s" in str(error.value)
    assert error.value.kind == "stamps" and error.value.t_s == pytest.approx(1.004)

    position = np.zeros((10, 2))
    position[7, 1] = np.nan
    bag = _series_bag(tmp_path, "nan", base, position=position, storage=storage)
    with pytest.raises(BagError, match=r"NaN position of joint 'b' at t=1\.007 s \(message 7\)") as error:
        read_joint_states(bag, "/joint_states")
    assert str(bag) in str(error.value) and error.value.kind == "non_finite"

    velocity = np.ones((10, 2))
    velocity[2, 0] = np.inf
    bag = _series_bag(tmp_path, "inf", base, velocity=velocity, storage=storage)
    with pytest.raises(BagError, match=r"inf velocity of joint 'a' at t=1\.002 s"):
        read_joint_states(bag)

    with pytest.raises(BagError, match=r"missing topic; the bag has \['/joint_states'\]") as error:
        read_joint_states(bag, "wrench")
    assert error.value.kind == "topic" and str(bag) in str(error.value) and "topic wrench" in str(error.value)

    with pytest.raises(BagError, match="2 messages, at least 3 needed") as error:
        read_joint_states(_series_bag(tmp_path, "few", [1.0, 2.0], storage=storage), min_messages=3)
    assert error.value.kind == "count"


def test_decreasing_irregular_names_lengths(tmp_path, store):
    # received in this order (bag times increasing), header stamps going back once
    with BagWriter(tmp_path / "decreasing") as bag:
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        for k, stamp_s in enumerate([1.0, 1.1, 1.2, 1.15, 1.3]):
            message = joint_state_message(store, round(stamp_s * 1e9), ["a"], [0.0])
            bag.write("/joint_states", message, timestamp_ns=5 * 10**9 + k)
    with pytest.raises(BagError, match=r"stamps not increasing at t=1\.15 s \(message 3; previous t=1\.2 s\)"):
        read_joint_states(tmp_path / "decreasing")
    gap = [0.0, 0.01, 0.02, 0.04, 0.05, 0.06]  # one dropped sample at 0.03
    bag = _series_bag(tmp_path, "gap", gap)
    with pytest.raises(BagError, match=r"irregular stamps at t=0\.04 s \(message 3\): interval 0\.02 s, median 0\.01 s"):
        read_joint_states(bag)
    assert len(read_joint_states(bag, period_tolerance=None)) == 6  # check disabled
    assert len(read_joint_states(bag, period_tolerance=1.5)) == 6  # a 2 T interval is within 1.5 T of T

    def bag_of(name, messages):
        with BagWriter(tmp_path / name) as bag:
            bag.add_topic("/robot/joint_states", "sensor_msgs/msg/JointState")
            for message in messages:
                bag.write("/robot/joint_states", message)
        return tmp_path / name

    stamps = [10**9 * (k + 1) for k in range(4)]
    swapped = [joint_state_message(store, s, ["a", "b"] if k != 2 else ["b", "a"], [0, 0]) for k, s in enumerate(stamps)]
    names = bag_of("names", swapped)
    with pytest.raises(BagError, match=r"inconsistent joint names at t=3 s \(message 2\): \['b', 'a'\] instead of \['a', 'b'\]"):
        read_joint_states(names)  # "joint_states" matches "/robot/joint_states"
    short = [joint_state_message(store, s, ["a", "b"], [0, 0], [1.0] if k == 1 else ()) for k, s in enumerate(stamps)]
    lengths = bag_of("lengths", short)
    with pytest.raises(BagError, match=r"1 velocity values for 2 joints at t=2 s \(message 1; expected 0 or 2\)"):
        read_joint_states(lengths)
    duplicated_names = bag_of("dupnames", [joint_state_message(store, s, ["a", "a"], [0, 0]) for s in stamps])
    with pytest.raises(BagError, match="duplicated joint names"):
        read_joint_states(duplicated_names)


def test_ambiguous_relative_topic(tmp_path, store):
    with BagWriter(tmp_path / "two") as bag:
        for topic in ("/left/joint_states", "/right/joint_states"):
            bag.add_topic(topic, "sensor_msgs/msg/JointState")
            for k in range(3):
                bag.write(topic, joint_state_message(store, (k + 1) * 10**9, ["a"], [k]))
    with pytest.raises(BagError, match="ambiguous topic"):
        read_joint_states(tmp_path / "two")
    assert read_joint_states(tmp_path / "two", "right/joint_states").topic == "/right/joint_states"


def test_check_stamps_reusable():
    check_stamps(np.array([0, 10, 20, 31]), bag="b", topic="t")
    with pytest.raises(BagError, match="b: topic t: stamps not increasing at t=0.00000002 s"):
        check_stamps(np.array([0, 10, 30, 20, 40]), bag="b", topic="t", period_tolerance=None)
    assert format_time(1_234_000_000) == "1.234" and format_time(5_000_000_000) == "5" and format_time(-1) == "-0.000000001"


# --------------------------------------------------------------------------- crash safety
CHUNK = 100  # messages per chunk in the crash tests


def _killed_bag(tmp_path, store, n_messages: int):
    """A bag whose writer 'died' after ``n_messages`` (copied while open); file sizes after each chunk."""
    live = tmp_path / "live"
    writer = BagWriter(live, flush=FlushPolicy(chunk_messages=CHUNK, period_s=None, metadata_period_s=0.0)).open()
    writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    storage_file = writer.storage_file
    sizes = [storage_file.stat().st_size]  # after the header
    flushed = 0
    for k in range(n_messages):
        writer.write("/joint_states", joint_state_message(store, 10**9 + k * 10**6, ["a"], [0.5 * k], [k]))
        if writer.flushed_count != flushed:
            flushed = writer.flushed_count
            sizes.append(storage_file.stat().st_size)
    assert writer.flushed_count == CHUNK * (n_messages // CHUNK) and writer.pending_count == n_messages % CHUNK
    killed = tmp_path / "killed"
    shutil.copytree(live, killed)  # the writer never closes this copy: as after SIGKILL
    writer.close()
    return killed, sizes


def _expect_prefix(series, count: int) -> None:
    assert len(series) == count
    assert np.array_equal(series.position[:, 0], 0.5 * np.arange(count))
    assert np.array_equal(series.velocity[:, 0], np.arange(count, dtype=float))
    assert np.array_equal(series.stamp_ns, 10**9 + 10**6 * np.arange(count))


def test_killed_writer_bag_repairs_to_its_flushed_chunks(tmp_path, store):
    killed, sizes = _killed_bag(tmp_path, store, 350)
    assert len(sizes) == 4  # header, then 3 chunks of 100 messages
    status = bag_status(killed)
    assert not status.complete and "provisional" in status.problem
    provisional = yaml.safe_load((killed / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert provisional["message_count"] == 300  # the messages on disk
    with pytest.raises(BagIncompleteError, match="repair_bag") as error:
        read_joint_states(killed)
    assert str(killed) in str(error.value)
    report = repair_bag(killed)
    assert report.repaired and report.messages == {"/joint_states": 300} and report.chunks == 3
    assert report.damaged_file is not None and report.damaged_file.exists()
    assert bag_status(killed).complete and not repair_bag(killed).repaired
    _expect_prefix(read_joint_states(killed), 300)  # 50 pending messages lost: less than one chunk
    metadata = yaml.safe_load((killed / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    topic = metadata["topics_with_message_count"][0]["topic_metadata"]
    assert topic["type_description_hash"] == typestore_for().hash_rihs01("sensor_msgs/msg/JointState")


def test_truncated_file_keeps_every_complete_chunk(tmp_path, store):
    """Cut anywhere: exactly the chunks whose record lies wholly before the cut come back.

    After each flush the file ends with a chunk record and its message index
    record (MCAP spec: opcode, u64 length, u16 channel, u32 array length, 16
    bytes per message), so a chunk record ends ``MESSAGE_INDEX`` bytes before the
    file size observed after its flush.
    """
    message_index = 1 + 8 + 2 + 4 + 16 * CHUNK
    killed, sizes = _killed_bag(tmp_path, store, 400)
    chunk_ends = [size - message_index for size in sizes[1:]]
    source = next(killed.glob("*.mcap"))
    data = source.read_bytes()
    assert len(data) == sizes[-1]
    rng = np.random.default_rng(3)
    cuts = {*rng.integers(sizes[0], len(data), 12).tolist()}
    for boundary in (*sizes, *chunk_ends):
        cuts |= {boundary - 1, boundary, boundary + 1}
    for cut in sorted(c for c in cuts if sizes[0] <= c <= len(data)):
        bag = tmp_path / f"cut{cut}"
        bag.mkdir()
        (bag / source.name).write_bytes(data[:cut])  # no metadata.yaml either
        complete = [end for end in chunk_ends if end <= cut]
        expected = CHUNK * len(complete)
        report = repair_bag(bag, keep_damaged=False)
        assert report.message_count == expected, cut
        kept = max([sizes[0], *complete, *(size for size in sizes if size <= cut)])
        assert report.discarded_bytes == cut - kept, cut
        assert sorted(p.name for p in bag.iterdir()) == sorted(["metadata.yaml", f"{bag.name}.mcap"])
        if expected >= 2:
            _expect_prefix(read_joint_states(bag), expected)
        else:
            with pytest.raises(BagError, match="missing topic|at least 2"):
                read_joint_states(bag)


def test_damaged_chunk_is_detected_by_its_crc(tmp_path, store):
    killed, sizes = _killed_bag(tmp_path, store, 300)
    source = next(killed.glob("*.mcap"))
    data = bytearray(source.read_bytes())
    data[(sizes[2] + sizes[3]) // 2] ^= 0x10  # flip one bit inside the third chunk
    source.write_bytes(bytes(data))
    scan = scan_mcap(source)
    assert scan.chunks == 2 and "checksum" in scan.stop
    series = read_joint_states(killed, repair=True)  # repair on the way
    _expect_prefix(series, 200)


def test_closed_bag_chunks_carry_a_crc(tmp_path, store):
    """rosbags' own reader verifies the CRC we add: a flipped bit in a closed bag is an error, not bad data."""
    path = _series_bag(tmp_path, "closed", 1.0 + 0.01 * np.arange(250), flush=FlushPolicy(chunk_messages=CHUNK))
    source = next(path.glob("*.mcap"))
    data = bytearray(source.read_bytes())
    data[len(data) // 3] ^= 0x01
    source.write_bytes(bytes(data))
    with pytest.raises(BagError, match="(?i)checksum|unreadable"):
        read_joint_states(path)


def test_bag_status_of_non_bags(tmp_path):
    with pytest.raises(BagError, match="does not exist"):
        bag_status(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BagError, match="not a bag"):
        bag_status(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "bad.mcap").write_bytes(b"not an mcap file at all")
    with pytest.raises(BagError, match="is not an MCAP file .*nothing to repair"):
        repair_bag(tmp_path / "bad")
    with pytest.raises(BagError, match="is not an MCAP file"):  # not a killed writer's file: no status to give
        bag_status(tmp_path / "bad")


def test_columns_picked_from_a_wider_array_are_written(tmp_path):
    """``joints[:, indices]`` is Fortran-ordered: its rows are strided (rosbags refused them: 'the last axis must
    be contiguous')."""
    from pardyn.bags.joint_states import read_joint_states, write_joint_states  # noqa: PLC0415

    joints = np.arange(30.0).reshape(5, 6)
    picked = joints[:, np.array([0, 2, 5])]
    assert not picked[0].flags["C_CONTIGUOUS"]
    bag = write_joint_states(tmp_path / "picked", np.arange(5) * 0.01, ["a", "b", "c"], picked, effort=picked)
    series = read_joint_states(bag)
    np.testing.assert_array_equal(series.position, picked)
    np.testing.assert_array_equal(series.effort, picked)

