"""Issue 39, item by item: the surfaces added since issue 30 (truth files, C export, fleets, log schemas, time units,
the new YAML sections), each bad input refused in one line naming what is wrong, or handled correctly.

Each test reproduces a finding of the probe (a traceback, a hang, an impossible input accepted with exit 0, a
message naming the wrong thing) on a DualV log made here: its efforts are the closed-loop inverse dynamics of the
nominal model along a Fourier task trajectory, so identification fits it exactly and the only failure left is the
bad input. The checks compare against the input itself (the column, file or value we broke, the unit the log was
written in), a C compiler (the exported identifiers) and the file system (what was or was not written).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REPO = Path(__file__).resolve().parents[2]
LOG_RATE_HZ = 200.0


def dualv_log(path: Path, *, duration_s: float = 8.0, time_scale: float = 1.0, time_offset: float = 0.0,
              effort_scale: np.ndarray | None = None) -> Path:
    """A DualV log ``t,<joint>_position,<joint>_effort`` of the actuated joints at 200 Hz: three harmonics per task
    coordinate, efforts from the nominal closed-loop inverse dynamics. ``t`` is written ``time_offset +
    time_scale * seconds`` (1e3: milliseconds; 1e9 with an epoch offset: epoch nanoseconds)."""
    import pardyn  # noqa: PLC0415
    from pardyn.dynamics.inverse import InverseDynamics  # noqa: PLC0415

    robot = pardyn.load_robot("dualv")
    inverse = InverseDynamics(robot, robot.nominal_parameters)
    t = np.arange(int(duration_s * LOG_RATE_HZ)) / LOG_RATE_HZ
    omega = 2 * np.pi * np.array([0.3, 0.7, 1.1])
    amplitude = np.array([[0.03, 0.01, 0.005], [0.02, 0.015, 0.005], [0.1, 0.05, 0.02]])
    phase = np.array([0.0, 1.0, 2.0])
    angle = omega[None, None, :] * t[:, None, None] + phase[None, :, None]  # (N, 3 coordinates, 3 harmonics)
    x = (amplitude * np.sin(angle)).sum(-1)
    v = (amplitude * omega * np.cos(angle)).sum(-1)
    a = -(amplitude * omega**2 * np.sin(angle)).sum(-1)
    positions, efforts, previous = [], [], None
    for k in range(len(t)):
        q = robot.solve_inverse(x[k], start=previous).q
        previous = q
        positions.append(q[robot.actuated_indices])
        efforts.append(inverse.torques_from_task(q, v[k], a[k]))
    efforts = np.array(efforts) * (1.0 if effort_scale is None else effort_scale)
    names = list(robot.actuated_names)
    header = ["t", *(f"{n}_position" for n in names), *(f"{n}_effort" for n in names)]
    stamps = time_offset + time_scale * t
    columns = np.column_stack([stamps, np.array(positions), efforts])
    fmt = ["%d" if time_offset > 1e12 else "%.12g"] + ["%.12g"] * (columns.shape[1] - 1)
    np.savetxt(path, columns, delimiter=",", header=",".join(header), comments="", fmt=fmt)
    return path


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    """A valid DualV log (seconds)."""
    return dualv_log(tmp_path_factory.mktemp("log") / "log.csv")


# ----------------------------------------------------------------------------------------------- --truth
@pytest.mark.parametrize("values, fragment", [
    ({"m_foo": 1}, "m_foo"),                    # no usable true parameter: max() of an empty list
    ({"m_platform": True}, "m_platform"),       # a boolean is not a mass
    ({"m_platform": -2.0}, "m_platform"),       # a negative mass
    ({"m_platform": "1" + "0" * 400}, "m_platform"),  # a 400-digit integer (written below as a JSON number)
])
def test_truth_files_are_checked_before_anything_is_written(cli, tmp_path, log, values, fragment):
    """`--truth` with no usable or an impossible true value: a traceback after RESULT.json was written, or exit 0.
    Now one line naming the file and the key, and no RESULT.json."""
    truth = tmp_path / "t.json"
    text = json.dumps({"standard_parameters": values})
    truth.write_text(text.replace('"' + "1" + "0" * 400 + '"', "1" + "0" * 400))
    out = tmp_path / "r.json"
    cli("identify", "--robot", "dualv", "--csv", log, "--truth", truth, "--out", out).refused(str(truth), fragment)
    assert not out.exists()


def test_a_truth_of_only_unknown_regrouped_values_is_said(cli, tmp_path, log):
    """A truth naming only the payload (no base parameter gets a true value) gave `max()` of an empty list after
    RESULT.json; now the identification ends (exit 0) and says no parameter could be compared."""
    truth = tmp_path / "t.json"
    truth.write_text(json.dumps({"standard_parameters": {"m_payload": 1.0}}))
    outcome = cli("identify", "--robot", "dualv", "--csv", log, "--truth", truth, "--out", tmp_path / "r.json")
    assert outcome.code == 0, outcome.err[-2000:]
    assert "no identified base parameter has both a true value" in outcome.out


# ------------------------------------------------------------------------------------------ --time-unit
@pytest.fixture(scope="module")
def logs_in_units(tmp_path_factory):
    """The same log with its time in seconds, milliseconds and epoch nanoseconds."""
    folder = tmp_path_factory.mktemp("units")
    return {"s": dualv_log(folder / "s.csv", duration_s=2.0),
            "ms": dualv_log(folder / "ms.csv", duration_s=2.0, time_scale=1e3),
            "epoch_ns": dualv_log(folder / "ns.csv", duration_s=2.0, time_scale=1e9, time_offset=1.7e18)}


@pytest.mark.parametrize("written, declared, expected", [
    ("s", "ms", "--time-unit s"), ("s", "us", "--time-unit s"), ("s", "ns", "--time-unit s"),
    ("s", "samples", "--time-unit s"), ("ms", "s", "--time-unit ms"), ("epoch_ns", "s", "--time-unit ns"),
    ("epoch_ns", "ms", "--time-unit ns"),
])
def test_time_units_contradicted_by_the_data_are_refused(cli, tmp_path, logs_in_units, written, declared, expected):
    """A log in seconds declared ms/us/samples fitted at 12-37 % (the notes blamed the effort unit), declared ns
    gave "gap ... inf median intervals"; in ms declared s `max()` of an empty list; epoch-ns declared s an int64
    overflow then ZeroDivisionError. Now refused from the data's own rate and magnitude, naming the unit written."""
    arguments = ["--rate", "200"] if declared == "samples" else []
    cli("identify", "--robot", "dualv", "--csv", logs_in_units[written], "--time-unit", declared, *arguments,
        "--out", tmp_path / "r.json").refused(str(logs_in_units[written]), "column 't'", expected)


