"""Logs as labs write them (issue 40): no header line (columns by index), MATLAB files (v5 and v7.3), efforts in
amperes with the drives' gains.

The runs are the maker's logs of the UR5e whose truth is known (conftest ``vendor``); each layout is written
here from the same numbers as a CSV file with a header, and must identify what that file identifies.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pardyn
from pardyn.cli import main

from .conftest import VENDOR_COLUMNS

LAYOUT = ["--time-unit", "samples", "--rate", "1000"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory, vendor):
    """A run in the maker's layout (Time, Position1-6, Velocity1-6, Torque1-6, Current1-6, ...) and its table."""
    folder = tmp_path_factory.mktemp("formats")
    robot = pardyn.load_robot("ur5e")
    path = vendor.write(folder / "run.csv", robot, vendor.truth(robot), 6.5, seed=0)
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    reference = identified(folder, "reference", "--run", str(path), "--columns", VENDOR_COLUMNS)
    return folder, table, reference


def identified(folder, name, *arguments) -> dict:
    out = folder / f"{name}.json"
    assert main(["identify", "--robot", "ur5e", *LAYOUT, *arguments, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def values(result) -> dict[str, float]:
    return {row["name"]: row["value"] for row in result["base_parameters"]}


def assert_same(result, reference):
    a, b = values(result), values(reference)
    assert a.keys() == b.keys()
    scale = max(abs(v) for v in b.values())
    assert max(abs(a[n] - b[n]) for n in b) < 1e-6 * scale


def test_a_log_without_header_is_read_by_column_index(logs):
    folder, table, reference = logs
    path = folder / "headerless.csv"
    np.savetxt(path, table, delimiter=",", fmt="%.9g")  # the first line holds numbers
    assert main(["identify", "--robot", "ur5e", *LAYOUT, "--run", str(path), "--columns", VENDOR_COLUMNS,
                 "--out", str(folder / "x.json")]) == 2  # named columns: refused, saying how to give indices
    result = identified(folder, "headerless", "--run", str(path),
                        "--columns", "time=0,position=1-6,velocity=7-12,effort=13-18")
    assert_same(result, reference)


def test_matlab_files_v5_and_v73_read_as_the_csv(logs):
    import h5py  # the 'mat' extra, which make test installs
    from scipy import io as matio

    folder, table, reference = logs
    variables = {"Time": table[:, 0], "Position": table[:, 1:7], "Velocity": table[:, 7:13],
                 "Torque": table[:, 13:19], "Current": table[:, 19:25], "rate": 1000.0}
    v5 = folder / "run_v5.mat"
    matio.savemat(v5, variables)
    assert_same(identified(folder, "v5", "--run", str(v5), "--columns", VENDOR_COLUMNS), reference)
    v73 = folder / "run_v73.mat"
    with h5py.File(v73, "w") as handle:  # as MATLAB writes -v7.3: column-major, so the arrays transposed
        for name, value in variables.items():
            handle.create_dataset(name, data=np.asarray(value).T)
    assert_same(identified(folder, "v73", "--run", str(v73), "--columns", VENDOR_COLUMNS), reference)
    single = folder / "matrix.mat"  # one matrix, columns by index, as a Simulink 'To Workspace' array
    matio.savemat(single, {"log": table})
    assert_same(identified(folder, "single", "--run", str(single),
                           "--columns", "time=0,position=1-6,velocity=7-12,effort=13-18"), reference)


def test_currents_with_the_drive_gains_identify_the_torques(logs):
    folder, table, reference = logs
    gains = np.array([13.0, 13.0, 13.0, 9.0, 9.0, 9.0]) * 1.01  # N m/A
    currents = table.copy()
    currents[:, 13:19] = table[:, 13:19] / gains
    path = folder / "currents.csv"
    header = ",".join(["Time", *(f"{f}{k}" for f in ("Position", "Velocity", "Torque") for k in range(1, 7))])
    np.savetxt(path, currents[:, :19], delimiter=",", header=header, comments="", fmt="%.12g")
    (folder / "drives.yaml").write_text("drives:\n  gain: {" + ", ".join(
        f"{j}: {float(g)!r}" for j, g in zip(pardyn.load_robot("ur5e").actuated_names, gains)) + "}\n")
    result = identified(folder, "currents", "--run", str(path), "--columns", VENDOR_COLUMNS,
                        "--drive-gains", str(folder / "drives.yaml"))
    a, b = values(result), values(reference)
    assert max(abs(a[n] - b[n]) for n in b) < 1e-5 * max(abs(v) for v in b.values())
    assert any("efforts logged in A" in note for note in result["data_notes"])
