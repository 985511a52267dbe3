"""CSV files as joint-state series: conventions, resampling of jittered stamps, and bad files named precisely."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pardyn.recordings.csv_series import column_schema, csv_source, read_csv_series
from pardyn.bags.errors import BagError


def write_csv(path: Path, header: list[str], rows: np.ndarray) -> Path:
    lines = [",".join(header)] + [",".join(repr(float(v)) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_field_of_a_file_from_its_name_or_prefix():
    assert csv_source("data/pos_read_data.csv").field == "position"
    assert csv_source("curr_data.csv").field == "effort"
    assert csv_source("tiago_velocity.csv").field == "velocity"
    assert csv_source("effort=log.csv").field == "effort" and csv_source("log.csv").field is None


def test_one_file_with_suffixed_columns_and_a_joint_map(tmp_path):
    t = np.arange(50) * 0.01
    data = np.column_stack([t, np.sin(t), np.cos(t), 2 * t, 3 * t])
    path = write_csv(tmp_path / "log.csv", ["time", "- a_position", "b_pos", "a_effort", "b_torque"], data)
    series = read_csv_series([path], joint_map={"a": "joint_a"})
    assert series.names == ("joint_a", "b") and series.notes == ()
    np.testing.assert_array_equal(series.position, data[:, 1:3])
    np.testing.assert_array_equal(series.effort, data[:, 3:5])
    assert np.isnan(series.velocity).all()  # missing velocities: derived later from the positions


def test_jittered_stamps_are_resampled_with_the_jitter_in_a_note(tmp_path):
    rng = np.random.default_rng(3)
    t = np.arange(400) * 0.01 + rng.uniform(-0.002, 0.002, 400) * (np.arange(400) % 3 != 0)
    t[0] = 0.0
    q = np.column_stack([np.sin(2 * t), np.cos(3 * t)])  # smooth: cubic interpolation is exact to ~1e-7
    path = write_csv(tmp_path / "q_position.csv", ["t", "j1", "j2"], np.column_stack([t, q]))
    series = read_csv_series([path])
    assert len(series.notes) == 1 and "resampled onto a uniform" in series.notes[0] and "jitter" in series.notes[0]
    np.testing.assert_allclose(np.diff(series.t), np.median(np.diff(t)), rtol=1e-6)  # the median, to the ns
    exact = np.column_stack([np.sin(2 * series.t), np.cos(3 * series.t)])
    assert np.abs(series.position - exact).max() < 1e-5


@pytest.mark.parametrize(
    ("header", "edit", "match"),
    [
        (["j1", "j2"], None, r"no time column .*--rate"),
        (["t", "j1", "j2"], lambda d: d.__setitem__((7, 1), np.nan), r"column 'j1': nan at line 9"),
        (["t", "j1", "j2"], lambda d: d.__setitem__((5, 0), d[3, 0]), r"time goes back at line 7"),
        (["t", "j1", "j2"], lambda d: d.__setitem__((4, 0), d[4, 0]), None),
        (["t", "j1", "j2"], lambda d: d.__setitem__(slice(30, None), d[30:] + [0.5, 0, 0]), r"gap of 0\.51 s .*too large"),
        (["t", "j1", "j2"], lambda d: d.__setitem__((slice(None), 0), d[:, 0] * 1000), r"looks like ms: give --time-unit ms"),
    ],
)
def test_bad_files_name_file_column_and_line(tmp_path, header, edit, match):
    t = np.arange(40) * 0.01
    data = np.column_stack([t, np.sin(t), np.cos(t)])[:, -len(header):]
    if edit is not None:
        edit(data)
    path = write_csv(tmp_path / "bad_position.csv", header, data)
    if match is None:
        read_csv_series([path])
        return
    with pytest.raises(BagError, match=match) as caught:
        read_csv_series([path])
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_a_cell_that_is_not_a_number_and_files_that_disagree(tmp_path):
    path = tmp_path / "x_position.csv"
    path.write_text("t,j1\n0.0,1.0\n0.01,abc\n0.02,1.0\n")
    with pytest.raises(BagError, match=r"x_position\.csv: not a table of numbers: .*'abc'.*line 3"):
        read_csv_series([path])
    positions = write_csv(tmp_path / "p_position.csv", ["t", "j1"], np.column_stack([np.arange(10) * 0.01, np.ones(10)]))
    efforts = write_csv(tmp_path / "e_effort.csv", ["t", "j1"], np.column_stack([np.arange(9) * 0.01, np.ones(9)]))
    with pytest.raises(BagError, match=r"e_effort\.csv: 9 samples .* must share their time stamps"):
        read_csv_series([positions, efforts])
    with pytest.raises(BagError, match=r"which field is it"):
        read_csv_series([write_csv(tmp_path / "log.csv", ["t", "j1"], np.zeros((5, 2)) + [[0.0, 1.0]] * 5
                                   + np.arange(5)[:, None] * [0.01, 0])])


def vendor_file(tmp_path: Path, time: np.ndarray) -> Path:
    """A maker's layout: ``Time``, ``Position<k>``, ``Torque<k>`` and columns the reader must ignore."""
    q = np.column_stack([np.sin(np.arange(len(time)) * 0.01), np.cos(np.arange(len(time)) * 0.01)])
    header = ["Time", "Position1", "Position2", "Current1", "Current2", "Torque1", "Torque2", "Temperature1"]
    return write_csv(tmp_path / "run_3.csv", header, np.column_stack([time, q, 8 * q, q, np.full(len(time), 35.0)]))


