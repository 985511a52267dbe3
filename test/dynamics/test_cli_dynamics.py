"""``pardyn dynamics``: CSV in, torques out, parameters from a result file, clear errors."""

from __future__ import annotations

import csv
import json

import numpy as np
import pinocchio as pin
import pytest

from pardyn.cli import main

COLUMNS = {"dualv": ("x", "y", "phi"), "rrr3": ("x", "y", "theta"), "five_bar": ("x", "y")}


def _write_trajectory(path, robot, count=6, *, shuffle=False):
    """A smooth circle-like task trajectory around home, as the CSV of the command."""
    names = COLUMNS[robot.name]
    n = len(names)
    amplitude = np.array([0.02, 0.015, 0.05][:n])
    omega = np.array([3.0, 2.0, 1.0][:n])
    home = robot.home[robot.task_indices]
    header = ["t"] + [f"{c}{s}" for c in names for s in ("", "_dot", "_ddot")]
    if shuffle:
        header = header[::-1] + ["comment"]
    rows = []
    for t in np.linspace(0.0, 0.5, count):
        values = {"t": t, "comment": "ignored"}
        for k, c in enumerate(names):
            values[c] = home[k] + amplitude[k] * np.sin(omega[k] * t)
            values[f"{c}_dot"] = amplitude[k] * omega[k] * np.cos(omega[k] * t)
            values[f"{c}_ddot"] = -amplitude[k] * omega[k] ** 2 * np.sin(omega[k] * t)
        rows.append([values[h] for h in header])
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows([[repr(float(v)) if not isinstance(v, str) else v for v in row] for row in rows])
    return rows


def _read(path):
    with path.open() as stream:
        reader = csv.reader(stream)
        header = next(reader)
        return header, np.array([[float(v) for v in row] for row in reader])


def _check_closed_loop(robot, params, trajectory, torques, *, stress_free=True):
    """J^T tau = W^T tau_t with tau_t from pinocchio's RNEA + drive terms, at every row."""
    model = params.apply(robot.model.copy())
    data = model.createData()
    _, rows = _read(trajectory)
    n = len(robot.task_names)
    q = robot.home
    for row, tau in zip(rows, torques):
        x, xdot, xddot = (row[1 + k::3][:n] for k in range(3))
        q = robot.solve_inverse(x, start=q).q
        velocity_map = robot.differential.task_velocity_map(q)
        qdot = velocity_map @ xdot
        qddot = robot.differential.accelerations_from_task(q, qdot, xddot)
        tree = pin.rnea(model, data, q, qdot, qddot).copy()  # armature (ia) included by pinocchio
        for drive in params.drives:
            v = qdot[drive.index]
            tree[drive.index] += drive.fv * v + drive.fs * np.sign(v) + drive.offset
        jacobian = velocity_map[robot.actuated_indices]
        np.testing.assert_allclose(jacobian.T @ tau, velocity_map.T @ tree, rtol=1e-9, atol=1e-9)
        if stress_free:
            np.testing.assert_allclose(tau, np.linalg.pinv(jacobian.T) @ (velocity_map.T @ tree), atol=1e-9)


@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar"])
def test_torques_along_a_trajectory(tmp_path, load, name):
    robot = load(name)
    trajectory, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _write_trajectory(trajectory, robot)
    assert main(["dynamics", "--robot", name, "--trajectory", str(trajectory), "--out", str(out)]) == 0
    header, data = _read(out)
    assert header == ["t", *robot.actuated_names]
    assert data.shape == (6, 1 + len(robot.actuated_names))
    np.testing.assert_allclose(data[:, 0], np.linspace(0.0, 0.5, 6))
    _check_closed_loop(robot, robot.nominal_parameters, trajectory, data[:, 1:])


def test_columns_in_any_order(tmp_path, load):
    robot = load("five_bar")
    ordered, shuffled = tmp_path / "a.csv", tmp_path / "b.csv"
    _write_trajectory(ordered, robot)
    _write_trajectory(shuffled, robot, shuffle=True)
    for path in (ordered, shuffled):
        assert main(["dynamics", "--robot", "five_bar", "--trajectory", str(path), "--out", str(path) + ".out"]) == 0
    np.testing.assert_array_equal(_read(tmp_path / "a.csv.out")[1], _read(tmp_path / "b.csv.out")[1])


def test_internal_stress(tmp_path, load):
    robot = load("dualv")
    trajectory = tmp_path / "in.csv"
    _write_trajectory(trajectory, robot, count=3)
    base = ["dynamics", "--robot", "dualv", "--trajectory", str(trajectory)]
    assert main([*base, "--out", str(tmp_path / "plain.csv")]) == 0
    assert main([*base, "--out", str(tmp_path / "stress.csv"), "--internal-stress", "5,-5,5,-5"]) == 0
    plain, stressed = _read(tmp_path / "plain.csv")[1][:, 1:], _read(tmp_path / "stress.csv")[1][:, 1:]
    assert np.abs(stressed - plain).max() > 0.1
    _check_closed_loop(robot, robot.nominal_parameters, trajectory, stressed, stress_free=False)