@pytest.mark.parametrize("written", ["s", "ms", "epoch_ns"])
def test_time_units_that_fit_the_data_are_read(written, logs_in_units):
    """The same three logs with their right unit read to the same times (the check refuses only contradictions)."""
    from pardyn.recordings.csv_series import read_csv_series  # noqa: PLC0415

    unit = {"s": "s", "ms": "ms", "epoch_ns": "ns"}[written]
    series = read_csv_series([logs_in_units[written]], time_unit=unit)
    assert np.isclose(1.0 / np.median(np.diff(series.t)), LOG_RATE_HZ, rtol=1e-4)  # epoch s: 0.2 us steps


# ----------------------------------------------------------------------------------------- regular files
def test_a_fifo_named_csv_is_refused_not_opened(tmp_path, log):
    """`mkfifo runs/p.csv` in a --run folder blocked forever (and a FIFO as --trajectory). Run in a child process
    with a timeout: the old code hangs."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(log, runs / "a.csv")
    os.mkfifo(runs / "p.csv")
    for command in (["identify", "--robot", "dualv", "--run", str(runs), "--out", str(tmp_path / "r.json")],
                    ["dynamics", "--robot", "dualv", "--trajectory", str(runs / "p.csv"), "--out",
                     str(tmp_path / "o.csv")]):
        done = subprocess.run([sys.executable, "-m", "pardyn.cli", *command], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        assert done.returncode == 2, done.stderr[-1000:]
        line = done.stderr.strip()
        assert "\n" not in line and "p.csv" in line and "FIFO" in line, line


# --------------------------------------------------------------------------------------------- memory
def test_a_long_trajectory_is_read_in_flat_arrays(tmp_path):
    """A 1,000,000-row `pardyn dynamics` input took 1.48 GB (0.80 GB before de9554f read the whole file into a
    StringIO and kept a Python list per row). Measured here on 50,000 rows with tracemalloc: the reader's peak
    must stay near the numbers' own size (50,000 x 10 x 8 bytes = 4 MB), not the text's (7.5 MB as UTF-8, 30 MB
    in a StringIO) plus 10 float objects per row. bench: 1,000,000 rows peak 0.31 GB RSS (README)."""
    import pardyn  # noqa: PLC0415
    from pardyn.cli.dynamics import read_trajectory  # noqa: PLC0415

    robot = pardyn.load_robot("dualv")
    rows = 50_000
    path = tmp_path / "long.csv"
    t = np.arange(rows) * 1e-3
    data = np.column_stack([t, *(0.01 * np.sin(t + k) for k in range(9))])
    np.savetxt(path, data, delimiter=",", header="t,x,x_dot,x_ddot,y,y_dot,y_ddot,phi,phi_dot,phi_ddot",
               comments="", fmt="%.17g")
    tracemalloc.start()
    try:
        time, task, velocity, acceleration, lines = read_trajectory(path, robot)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(time, data[:, 0]) and np.array_equal(velocity[:, 2], data[:, 8])
    assert lines[0] == 2 and lines[-1] == rows + 1
    assert peak < 3 * data.nbytes, f"{peak / 1e6:.1f} MB peak for {data.nbytes / 1e6:.1f} MB of numbers"


# --------------------------------------------------------------------------------------------- export c
def _robot_named(folder: Path, name: str | None, stem: str = "robot") -> Path:
    description = yaml.safe_load((REPO / "config" / "robots" / "five_bar.yaml").read_text())
    shutil.copy(REPO / "urdf" / "five_bar.urdf", folder / "five_bar.urdf")
    description["urdf"] = "five_bar.urdf"
    if name is None:
        description.pop("name", None)
    else:
        description["name"] = name
    path = folder / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(description, sort_keys=False))
    return path


@pytest.mark.parametrize("name, stem", [("five_bar-", "robot"), (None, "five_bar (copy)"), ("x" * 300, "robot"),
                                        ("5 bar__v2", "robot")])
def test_export_c_names_are_valid_c_identifiers(cli, tmp_path, name, stem):
    """A name ending in or doubling underscores once sanitized (`dualv-`, a file stem `dualv (copy)`): CasADi
    rejected the function name; a 300-character name failed to open its file. The library now builds with the
    C compiler (an independent judge of identifiers) and every file name is short."""
    robot = _robot_named(tmp_path, name, stem)
    out = tmp_path / "c"
    outcome = cli("export", "c", "--robot", robot, "--out", out)
    assert outcome.code == 0, outcome.err[-2000:]
    sources = sorted(out.glob("*.c"))
    assert all(len(p.name) < 64 for p in out.iterdir()), [p.name for p in out.iterdir()]
    library = sorted(p for p in sources if p.name != "example.c")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.fail("no C compiler: apt-get install gcc (the guide's environment has one)")
    done = subprocess.run([compiler, "-std=c99", "-c", *map(str, library)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_export_refuses_an_empty_out_and_keeps_existing_files(cli, tmp_path, monkeypatch):
    """`export c --out ''` wrote into the current directory and silently replaced its CMakeLists.txt."""
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "CMakeLists.txt"
    mine.write_text("# the user's own project\n")
    cli("export", "c", "--robot", "five_bar", "--out", "").refused("--out")
    line = cli("export", "c", "--robot", "five_bar", "--out", tmp_path).refused("CMakeLists.txt", "--force")
    assert str(tmp_path) in line
    assert mine.read_text() == "# the user's own project\n"
    assert not list(tmp_path.glob("*.c"))  # nothing written beside it
    assert cli("export", "c", "--robot", "five_bar", "--out", tmp_path, "--force").code == 0
    assert "five_bar" in mine.read_text()


# ------------------------------------------------------------------------------------------ YAML sections
PROBE_JOINT = ('<link name="probe"/><joint name="probe_joint" type="revolute"><parent link="platform"/>'
               '<child link="probe"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
               "</joint></robot>")


def _set(key, value):
    def edit(description):
        description[key] = value
    return edit


def _amplitude(description):
    description["excitation"]["amplitude"]["x"] = 1e6


def _cone(description):
    description["limits"]["cones"] = [{"name": "u", "max": 0.5, "axis": [0, 0, 1],
                                       "frames": [["leg1_tip", "no_such_frame"]]}]


@pytest.mark.parametrize("edit, fragments", [
    (_set("springs", [{"joints": ["platform_x"], "stiffness": 10.0}]), ["springs", "platform_x", "virtual chain"]),
    (_set("springs", [{"joints": ["leg1_joint2"], "stiffness": 10.0, "reference": 1e12}]),
     ["springs", "leg1_joint2", "reference"]),
    (_set("locked", {"probe_joint": 5.0}), ["locked.probe_joint", "[-1, 1]"]),
    (_set("locked", {"probe_joint": 1e12}), ["locked.probe_joint"]),
    (_cone, ["limits.cones", "no_such_frame"]),
    (_set("inertials", [{"links": ["probe"], "mass": 1.0, "inertia_com": {"xx": 0.01, "yy": 0.01, "zz": 0.05}}]),
     ["inertials[0]", "A + B >= C"]),
    (_amplitude, ["excitation.amplitude.x", "1e+06 m"]),
])
def test_physically_impossible_yaml_values_are_refused_at_load(cli, robot_file, edit, fragments):
    """Each was accepted with exit 0: a spring on the virtual platform_x joint or with reference 1e12, a joint locked
    at 5 rad outside its [-1, 1] limits or at 1e12, cones naming a frame that does not exist, inertials violating
    A + B >= C (principal moments 0.01, 0.01, 0.05), excitation.amplitude.x = 1e6 m."""
    path = robot_file(edit=edit, urdf_edit=lambda text: text.replace("</robot>", PROBE_JOINT))
    cli("robots", "--describe", path).refused(str(path), *fragments)


def test_possible_values_of_the_same_sections_load(cli, robot_file):
    """The same sections with values a machine can have: a spring on a passive joint, a lock within the limits,
    the shipped amplitude."""
    def edit(description):
        description["springs"] = [{"joints": ["leg1_joint2"], "stiffness": 10.0, "reference": 0.2}]
        description["locked"] = {"probe_joint": 0.5}
    path = robot_file(edit=edit, urdf_edit=lambda text: text.replace("</robot>", PROBE_JOINT))
    outcome = cli("robots", "--describe", path)
    assert outcome.code == 0, outcome.err[-2000:]


# ------------------------------------------------------------------------------------------------- fleet
@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """A fleet folder of one DualV robot with one CSV night (identifies), a bad night (fails), and links: a robot
    folder linked under another name, a night linked twice, a loop back to the fleet folder."""
    root = tmp_path_factory.mktemp("fleet") / "cell"
    robot = root / "dualv_01"
    robot.mkdir(parents=True)
    (root / "robot.yaml").write_text("dualv_placeholder")  # replaced below: a copy of the shipped YAML
    description = yaml.safe_load((REPO / "config" / "robots" / "dualv.yaml").read_text())
    description["urdf"] = str(REPO / "urdf" / "dualv.urdf")
    (root / "robot.yaml").write_text(yaml.safe_dump(description, sort_keys=False))
    dualv_log(robot / "2026-11-01.csv", duration_s=6.0)
    (robot / "2026-11-02.csv").write_text("t,leg1_joint1_position\n0,0\n")  # too short: fails
    return root


def test_fleet_links_are_read_once_and_failures_set_the_exit_status(cli, fleet, tmp_path):
    """Symlink loops identified the same data twice as a phantom robot or night; `fleet identify` exited 0 when a
    run failed. Now each real folder and run is read once (the links listed as not runs) and the exit status is 1
    with a one-line summary of the failures on stderr."""
    root = tmp_path / "cell"
    shutil.copytree(fleet, root)
    (root / "phantom_robot").symlink_to(root / "dualv_01", target_is_directory=True)
    (root / "dualv_01" / "2026-11-03.csv").symlink_to(root / "dualv_01" / "2026-11-01.csv")
    (root / "dualv_01" / "loop").symlink_to(root, target_is_directory=True)
    from pardyn.fleet.layout import scan  # noqa: PLC0415

    layout = scan(root)
    assert [run.name for run in layout.runs] == ["dualv_01/2026-11-01", "dualv_01/2026-11-02"]
    reasons = {f"{u.robot}/{u.date}": u.reason for u in layout.unusable}
    assert "already read" in reasons["phantom_robot/*"]
    assert "already read" in reasons["dualv_01/2026-11-03"]
    assert "the fleet folder" in reasons["dualv_01/loop"]
    outcome = cli("fleet", "identify", root, "--no-report", "--quiet", "--workers", "1")
    assert outcome.code == 1, outcome.err[-2000:]
    line = outcome.err.strip().splitlines()[-1]
    assert "1 of 2 runs failed" in line and "dualv_01/2026-11-02" in line, line


@pytest.mark.parametrize("content", ['{"robot": "dualv_01", "date": "2026-11-01", "status": "identified"}',
                                     '{"robot": "dualv_01", "da', "[]"])
def test_a_stale_or_truncated_run_record_is_left_out_and_identified_again(cli, fleet, tmp_path, content):
    """A stale or truncated `_identified/<robot>/<date>/RUN.json` gave JSONDecodeError/KeyError. Now it is named in
    a warning, not trusted, and the run is identified again (a RUN.json with its base parameters)."""
    root = tmp_path / "cell"
    shutil.copytree(fleet, root)
    (root / "dualv_01" / "2026-11-02.csv").unlink()
    record = root / "_identified" / "dualv_01" / "2026-11-01" / "RUN.json"
    record.parent.mkdir(parents=True)
    record.write_text(content)
    other = root / "_identified" / "gone" / "2026-10-01" / "RUN.json"  # a robot since removed, damaged too
    other.parent.mkdir(parents=True)
    other.write_text(content)
    with pytest.warns(UserWarning) as warned:
        outcome = cli("fleet", "identify", root, "--no-report", "--quiet", "--workers", "1")
    assert outcome.code == 0, outcome.err[-2000:]
    assert any(str(other) in str(w.message) for w in warned), [str(w.message) for w in warned]
    assert json.loads(record.read_text())["status"] == "identified"


def test_a_gepetto_closure_type_given_as_a_list_is_named(cli, gepetto_copy):
    """Gepetto's `type: [[6d]]` (a list where a name is expected) raised `TypeError: unhashable type`."""
    path = gepetto_copy(yaml_text="closed_loop: [['closedloop1_A', 'closedloop1_B']]\ntype: [['6d']]\n"
                                  "name_mot: ['mot1', 'mot2']\n")
    cli("robots", "--describe", path).refused("type[0]", "unknown closure type")