@pytest.mark.parametrize(("unit", "scale", "rate"), [("samples", 1.0, 500.0), ("ms", 2.0, None),
                                                     ("us", 2000.0, None), ("ns", 2e6, None), ("s", 0.002, None)])
def test_a_vendor_layout_by_column_patterns_and_time_units(tmp_path, unit, scale, rate):
    path = vendor_file(tmp_path, np.arange(40) * scale + 7 * scale)  # 2 ms samples, from sample 7
    schema = column_schema("position=Position{i},effort=Torque{i}")
    series = read_csv_series([path], schema=schema, joints=("a", "b"), time_unit=unit, rate_hz=rate)
    assert series.names == ("a", "b")
    np.testing.assert_allclose(np.diff(series.t), 0.002, rtol=1e-9)
    assert series.t[0] == pytest.approx(0.014)
    np.testing.assert_array_equal(series.effort, np.loadtxt(path, delimiter=",", skiprows=1)[:, 5:7])
    assert np.isnan(series.velocity).all()


def test_a_column_schema_file_with_its_own_joints_and_time_column(tmp_path):
    path = vendor_file(tmp_path, np.arange(30) * 1e-3)
    spec = tmp_path / "layout.yaml"
    spec.write_text("time: Time\nfirst_index: 0\njoints: [x, y]\nposition: 'Position{i}'\neffort: 'Torque{i}'\n")
    with pytest.raises(BagError, match=r"run_3\.csv: no column 'Position0' of the column schema \(2 missing; the file "
                                       r"has Time, Position1, Position2,"):
        read_csv_series([path], schema=column_schema(spec))
    spec.write_text("time: Time\njoints: [x, y]\nposition: 'Position{i}'\neffort: 'Torque{i}'\n")
    series = read_csv_series([path], schema=column_schema(spec), joints=("ignored", "too"))
    assert series.names == ("x", "y")


@pytest.mark.parametrize(("text", "match"), [
    ("position=Position{k}", r"may only use \{i\} and \{joint\}"),
    ("effort=Torque{i}", r"no position pattern"),
    ("position", r"FIELD=PATTERN pairs"),
    ("position=P{i},torque=T{i}", r"unknown keys \['torque'\]"),
])
def test_bad_column_schemas_are_named(text, match):
    with pytest.raises(BagError, match=match):
        column_schema(text)


def test_a_sample_index_needs_the_rate_and_seconds_are_questioned(tmp_path):
    path = vendor_file(tmp_path, np.arange(20.0))
    schema = column_schema("position=Position{i}")
    with pytest.raises(BagError, match=r"column 'Time' counts samples: give the sample rate \(--rate HZ\)"):
        read_csv_series([path], schema=schema, joints=("a", "b"), time_unit="samples")
    with pytest.raises(BagError, match=r"median interval 1 s .*give --time-unit ms \(or samples with --rate HZ"):
        read_csv_series([path], schema=schema, joints=("a", "b"))
