"""Issue 30, item by item: each bad input of the probe gives one line naming what is wrong, exit 2, no traceback.

Each test reproduces a finding of the issue (it failed before the validation
layer: a signal, a traceback, a NaN written with exit 0, or a message naming
the wrong thing) and checks the answer against something independent: the
file's own content (the key, link or joint we broke), hand-computed values
(the closure residual of the closed form's joints, 2 pi between two angles,
the chunks a bit flip leaves intact).
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def replace_once(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# ----------------------------------------------------------------------------------------------- 1. segfault
def test_urdf_cycles_are_refused_before_pinocchio_sees_them(robot_file, gepetto_copy):
    """Item 1: a fixed joint from `platform` back to `platform_x_link` (DualV) and the same in a Gepetto URDF
    killed the process with signal 11 (pinocchio's parser). Run in a child process: a crash cannot hide."""
    dualv = robot_file(urdf_edit=lambda text: replace_once(
        text, "</robot>", '<joint name="back" type="fixed"><parent link="platform"/><child link="platform_x_link"/>'
                          "</joint></robot>"))
    gepetto = gepetto_copy(urdf_edit=lambda text: replace_once(
        text, "</robot>", '<joint name="back" type="fixed"><parent link="effector"/><child link="built"/>'
                          "</joint></robot>"))
    for link, command in (("platform_x_link", ["robots", "--describe", str(dualv)]),
                          ("built", ["kinematics", "--robot", str(gepetto), "--task", "0,0"])):
        done = subprocess.run([sys.executable, "-m", "pardyn.cli", *command], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2, (done.returncode, done.stderr[-500:])  # not -11
        line = done.stderr.strip()
        assert "\n" not in line and "Traceback" not in line, line
        assert link in line and ("cycle" in line or "a URDF is a tree" in line), line


# ------------------------------------------------------------------------------------ 2. NaN written, exit 0
def _trajectory(path: Path, rows: list[dict[str, float]]) -> Path:
    names = ["t"] + [f"{c}{s}" for c in ("x", "y", "phi") for s in ("", "_dot", "_ddot")]
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(names)
        for k, row in enumerate(rows):
            writer.writerow([k * 0.001] + [row.get(name, 0.0) for name in names[1:]])
    return path


@pytest.mark.parametrize("row", [{"x_dot": 1e200}, {"x_ddot": 1e308}])
def test_dynamics_never_writes_nan(cli, tmp_path, row):
    """Item 2: one row with x_dot = 1e200 or x_ddot = 1e308 wrote `nan` torques with exit 0."""
    trajectory = _trajectory(tmp_path / "in.csv", [{}, row, {}])
    out = tmp_path / "out.csv"
    line = cli("dynamics", "--robot", "dualv", "--trajectory", trajectory, "--out", out).refused("line 3")
    assert "not finite" in line
    assert not out.exists()


def test_dynamics_refuses_absurd_stress_and_masses(cli, tmp_path, robot_file):
    """Item 2: --internal-stress 1e308,... and a platform mass of 1e308 (accepted at load) gave NaN torques."""
    trajectory = _trajectory(tmp_path / "in.csv", [{}, {"x_dot": 0.1}])
    out = tmp_path / "out.csv"
    cli("dynamics", "--robot", "dualv", "--trajectory", trajectory, "--out", out,
            "--internal-stress", "1e308,0,0,0").refused("--internal-stress", "1e+308")

    def heavy(description):
        description["dynamics"]["bodies"][2]["mass"] = 1e308  # the platform

    heavy_robot = robot_file(edit=heavy)
    cli("dynamics", "--robot", heavy_robot, "--trajectory", trajectory, "--out", out).refused(
        "dynamics.bodies[2]", "mass")
    assert not out.exists()


# ------------------------------------------------------------------------------- 3. open loop as an answer
def test_closed_form_is_verified_before_it_is_returned(cli, load):
    """Item 3: the DualV's closed form answered inconsistent readings with `"residual": 0.0317`, exit 0."""
    readings = "2.37871325,0.76287941,-0.76287941,-2.0"
    line = cli("kinematics", "--robot", "dualv", "--actuated", readings, "--method", "analytic").refused(
        "closed form", "open")
    # independent: the closed form's joints (legs 1-2 solve the platform) leave the other loops open by that much
    robot = load("dualv")
    q = robot.analytic.forward(np.array([float(v) for v in readings.split(",")]), None)
    residual = float(np.max(np.abs(robot.closures.residual_and_jacobian(q)[0])))
    assert residual > 0.03
    assert f"{residual:.3g}" in line
    # a consistent reading still answers, at the residual of a closed form
    pose = robot.solve_inverse([0.02, -0.01, 0.1])
    good = ",".join(repr(float(v)) for v in pose.q[robot.actuated_indices])
    done = cli("kinematics", "--robot", "dualv", "--actuated", good, "--method", "analytic")
    assert done.code == 0 and json.loads(done.out)["residual"] < 1e-10


# ----------------------------------------------------------------------------- 4. impossible robots
def _drop_dynamics(description):
    description.pop("dynamics")


@pytest.mark.parametrize("value", ["-1.2", "nan", "inf", "heavy"])
def test_urdf_masses_must_be_physical(cli, robot_file, value):
    """Item 4: a negative URDF mass (YAML without `dynamics:`) was accepted; `nan`/`inf`/`heavy` made the link
    silently massless (urdfdom)."""
    path = robot_file(edit=_drop_dynamics, urdf_edit=lambda text: replace_once(
        text, '<mass value="1.9199999999999999"/>', f'<mass value="{value}"/>'))
    cli("robots", "--describe", path).refused("link 'platform'", "mass")


@pytest.mark.parametrize("section, key, value, fragment", [
    ("bodies", ("inertia_com", "zz"), -0.01, "dynamics.bodies[0]"),
    ("bodies", ("mass",), -5.0, "dynamics.bodies[0]"),
    ("drives", ("ia",), -0.02, "ia"),
    ("drives", ("fv",), -0.05, "fv"),
    ("drives", ("fs",), -0.3, "fs"),
])
def test_yaml_dynamics_must_be_physical(cli, robot_file, section, key, value, fragment):
    """Item 4 and 9: negative inertia, `ia`, `fv`; a negative YAML mass was reported as 'regenerate the URDF'."""
    def edit(description):
        item = description["dynamics"][section][0]
        for name in key[:-1]:
            item = item[name]
        item[key[-1]] = value

    line = cli("robots", "--describe", robot_file(edit=edit)).refused(fragment)
    assert "regenerate" not in line


def test_parameter_files_with_negative_masses_are_refused(cli, tmp_path):
    """Item 4: `dynamics --params` with `m_platform: -5` ran (the sim node refuses the same file)."""
    params = tmp_path / "result.json"
    params.write_text(json.dumps({"robot": "dualv", "standard_parameters": {"m_platform": -5.0}}))
    trajectory = _trajectory(tmp_path / "in.csv", [{}, {"x_dot": 0.1}])
    cli("dynamics", "--robot", "dualv", "--trajectory", trajectory, "--out", tmp_path / "out.csv",
            "--params", params).refused("m_platform", "-5")
    params.write_text(json.dumps({"robot": "dualv", "standard_parameters": {"fv_leg1_joint1": -0.5}}))
    cli("dynamics", "--robot", "dualv", "--trajectory", trajectory, "--out", tmp_path / "out.csv",
            "--params", params).refused("leg1_joint1", "fv")


# ------------------------------------------------------------------------- 5. bringup ignores what it cannot use
@pytest.mark.parametrize("inline, fragment", [
    ("{lockstep: 0}", "lockstep: expected bool, got int 0"),
    ("{lockstep: 'off'}", "lockstep: expected bool, got str 'off'"),
    ("{stall_timout: 3.0}", "did you mean 'stall_timeout'"),
])
def test_bringup_parameters_are_checked_against_the_table(cli, tmp_path, inline, fragment):
    """Item 5: `{lockstep: 0}` or `'off'` left lockstep on; misspelt keys were dropped silently."""
    path = _bringup(tmp_path, f"nodes:\n  - executable: sim\n    parameters:\n      - {inline}\n")
    cli("bringup", path, "--dry-run").refused(fragment, "sim")


def _bringup(folder: Path, text: str) -> Path:
    path = folder / "bringup.yaml"
    path.write_text(text)
    return path


def test_bringup_refuses_a_file_that_is_not_a_parameters_file(cli, tmp_path):
    """Item 5: any readable file was accepted as a parameter file."""
    for name, content in (("notes.txt", b"hello world\n"), ("binary.yaml", bytes(range(256)))):
        (tmp_path / name).write_bytes(content)
        path = _bringup(tmp_path, f"nodes:\n  - executable: sim\n    parameters:\n      - {tmp_path / name}\n")
        cli("bringup", path, "--dry-run").refused(name)


# ------------------------------------------------------------------------------------- 6. options not checked
@pytest.mark.parametrize("command, option, value", [
    ("identify", "--model-rate", "0"),
    ("identify", "--max-gap", "-1"),
    ("identify", "--rate", "inf"),
    ("identify", "--rate", "1e-300"),
    ("identify", "--decimation", "0"),
    ("identify", "--holdout", "nan"),
    ("bag", "--rate", "inf"),
])
def test_numeric_options_are_range_checked(cli, tmp_path, command, option, value):
    """Item 6 and 8: `--model-rate 0` fitted 12 % instead of 1.1 %, `--max-gap -1` was accepted, `--rate inf`
    wrote 1600 messages at t = 0 (`bag from-csv`) or a traceback (`identify`)."""
    extra = ["--robot", "dualv", "--out", tmp_path / "r.json"] if command == "identify" else [
        "from-csv", "--csv", tmp_path / "x.csv", "--out", tmp_path / "bag"]
    cli(command, *extra, option, value).refused(option, repr(value)[1:-1])


def _joint_csv(path: Path, rows: int = 300) -> Path:
    path.write_text("t,j1_position,j1_effort\n" + "".join(
        f"{k * 0.001!r},{math.sin(k * 0.01)!r},{math.cos(k * 0.01)!r}\n" for k in range(rows)))
    return path


def test_a_failed_writer_removes_its_half_made_bag(cli, tmp_path):
    """Item 6: a failed `from-csv` left its bag folder behind, so the retry failed ('never overwritten')."""
    data = _joint_csv(tmp_path / "log.csv")
    bag = tmp_path / "bag"
    cli("bag", "from-csv", "--csv", data, "--out", bag, "--topic", "bad topic").refused("bad topic")
    assert not bag.exists()
    done = cli("bag", "from-csv", "--csv", data, "--out", bag)
    assert done.code == 0, done.err
    assert "300 messages" in done.out


# -------------------------------------------------------------------------------------- 7. silent wrapping
def test_task_values_are_not_wrapped_silently(cli, load):
    """Item 7: `--task 0,0,1e17` answered phi = -1.90; an angle 2 pi away is answered with a note."""
    cli("kinematics", "--robot", "dualv", "--task", "0,0,1e17").refused("--task", "1e+17")
    done = cli("kinematics", "--robot", "dualv", "--task", "0,0,7")
    assert done.code == 0
    phi = json.loads(done.out)["task"]["phi"]
    assert phi == pytest.approx(7.0 - 2.0 * math.pi, abs=1e-9)  # the same pose, one turn less
    assert "phi = 7 answered as" in done.err and "2 pi" in done.err


def test_inconsistent_readings_are_reported(cli, load):
    """Item 7: an `--actuated` reading 8.7 mrad inconsistent was projected without a word."""
    robot = load("dualv")
    pose = robot.solve_inverse([0.02, -0.01, 0.1])
    readings = pose.q[robot.actuated_indices].copy()
    readings[2] += 0.0087
    done = cli("kinematics", "--robot", "dualv", "--actuated", ",".join(repr(float(v)) for v in readings))
    assert done.code == 0
    answer = json.loads(done.out)["joints"]
    misfit = max(abs(answer[name] - value) for name, value in zip(robot.actuated_names, readings))
    assert 1e-3 < misfit < 0.0087  # the least-squares fit spreads the 8.7 mrad over the readings
    assert "inconsistent" in done.err and f"{misfit:.3g}" in done.err


# ---------------------------------------------------------------------------------------- 8. tracebacks
@pytest.mark.parametrize("content, fragment", [
    ("name: dualv\n# caf\xe9\n".encode("latin-1"), "not UTF-8"),
    (bytes(range(256)) * 4, "binary"),
    ("name: x\n".encode("utf-16"), "UTF-16"),
])
def test_robot_files_in_other_encodings_are_named(cli, tmp_path, content, fragment):
    """Item 8: a latin-1 or binary robot YAML gave a UnicodeDecodeError traceback."""
    path = tmp_path / "robot.yaml"
    path.write_bytes(content)
    cli("robots", "--describe", path).refused(str(path), fragment, "UTF-8")


def test_csv_and_parameter_files_in_other_encodings(cli, tmp_path):
    """Item 8: a UTF-16 CSV and a binary `--params` gave tracebacks; item 9: a UTF-8 CSV with a byte-order
    mark (a spreadsheet's) was read as `missing columns ['t']`."""
    data = _joint_csv(tmp_path / "log.csv")
    utf16 = tmp_path / "utf16.csv"
    utf16.write_text(data.read_text(), encoding="utf-16")
    cli("bag", "from-csv", "--csv", utf16, "--out", tmp_path / "b1").refused("utf16.csv", "UTF-16")
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + data.read_bytes())
    done = cli("bag", "from-csv", "--csv", bom, "--out", tmp_path / "b2")
    assert done.code == 0 and "300 messages" in done.out, done.err
    trajectory = _trajectory(tmp_path / "in.csv", [{}, {"x_dot": 0.1}])
    bom_trajectory = tmp_path / "bom_in.csv"
    bom_trajectory.write_bytes(b"\xef\xbb\xbf" + trajectory.read_bytes())
    done = cli("dynamics", "--robot", "dualv", "--trajectory", bom_trajectory, "--out", tmp_path / "o.csv")
    assert done.code == 0, done.err
    params = tmp_path / "params.json"
    params.write_bytes(bytes(range(256)))
    cli("dynamics", "--robot", "dualv", "--trajectory", trajectory, "--out", tmp_path / "o2.csv",
            "--params", params).refused("params.json", "binary")


@pytest.mark.parametrize("urdf, fragment", [
    ("", "empty"),
    ("this is not xml <<<", "not XML"),
    ("<robot name='r'>" + "<a>" * 200 + "</a>" * 200 + "</robot>", "nested deeper"),
    ("<robot name='r'/>", "no <link>"),
])
def test_garbage_urdf_in_gepetto_format(cli, gepetto_copy, urdf, fragment):
    """Item 8: an empty, garbage or deeply nested URDF in Gepetto format gave `ValueError ... does not contain a
    valid URDF model` as a traceback."""
    path = gepetto_copy(urdf_edit=lambda _: urdf)
    cli("robots", "--describe", path).refused("robot.urdf", fragment)


@pytest.mark.parametrize("edit, fragment", [
    (lambda d: d["home"]["task"].update({1: 0.5, "q": 0.2}), "home.task"),     # mixed key types
    (lambda d: d["working_mode"][0].update(axis=["y"]), "working_mode[0].axis"),  # a list for a name
    (lambda d: d["home"]["task"].update(x=1e308), "home"),                     # 1e308 in the home pose
    (lambda d: d["dynamics"]["bodies"][0].update(mass=10**400), "dynamics.bodies[0].mass"),  # a 401-digit mass
])
def test_robot_yaml_values_of_the_wrong_kind(cli, robot_file, edit, fragment):
    """Item 8: mixed key types in `home.task`, a list where a name is expected (`unhashable type: 'list'`),
    `1e308` in the home pose, `mass: 1` followed by 400 zeros (`OverflowError`)."""
    line = cli("robots", "--describe", robot_file(edit=edit)).refused(fragment)
    assert len(line) < 600 and "0000000000" not in line


def test_huge_or_nan_positions_in_robot_files(cli, robot_file, tmp_path, monkeypatch):
    """Item 8: `1e308` in a URDF origin, `nan` in an MJCF `pos` (`LinAlgError: SVD did not converge`)."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warning about the NaN to ./MUJOCO_LOG.TXT
    path = robot_file(urdf_edit=lambda text: replace_once(
        text, '<origin xyz="0.28000000000000003 0 0" rpy="0 0 0"/>', '<origin xyz="1e308 0 0" rpy="0 0 0"/>'))
    cli("robots", "--describe", path).refused("leg1_joint2", "origin", "1e308")
    mjcf = tmp_path / "arm.xml"
    mjcf.write_text(
        '<mujoco><worldbody><body name="link1" pos="nan 0 0"><joint name="j1" axis="0 0 1"/>'
        '<geom size="0.05" mass="1"/></body></worldbody><actuator><motor joint="j1"/></actuator></mujoco>')
    cli("robots", "--describe", mjcf).refused("arm.xml", "link1", "finite")


def test_bag_info_on_garbled_bags(cli, tmp_path):
    """Item 8: `bag info` on a garbled `metadata.yaml` or a sqlite bag gave a `ReaderError` traceback."""
    data = _joint_csv(tmp_path / "log.csv")
    for storage in ("mcap", "sqlite3"):
        bag = tmp_path / storage
        assert cli("bag", "from-csv", "--csv", data, "--out", bag, "--storage", storage).code == 0
    metadata = tmp_path / "mcap" / "metadata.yaml"
    metadata.write_text(metadata.read_text().replace("message_count: 300", "message_count: abc"))
    cli("bag", "info", tmp_path / "mcap").refused("mcap", "metadata")
    (tmp_path / "sqlite3" / "sqlite3.db3").write_bytes(b"garbage, not a database" * 10)
    cli("bag", "info", tmp_path / "sqlite3").refused("sqlite3", "not a database")
    metadata.write_bytes(b"\xff\xfe\x00garbage")
    cli("bag", "info", tmp_path / "mcap").refused("metadata.yaml")


@pytest.mark.parametrize("text, fragment", [
    ("nodes:\n  - executable: sim\n    remappings: {joint_states: 'bad name//x'}\n", "remappings.joint_states"),
    ("nodes:\n  - executable: sim\n    remappings: {'1x': y}\n", "remappings"),
    ("nodes:\n  - executable: sim\n    name: 'my node'\n", "nodes[0].name"),
])
def test_bringup_names_are_checked_before_rcl(cli, tmp_path, text, fragment):
    """Item 8: an invalid namespace or remapping in a bringup file gave `RCLInvalidROSArgsError`."""
    cli("bringup", _bringup(tmp_path, text), "--dry-run").refused(fragment, "valid ROS")
    good = tmp_path / "good.yaml"
    good.write_text("nodes:\n  - executable: sim\n")
    cli("bringup", good, "--namespace", "1robot", "--duration", "1").refused("--namespace", "1robot")


# ------------------------------------------------------------------------------- 9. the wrong thing named
def test_messages_name_the_key_at_fault(cli, robot_file, gepetto_copy):
    """Item 9: each message names what was broken, not what it broke downstream."""
    typo = robot_file(edit=lambda d: d.update(actuated=["leg1_joint1", "leg2_joint1", "leg3_joint1", "leg4_jont1"]))
    cli("robots", "--describe", typo).refused("actuated", "leg4_jont1", "did you mean 'leg4_joint1'")
    cycle = robot_file(urdf_edit=lambda text: replace_once(
        text, '<parent link="base_link"/>\n    <child link="leg1_link1"/>',
        '<parent link="leg1_link2"/>\n    <child link="leg1_link1"/>'))
    cli("robots", "--describe", cycle).refused("cycle", "leg1_link1")
    zero_axis = robot_file(urdf_edit=lambda text: replace_once(text, '<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'))
    cli("robots", "--describe", zero_axis).refused("leg1_joint1", "axis", "zero")
    duplicate = robot_file(urdf_edit=lambda text: replace_once(text, "</robot>", '<link name="leg1_link1"/></robot>'))
    cli("robots", "--describe", duplicate).refused("leg1_link1", "defined twice")
    string_type = gepetto_copy(yaml_text="closed_loop: [['closedloop1_A', 'closedloop1_B']]\ntype: '6d'\n"
                                         "name_mot: ['mot1', 'mot2']\n")
    cli("robots", "--describe", string_type).refused("type", "expected a list")
    unknown_motor = gepetto_copy(yaml_text="closed_loop: [['closedloop1_A', 'closedloop1_B']]\ntype: ['6d']\n"
                                           "name_mot: ['mot1', 'mot3']\n")
    cli("robots", "--describe", unknown_motor).refused("name_mot", "mot3")


# -------------------------------------------------------------------------- 10. a bit flip passes as complete
def test_a_flipped_bit_in_a_chunk_is_found_and_named(cli, tmp_path):
    """Item 10: after one flipped bit in a chunk, `bag info` said complete and `bag repair` nothing to repair."""
    data = _joint_csv(tmp_path / "log.csv", rows=1000)
    bag = tmp_path / "bag"
    assert cli("bag", "from-csv", "--csv", data, "--out", bag).code == 0
    mcap = bag / "bag.mcap"
    content = bytearray(mcap.read_bytes())
    # the 6th chunk: records are found by their opcode 0x06 (Chunk) after the 8-byte magic and the header
    from mcap.stream_reader import StreamReader  # noqa: PLC0415
    from mcap.records import Chunk  # noqa: PLC0415
    import io  # noqa: PLC0415

    offsets, stream = [], io.BytesIO(bytes(content))
    reader = StreamReader(stream, emit_chunks=True)
    position = 8
    for record in reader.records:
        if isinstance(record, Chunk):
            offsets.append((position, len(record.data)))
        position = stream.tell()
    assert len(offsets) == 10  # 100 messages per chunk (pardyn's FlushPolicy)
    start, size = offsets[5]
    content[start + 80] ^= 0x04  # inside the chunk's records
    mcap.write_bytes(bytes(content))
    done = cli("bag", "info", bag)
    assert done.code == 0 and "damaged" in done.out and "chunk 6" in done.out and "complete" not in done.out
    done = cli("bag", "repair", bag)
    assert done.code == 0 and "chunk 6" in done.out
    assert "recovered 500 messages in 5 complete chunks" in done.out
    done = cli("bag", "info", bag)
    assert done.code == 0 and "complete" in done.out and "500 messages" in done.out


# ------------------------------------------------------------------------------------- 11. oversized errors
def test_error_messages_stay_short(cli, robot_file, tmp_path):
    """Item 11: a 2.4 kB YAML with 7 levels of aliases gave one 58 MB error line; YAML syntax errors printed 7
    lines ending in `^`; some messages printed 300-digit numbers."""
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level, name in enumerate("bcdefgh"):
        previous = "abcdefgh"[level]
        bomb.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    bomb.append("name: *h\nurdf: robot.urdf\n")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(bomb))
    start = time.perf_counter()
    line = cli("robots", "--describe", path).refused("name")
    assert len(line) < 400 and time.perf_counter() - start < 5.0
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nurdf: [unclosed\ntask: {x: 1}\n")
    line = cli("robots", "--describe", broken).refused("not valid YAML", "line 3, column 5")
    assert "^" not in line
    huge = robot_file(edit=lambda d: d["home"]["task"].update(x=10**300))
    line = cli("robots", "--describe", huge).refused("home.task.x", "301 digits")
    assert "000000000000" not in line


# -------------------------------------------------------------------------------------- 12. scale in silence
def test_long_trajectories_show_progress(cli, tmp_path, monkeypatch):
    """Item 12: a 10^6-row trajectory took 278 s with no progress display (shown above 20 000 rows; 3 here)."""
    from pardyn.cli import dynamics  # noqa: PLC0415

    monkeypatch.setattr(dynamics, "PROGRESS_ROWS", 2)
    trajectory = _trajectory(tmp_path / "in.csv", [{}, {"x_dot": 0.1}, {"x_dot": 0.2}])
    done = cli("dynamics", "--robot", "dualv", "--trajectory", trajectory, "--out", tmp_path / "out.csv")
    assert done.code == 0
    assert "pardyn dynamics: 3 rows [" in done.err and "100%" in done.err