def test_a_start_delay_beyond_the_duration_is_refused(cli):
    """`--start-delay` beyond `--duration`: the node never started and the run ended with exit 0."""
    cli("bringup", "sim", "--processes", "--duration", "2", "--start-delay", "controller=5").refused(
        "--start-delay", "controller", "--duration")


@pytest.mark.parametrize("claimed", [1601, -5])
def test_bag_info_does_not_repeat_a_count_the_files_do_not_hold(cli, tmp_path, claimed):
    """`bag info` printed whatever count metadata.yaml claimed (1601, -5) as 'complete'. Now the MCAP files' own
    statistics (300 messages written here) are compared, and the bag is said damaged with what to do."""
    data = tmp_path / "log.csv"
    data.write_text("t,j1_position,j1_effort\n" + "".join(f"{k * 0.001!r},{k * 1e-3!r},0.5\n" for k in range(300)))
    bag = tmp_path / "bag"
    assert cli("bag", "from-csv", "--csv", data, "--out", bag).code == 0
    metadata = bag / "metadata.yaml"
    text = metadata.read_text()
    assert "message_count: 300" in text
    metadata.write_text(text.replace("message_count: 300", f"message_count: {claimed}"))
    code, out, err = cli("bag", "info", bag)
    assert code == 0 and "Traceback" not in err, err
    first = out.splitlines()[0]
    assert "damaged" in first and "complete" not in first and f"says {claimed} messages" in first, out
    assert "hold 300" in first and "bag repair" in out


