"""A new recording format is one file (test/recordings/npz_reader.py): registered, it is picked for its paths by
:func:`pardyn.recordings.reader_for`, read by :func:`~pardyn.recordings.read_series`, found in a folder of runs
by the commands and turned into the joint-side series identification uses, without any other file changing."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.bags.joint_states import JointStateSeries
from pardyn.cli.data import read_runs
from pardyn.identification.sources import joint_side_series
from pardyn.recordings import READERS, ReadOptions, read_series, reader_for

from .npz_reader import register_reader


@pytest.fixture
def npz():
    name = register_reader()
    yield name
    READERS.unregister(name)


def _write(path, names, rate_hz=200.0, count=100):
    t = np.arange(count) / rate_hz
    position = 0.1 * np.sin(2 * np.pi * np.outer(t, np.arange(1, len(names) + 1)))
    np.savez(path, t=t, names=np.array(names), position=position, effort=0.5 * position)
    return t, position


def test_every_format_has_its_reader():
    assert {"rosbag2", "csv", "mat"} <= set(READERS)
    assert [reader_for(name).name for name in ("run.mcap", "run.db3", "run.csv", "run.MAT", "run.txt")] == [
        "rosbag2", "rosbag2", "csv", "mat", "csv"]  # a file no format claims is read as a CSV table


def test_a_registered_reader_is_picked_and_read(npz, tmp_path):
    t, position = _write(tmp_path / "run.npz", ["a", "b"])
    assert reader_for(tmp_path / "run.npz").name == npz
    series = read_series(tmp_path / "run.npz", ReadOptions(joint_map={"a": "joint_a"}))
    assert isinstance(series, JointStateSeries) and series.names == ("joint_a", "b")
    np.testing.assert_allclose(series.t, t)
    np.testing.assert_allclose(series.position, position)
    assert np.isnan(series.velocity).all()


def test_a_folder_of_runs_finds_the_new_format_and_identification_reads_it(npz, tmp_path, load):
    robot = load("five_bar")
    names = list(robot.measured_names)
    (tmp_path / "runs").mkdir()
    _write(tmp_path / "runs" / "one.npz", names)
    (tmp_path / "runs" / "notes.npy").write_bytes(b"")  # no format claims it: not a run
    runs = read_runs([tmp_path / "runs"], {"rate_hz": None, "time_unit": None, "schema": None, "joints": ()})
    assert len(runs) == 1 and runs[0].topic == "npz"
    series = joint_side_series(tmp_path / "runs" / "one.npz", robot)  # a path, read by its format's reader
    assert series.names == tuple(names) and len(series.t) == 100
