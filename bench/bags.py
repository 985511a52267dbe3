#!/usr/bin/env python3
"""pardyn's MCAP chunk writer against the ``mcap`` package and plain ``rosbags``, in the same run.

Writes 20 000 JointState messages (6 joints, serialized CDR) with 100-message
chunks: :class:`pardyn.bags.BagWriter` (``rosbags``' storage with pardyn's chunk
policy and CRCs), ``mcap.writer.Writer`` (``flush()`` every 100 messages, CRCs
on) and plain ``rosbags`` (1 MiB chunks, no CRC, nothing on disk before close).
Then cuts both MCAP files at 40 points, as a killed writer leaves them, and
checks that :func:`pardyn.bags.repair.scan_mcap` (the ``mcap`` package's
stream reader) recovers exactly the complete chunks, and that a flipped bit is
caught by the chunk CRC of either writer. Figures quoted in
:mod:`pardyn.bags.mcap_chunks`.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from mcap.writer import CompressionType
from mcap.writer import Writer as McapPackageWriter
from rosbags.rosbag2 import StoragePlugin, Writer

from pardyn.bags import BagWriter, FlushPolicy
from pardyn.bags.joint_states import JOINT_STATE_TYPE, joint_state_message
from pardyn.bags.repair import scan_mcap

N = 20_000
CHUNK = 100
NAMES = [f"joint{i}" for i in range(1, 7)]


def messages(store) -> list[bytes]:
    rng = np.random.default_rng(0)
    return [
        bytes(store.serialize_cdr(joint_state_message(store, stamp(k), NAMES, *rng.normal(size=(3, 6))), JOINT_STATE_TYPE))
        for k in range(N)
    ]


def stamp(k: int) -> int:
    return 10**9 + k * 10**6


def write_pardyn(folder: Path, data: list[bytes]) -> tuple[float, Path]:
    start = time.perf_counter()
    with BagWriter(folder / "pardyn", flush=FlushPolicy(chunk_messages=CHUNK, period_s=None), validate=False) as bag:
        bag.add_topic("/joint_states", JOINT_STATE_TYPE)
        for k, message in enumerate(data):
            bag.write("/joint_states", message, timestamp_ns=stamp(k))
    return time.perf_counter() - start, folder / "pardyn" / "pardyn.mcap"


def write_mcap_package(folder: Path, data: list[bytes], store) -> tuple[float, Path]:
    path = folder / "mcap.mcap"
    start = time.perf_counter()
    with open(path, "wb") as stream:
        writer = McapPackageWriter(stream, compression=CompressionType.NONE)
        writer.start(profile="ros2")
        schema = writer.register_schema(JOINT_STATE_TYPE, "ros2msg", store.generate_msgdef(JOINT_STATE_TYPE)[0].encode())
        channel = writer.register_channel("/joint_states", "cdr", schema)
        for k, message in enumerate(data):
            writer.add_message(channel, stamp(k), message, stamp(k))
            if (k + 1) % CHUNK == 0:
                writer.flush()
        writer.finish()
    return time.perf_counter() - start, path


def write_rosbags(folder: Path, data: list[bytes], store) -> float:
    start = time.perf_counter()
    with Writer(folder / "rosbags", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/joint_states", JOINT_STATE_TYPE, typestore=store)
        for k, message in enumerate(data):
            writer.write(connection, stamp(k), message)
    return time.perf_counter() - start


def recovery(path: Path, folder: Path) -> tuple[int, int, bool]:
    """(cuts tried, cuts where exactly the complete chunks came back, flipped bit detected)."""
    data = path.read_bytes()
    whole = scan_mcap(path)
    cut_file = folder / "cut.mcap"
    ok = 0
    cuts = np.linspace(len(data) * 0.05, len(data) * 0.95, 40).astype(int)
    for cut in cuts:
        cut_file.write_bytes(data[:cut])
        scan = scan_mcap(cut_file)
        expected = len(scan.messages) == CHUNK * scan.chunks and scan.messages == whole.messages[: len(scan.messages)]
        ok += expected and scan.good_end <= cut
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x10
    cut_file.write_bytes(bytes(flipped))
    detected = "checksum" in scan_mcap(cut_file).stop
    return len(cuts), ok, detected


def main() -> None:
    from pardyn.bags.cdr import typestore_for  # noqa: PLC0415

    store = typestore_for("kilted")
    data = messages(store)
    folder = Path(tempfile.mkdtemp(prefix="pardyn-bench-bags-"))
    try:
        times = {"pardyn BagWriter": [], "mcap.writer.Writer": [], "rosbags Writer (1 MiB chunks)": []}
        for run in range(3):
            sub = folder / f"run{run}"
            sub.mkdir()
            t_pardyn, ours = write_pardyn(sub, data)
            t_mcap, theirs = write_mcap_package(sub, data, store)
            times["pardyn BagWriter"].append(t_pardyn)
            times["mcap.writer.Writer"].append(t_mcap)
            times["rosbags Writer (1 MiB chunks)"].append(write_rosbags(sub, data, store))
        print(f"write {N} JointState messages (6 joints), {CHUNK}-message chunks, best of 3:")
        reference = min(times["mcap.writer.Writer"])
        for name, values in times.items():
            best = min(values)
            print(f"  {name:32s} {1e6 * best / N:6.2f} us/message  ({best / reference:.2f} x mcap)")
        for name, path in (("pardyn BagWriter", ours), ("mcap.writer.Writer", theirs)):
            start = time.perf_counter()
            scan = scan_mcap(path)
            scan_s = time.perf_counter() - start
            cuts, ok, detected = recovery(path, folder)
            print(
                f"  file of {name}: scan_mcap {1e3 * scan_s:.0f} ms ({len(scan.messages)} messages, "
                f"{scan.chunks} chunks); cut at {cuts} points: complete chunks recovered at {ok}; "
                f"flipped bit caught by the chunk CRC: {detected}"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