def test_a_corrupt_cdr_string_length_is_a_value_error(cli):
    """A bag whose chunk CRC is valid but whose CDR string length is corrupt: rosbags' SerdeError escaped the
    decoder (a traceback). The decoder now raises ValueError, which the readers name with the bag time."""
    import struct  # noqa: PLC0415

    from pardyn.bags.cdr import deserialize_cdr, typestore_for  # noqa: PLC0415

    typestore = typestore_for("kilted")
    message_type = typestore.types["sensor_msgs/msg/JointState"]
    header = typestore.types["std_msgs/msg/Header"]
    stamp = typestore.types["builtin_interfaces/msg/Time"]
    message = message_type(header=header(stamp=stamp(sec=1, nanosec=2), frame_id="base"), name=["j1"],
                           position=np.array([0.5]), velocity=np.array([0.0]), effort=np.array([1.0]))
    data = bytearray(typestore.serialize_cdr(message, "sensor_msgs/msg/JointState"))
    assert deserialize_cdr(typestore, bytes(data), "sensor_msgs/msg/JointState").name == ["j1"]
    data[12:16] = struct.pack("<I", 0x7FFFFFF0)  # frame_id's length, after the 4-byte encapsulation and the stamp
    with pytest.raises(ValueError, match="cannot deserialize|cut short"):
        deserialize_cdr(typestore, bytes(data), "sensor_msgs/msg/JointState")