def test_parameters_from_a_result_file(tmp_path, load):
    robot = load("dualv")
    trajectory, result = tmp_path / "in.csv", tmp_path / "result.json"
    _write_trajectory(trajectory, robot, count=3)
    result.write_text(json.dumps({"robot": "dualv", "standard_parameters": {"m_platform": 3.0, "m_payload": 1.5,
                                                                             "offset_leg1_joint1": 0.2}}))
    out = tmp_path / "out.csv"
    assert main(["dynamics", "--robot", "dualv", "--trajectory", str(trajectory), "--out", str(out),
                 "--params", str(result)]) == 0
    params = robot.nominal_parameters.with_values({"m_platform": 3.0, "m_payload": 1.5, "offset_leg1_joint1": 0.2})
    _check_closed_loop(robot, params, trajectory, _read(out)[1][:, 1:])


def _fails(capsys, argv, *fragments):
    assert main(argv) == 2
    message = capsys.readouterr().err
    assert message.startswith("pardyn dynamics: ")
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_bad_csv_files(tmp_path, load, capsys):
    robot = load("dualv")
    out = str(tmp_path / "out.csv")
    good = tmp_path / "good.csv"
    _write_trajectory(good, robot, count=3)
    lines = good.read_text().splitlines()

    missing = tmp_path / "missing.csv"
    missing.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")  # drops phi_ddot
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(missing), "--out", out],
           str(missing), "phi_ddot")

    nan = tmp_path / "nan.csv"
    cells = lines[2].split(",")
    cells[4] = "nan"  # column y, second data row = line 3
    nan.write_text("\n".join([lines[0], lines[1], ",".join(cells), lines[3]]) + "\n")
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(nan), "--out", out],
           str(nan), "line 3", "'y'")

    text = tmp_path / "text.csv"
    cells[4] = "abc"
    text.write_text("\n".join([lines[0], ",".join(cells)]) + "\n")
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(text), "--out", out], "line 2", "'abc'")

    short = tmp_path / "short.csv"
    short.write_text(lines[0] + "\n" + ",".join(lines[1].split(",")[:5]) + "\n")
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(short), "--out", out], "line 2", "'y_dot'")

    empty = tmp_path / "empty.csv"
    empty.write_text("")
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(empty), "--out", out], "empty file")

    far = tmp_path / "far.csv"
    cells = lines[2].split(",")
    cells[1] = "2.0"  # x out of reach
    far.write_text("\n".join([lines[0], lines[1], ",".join(cells)]) + "\n")
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(far), "--out", out], str(far), "line 3")

    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(tmp_path / "none.csv"), "--out", out],
           "none.csv")


def test_bad_options(tmp_path, load, capsys):
    trajectory = tmp_path / "in.csv"
    _write_trajectory(trajectory, load("rrr3"), count=2)
    out = str(tmp_path / "out.csv")
    _fails(capsys, ["dynamics", "--robot", "rrr3", "--trajectory", str(trajectory), "--out", out,
                    "--internal-stress", "1,0,0"], "no actuation redundancy")
    _fails(capsys, ["dynamics", "--robot", "rrr3", "--trajectory", str(trajectory), "--out", out,
                    "--internal-stress", "1,x"], "--internal-stress")
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"robot": "dualv", "standard_parameters": {}}))
    _fails(capsys, ["dynamics", "--robot", "rrr3", "--trajectory", str(trajectory), "--out", out,
                    "--params", str(result)], str(result), "'dualv'")


def test_time_out_of_order_is_refused_with_the_line(tmp_path, load, capsys):
    """Issue 20, item 8: a trajectory whose time goes back (or stands still) is refused, naming the line."""
    robot = load("dualv")
    good = tmp_path / "good.csv"
    _write_trajectory(good, robot, count=4)
    lines = good.read_text().splitlines()
    out = str(tmp_path / "out.csv")
    swapped = tmp_path / "swapped.csv"
    swapped.write_text("\n".join([lines[0], lines[1], lines[3], lines[2], lines[4]]) + "\n")
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(swapped), "--out", out],
           str(swapped), "line 4", "not after")
    reversed_file = tmp_path / "reversed.csv"
    reversed_file.write_text("\n".join([lines[0], *lines[:0:-1]]) + "\n")
    _fails(capsys, ["dynamics", "--robot", "dualv", "--trajectory", str(reversed_file), "--out", out],
           str(reversed_file), "line 3")