def test_all_zero_efforts_and_efforts_in_another_unit_are_named(cli, tmp_path):
    """All-zero efforts gave `IndexError` in `_scale_notes` (a regression); one joint's efforts in mN m (RMS far
    beyond its 127 N m limit) were accepted without a word. The log's first joint is written x1000 here."""
    zero = dualv_log(tmp_path / "zero.csv", duration_s=4.0, effort_scale=np.zeros(4))
    cli("identify", "--robot", "dualv", "--csv", zero, "--out", tmp_path / "z.json").refused(
        str(zero), "all zero")
    scaled = dualv_log(tmp_path / "mnm.csv", duration_s=6.0, effort_scale=np.array([1000.0, 1.0, 1.0, 1.0]))
    outcome = cli("identify", "--robot", "dualv", "--csv", scaled, "--out", tmp_path / "m.json")
    assert outcome.code == 0, outcome.err[-2000:]
    assert "leg1_joint1: recorded efforts have RMS" in outcome.out and "effort limit 127" in outcome.out
    assert "leg2_joint1: recorded efforts have RMS" not in outcome.out


@pytest.mark.parametrize("columns, fragment", [
    ("position=j1_position,effort=j1_effort", "has no {i} nor {joint}"),
    ("position={joint}_position,position={joint}_effort", "position given twice"),
    ("position={joint}_position,effort={joint}_position", "effort and position both read"),
])
def test_column_schema_mistakes_name_the_column_option(cli, tmp_path, log, columns, fragment):
    """`--columns` mistakes (no {i}, a field twice, one column for two fields) ended as "no closed configuration
    ... Newton did not converge", naming neither file nor column."""
    cli("identify", "--robot", "dualv", "--csv", log, "--columns", columns, "--out", tmp_path / "r.json").refused(
        "--columns", fragment)
