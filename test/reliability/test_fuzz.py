"""Property-based fuzzing of every input boundary (hypothesis): bad input gives one line and exit 2, never more.

For every generated input, ``pardyn`` either accepts it (exit 0, and then its
output holds no NaN and the robot it loaded is physical) or refuses it in one
line on stderr with exit 2: no traceback, no signal, no other exit code, no
half-written file. Boundaries: robot YAML (values replaced by junk at any key),
URDF (attributes, links and joints mutated; run in a child process, so that a
crash is seen as a signal), numeric CLI options, trajectory CSV (``pardyn
dynamics``), parameter files (``--params``), bringup files, data CSV
(``bag from-csv``) and MCAP bags with a flipped bit (``bag info``); since issue 39 also truth files
(``identify --truth``), the C export's names (``kernels.codegen.c_name`` and ``export c --out``), fleet
folders (``fleet identify``: files, folders and links of any name), log schemas (``--columns`` and
``--time-unit`` on a valid log) and the robot YAML's ``springs:``, ``locked:``, ``limits.cones`` sections.

Every outcome is tallied per boundary into ``PARDYN_FUZZ_TALLY`` (a file, when set): ``bench/fuzz.py``
prints the counts accepted and refused.

Seeded (``derandomize``) and bounded: ``PARDYN_FUZZ_EXAMPLES`` (default 25)
examples per boundary in the suite; ``bench/fuzz.py`` (``make bench``) runs 40x more.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::DeprecationWarning")

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("PARDYN_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])


def _tally(code: int) -> None:
    """One line ``boundary code`` into ``PARDYN_FUZZ_TALLY`` (the test's name is the boundary)."""
    tally = os.environ.get("PARDYN_FUZZ_TALLY")
    if tally:
        boundary = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1].split("[")[0].split(" ")[0]
        with open(tally, "a", encoding="utf-8") as stream:
            stream.write(f"{boundary} {code}\n")


def check_outcome(code: int, err: str, what: str, codes: tuple[int, ...] = (0, 2)) -> None:
    """The promise: accepted (0) or refused in one line (2); never a traceback, never another code (``codes``:
    ``fleet identify`` also ends with 1, the failed runs summarized in one line)."""
    _tally(code)
    assert code in codes, (what, code, err[-1500:])
    assert "Traceback" not in err, (what, err[-1500:])
    if code in (1, 2):
        line = err.strip().splitlines()[-1] if code == 1 else err.strip()
        assert line and "\n" not in line, (what, err[-1500:])
        assert len(line) < 2100, (what, len(line))


def no_nan_json(text: str) -> None:
    def refuse(constant):
        raise AssertionError(f"{constant} in the output")

    json.loads(text, parse_constant=refuse)


# values nobody should write where a number, a name or a list is expected
JUNK = st.one_of(
    st.none(), st.booleans(), st.just(float("nan")), st.just(float("inf")), st.just(-1.0), st.just(0.0),
    st.just(1e308), st.just(-1e308), st.just(10**400), st.just(""), st.just("nan"),
    st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(-2, 2), max_size=2),
    st.lists(st.lists(st.text(max_size=3), max_size=2), max_size=2),
)


def _leaves(value, path=()):
    """Every key path of a nested YAML document (mappings and lists)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))


DUALV = yaml.safe_load((REPO / "config" / "robots" / "dualv.yaml").read_text())
DUALV["urdf"] = str(REPO / "urdf" / "dualv.urdf")
# the sections added since issue 30, with values a machine can have, so that the fuzz replaces them too
DUALV["springs"] = [{"joints": ["leg1_joint2"], "stiffness": 10.0, "reference": 0.2}]
DUALV["limits"]["cones"] = [{"name": "elbow", "max": 1.0, "axis": [0, 0, 1], "frames": [["leg1_B", "leg1_A"]]}]
DUALV_PATHS = [path for path in _leaves(DUALV) if path and path != ("urdf",)]


def _physical(robot) -> None:
    params = robot.nominal_parameters
    assert np.isfinite(params.vector()).all()
    for body in params.bodies:
        assert body.standard[-1] >= 0.0, body.name
    for drive in params.drives:
        assert min(drive.ia, drive.fv, drive.fs) >= 0.0, drive.joint


@FUZZ
@given(path=st.sampled_from(DUALV_PATHS), value=JUNK, delete=st.booleans())
def test_robot_yaml_fuzz(cli, tmp_path_factory, path, value, delete):
    """A robot YAML with one value replaced by junk (or one key deleted): loaded physical, or one line."""
    document = copy.deepcopy(DUALV)
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    if delete and isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    file = tmp_path_factory.mktemp("yaml") / "robot.yaml"
    try:
        file.write_text(yaml.safe_dump(document))
    except (ValueError, yaml.YAMLError):  # 10**400 cannot be dumped on every Python: write it by hand
        file.write_text(yaml.safe_dump(document).replace("nan", "1" + "0" * 400, 1))
    code, _, err = cli("robots", "--describe", file)
    check_outcome(code, err, (path, value))
    if code == 0:
        import pardyn  # noqa: PLC0415

        _physical(pardyn.load_robot(file))


URDF_FUZZ = Path(__file__).with_name("urdf_fuzz.py")


def test_urdf_fuzz():
    """Mutated URDFs (attributes set to junk, parents/children swapped into cycles, elements duplicated or
    deleted) through ``robots --describe`` in a child process: it must end with exit 0, no signal."""
    done = subprocess.run([sys.executable, str(URDF_FUZZ), str(EXAMPLES * 3)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode == 0, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    assert "examples: every one accepted or refused in one line" in done.stdout


NUMERIC_OPTIONS = [
    ("identify", ("--robot", "five_bar", "--out", "OUT/r.json"), option)
    for option in ("--holdout", "--model-rate", "--trim", "--effort-delay", "--max-gap", "--cutoff", "--decimation",
                   "--r-sigma", "--essential-tolerance", "--max-iterations", "--rate")
] + [
    ("bag", ("from-csv", "--out", "OUT/bag"), "--rate"),
    ("kinematics", ("--robot", "five_bar"), "--task"),
    ("kinematics", ("--robot", "five_bar"), "--actuated"),
]
NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**30, 10**30).map(str),
    st.sampled_from(["0", "-0", "-1", "1e-300", "1e308", "inf", "-inf", "nan", "", " ", "1" + "0" * 320, "0x10",
                     "1,2", "1,2,3", "a", "1e", "--", "0.1,0.2"]),
    st.text(max_size=10),
)


@FUZZ
@given(case=st.sampled_from(NUMERIC_OPTIONS), text=NUMBER_TEXT)
def test_numeric_option_fuzz(cli, tmp_path_factory, case, text):
    """Every numeric option with any text: refused in one line, or accepted (and then the command fails for
    lack of data, or answers without NaN)."""
    command, arguments, option = case
    out = tmp_path_factory.mktemp("opt")
    arguments = [str(a).replace("OUT", str(out)) for a in arguments]
    code, stdout, err = cli(command, *arguments, f"{option}={text}")
    check_outcome(code, err, (case, text))
    if code == 0 and command == "kinematics":
        no_nan_json(stdout)


CELLS = st.one_of(
    st.floats(-1.0, 1.0).map(repr), st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "nan", "inf", "1e308", "-1e200", "x", "1e999", "0x1", "1" + "0" * 320, " 0.0 "]),
    st.text(max_size=6),
)
HEADER = ["t"] + [f"{c}{s}" for c in ("x", "y") for s in ("", "_dot", "_ddot")]


@FUZZ
@given(rows=st.lists(st.lists(CELLS, min_size=7, max_size=7), min_size=0, max_size=4),
       header=st.one_of(st.just(HEADER), st.permutations(HEADER), st.lists(st.sampled_from(HEADER + ["q", ""]),
                                                                           max_size=8)),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"]))
def test_trajectory_csv_fuzz(cli, tmp_path_factory, rows, header, encoding):
    """`pardyn dynamics` on junk trajectories: finite torques written, or one line and nothing written."""
    folder = tmp_path_factory.mktemp("traj")
    trajectory, out = folder / "in.csv", folder / "out.csv"
    text = "\n".join(",".join(row) for row in [header, *rows]) + "\n"
    try:
        trajectory.write_bytes(text.encode(encoding))
    except UnicodeEncodeError:
        trajectory.write_bytes(text.encode("utf-8"))
    code, _, err = cli("dynamics", "--robot", "five_bar", "--trajectory", trajectory, "--out", out)
    check_outcome(code, err, text[:300])
    if code == 0:
        values = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
        assert np.isfinite(values).all()
    else:
        assert not out.exists()


@pytest.fixture(scope="module")
def five_bar_names():
    import pardyn  # noqa: PLC0415

    return list(pardyn.load_robot("five_bar").nominal_parameters.names)


@FUZZ
@given(data=st.data())
def test_parameter_file_fuzz(cli, tmp_path_factory, five_bar_names, data):
    """`dynamics --params` with junk parameter files: finite torques from a physical robot, or one line."""
    folder = tmp_path_factory.mktemp("params")
    values = data.draw(st.dictionaries(st.sampled_from(five_bar_names + ["m_nothing", ""]),
                                       st.one_of(st.floats(-10.0, 10.0), JUNK), max_size=4))
    content = data.draw(st.sampled_from(["ok", "robot", "binary", "list"]))
    document = {"robot": "five_bar", "standard_parameters": values}
    if content == "robot":
        document["robot"] = data.draw(JUNK)
    params = folder / "p.json"
    if content == "binary":
        params.write_bytes(data.draw(st.binary(max_size=64)))
    else:
        params.write_text(json.dumps([document] if content == "list" else document, default=str))
    trajectory, out = folder / "in.csv", folder / "out.csv"
    trajectory.write_text(",".join(HEADER) + "\n0.0,0,0.1,0,-0.3,0,0\n0.01,0.001,0.1,0,-0.3,0,0\n")
    code, _, err = cli("dynamics", "--robot", "five_bar", "--trajectory", trajectory, "--out", out, "--params", params)
    check_outcome(code, err, (content, values))
    if code == 0:
        assert np.isfinite(np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)).all()


SIM_KEYS = ["robot", "plant", "rate", "lockstep", "watchdog_periods", "stall_timeout", "effort_limits", "seed",
            "stall_timout", "use_sim_time", "initial_task", "", "1"]


@FUZZ
@given(executable=st.one_of(st.sampled_from(["sim", "controller", "recorder"]), JUNK),
       parameters=st.lists(st.one_of(st.dictionaries(st.sampled_from(SIM_KEYS), JUNK, max_size=3),
                                     st.sampled_from(["config/sim.yaml", "README.md", "/nonexistent.yaml"]), JUNK),
                           max_size=3),
       remappings=st.one_of(st.none(), st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2), JUNK),
       name=st.one_of(st.none(), st.text(max_size=8)),
       namespace=st.one_of(st.just(""), st.text(max_size=8)))
def test_bringup_fuzz(cli, tmp_path_factory, executable, parameters, remappings, name, namespace):
    """Bringup files with junk nodes, parameters, remappings, names: accepted by the table, or one line."""
    entry = {"executable": executable, "parameters": parameters}
    if remappings is not None:
        entry["remappings"] = remappings
    if name is not None:
        entry["name"] = name
    path = tmp_path_factory.mktemp("bringup") / "b.yaml"
    path.write_text(yaml.safe_dump({"nodes": [entry]}))
    code, _, err = cli("bringup", path, "--dry-run", f"--namespace={namespace}")
    check_outcome(code, err, entry)


@FUZZ
@given(rows=st.lists(st.lists(CELLS, min_size=3, max_size=3), max_size=5),
       header=st.sampled_from(["t,j1_position,j1_effort", "j1_position,j1_effort", "t;j1_pos", "", "t,t,t",
                               "\ufefft,j1_position,j1_effort"]),
       rate=st.sampled_from([[], ["--rate", "100"], ["--rate", "inf"], ["--rate", "0"]]))
def test_data_csv_fuzz(cli, tmp_path_factory, rows, header, rate):
    """`bag from-csv` on junk CSV data: a complete bag, or one line and no half-made bag."""
    folder = tmp_path_factory.mktemp("csv")
    data, bag = folder / "log.csv", folder / "bag"
    data.write_text("\n".join([header, *(",".join(row) for row in rows)]) + "\n")
    code, _, err = cli("bag", "from-csv", "--csv", data, "--out", bag, *rate)
    check_outcome(code, err, (header, rows))
    if code == 0:
        code, out, err = cli("bag", "info", bag)
        assert code == 0 and "complete" in out, err
    else:
        assert not bag.exists()


@pytest.fixture(scope="module")
def reference_bag(cli, tmp_path_factory):
    """A closed 300-message MCAP bag (3 chunks) and its messages."""
    folder = tmp_path_factory.mktemp("bag")
    data = folder / "log.csv"
    data.write_text("t,j1_position,j1_effort\n" + "".join(
        f"{k * 0.001!r},{math.sin(k * 0.01)!r},{math.cos(k * 0.01)!r}\n" for k in range(300)))
    assert cli("bag", "from-csv", "--csv", data, "--out", folder / "bag").code == 0
    return folder / "bag", _messages(folder / "bag")


def _messages(bag: Path) -> list[tuple[int, bytes]]:
    from rosbags.rosbag2 import Reader  # noqa: PLC0415

    with Reader(bag) as reader:
        return [(timestamp, bytes(data)) for _, timestamp, data in reader.messages()]


@FUZZ
@given(position=st.floats(0.0, 1.0, exclude_max=True), bit=st.integers(0, 7))
def test_bit_flip_fuzz(cli, tmp_path_factory, reference_bag, position, bit):
    """One flipped bit anywhere in an MCAP bag: `bag info` names a problem in one line, or says complete and
    then every message reads back unchanged."""
    import shutil  # noqa: PLC0415

    source, messages = reference_bag
    bag = tmp_path_factory.mktemp("flip") / "bag"
    shutil.copytree(source, bag)
    mcap = bag / "bag.mcap"
    content = bytearray(mcap.read_bytes())
    index = int(position * len(content))
    content[index] ^= 1 << bit
    mcap.write_bytes(bytes(content))
    code, out, err = cli("bag", "info", bag)
    check_outcome(code, err, (index, bit))
    if code == 0 and "complete" in out.splitlines()[0] and "damaged" not in out:
        try:
            read = _messages(bag)
        except Exception as error:  # noqa: BLE001 - reported below with the offset
            raise AssertionError(f"bag info says complete after a flip at byte {index}, but reading fails: {error}")
        assert read == messages, f"bag info says complete after a flip at byte {index}, but the messages differ"


# ---------------------------------------------------------------------- boundaries added by issue 39
TRUTH_NAMES = ["m_platform", "zz_leg1_link1", "fv_leg1_joint1", "m_payload", "m_foo", "", "k_leg1_joint2"]


@FUZZ
@given(values=st.one_of(st.dictionaries(st.sampled_from(TRUTH_NAMES), st.one_of(st.floats(-5.0, 5.0), JUNK),
                                        max_size=4), JUNK),
       binary=st.one_of(st.none(), st.binary(max_size=40)))
def test_truth_file_fuzz(cli, tmp_path_factory, values, binary):
    """`identify --truth` with junk truth files: refused in one line naming the file (checked before the data,
    here absent, so a valid truth ends in the one-line 'give the data')."""
    folder = tmp_path_factory.mktemp("truth")
    truth = folder / "t.json"
    if binary is not None:
        truth.write_bytes(binary)
    else:
        text = json.dumps({"standard_parameters": values}, default=str)
        truth.write_text(text.replace('"' + "1" + "0" * 400 + '"', "1" + "0" * 400))
    code, _, err = cli("identify", "--robot", "dualv", "--truth", truth, "--out", folder / "r.json")
    check_outcome(code, err, (values, binary))
    assert code == 2 and not (folder / "r.json").exists()


@FUZZ
@given(name=st.text(max_size=300))
def test_c_name_fuzz(name):
    """Any robot name becomes a C identifier fragment CasADi and a C compiler take: letters, digits, single
    underscores inside, no leading digit, at most 40 characters (a file name that opens)."""
    import re  # noqa: PLC0415

    from pardyn.kernels.codegen import c_name  # noqa: PLC0415

    _tally(0)
    fragment = c_name(name)
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*", fragment), (name, fragment)
    assert len(fragment) <= 40


@FUZZ
@given(out=st.one_of(st.sampled_from(["", " ", "EXISTING", "FILE", "EXISTING/sub"]), st.text(max_size=10)))
def test_export_out_fuzz(cli, tmp_path_factory, monkeypatch, out):
    """`export c --out` at junk places: an empty or blank --out, a file, a folder holding an earlier export's
    CMakeLists.txt: refused in one line and nothing replaced (only the refusals run: no CasADi generation)."""
    folder = tmp_path_factory.mktemp("export")
    (folder / "EXISTING").mkdir()
    (folder / "EXISTING" / "CMakeLists.txt").write_text("mine\n")
    (folder / "FILE").write_text("a file\n")
    monkeypatch.chdir(folder)
    if out not in ("", " ", "EXISTING", "FILE"):
        _tally(0)
        return  # a fresh folder would be written: the suite's test_export_c_names_are_valid_c_identifiers
    code, _, err = cli("export", "c", "--robot", "five_bar", "--out", out)
    check_outcome(code, err, out)
    assert code == 2
    assert (folder / "EXISTING" / "CMakeLists.txt").read_text() == "mine\n"


FLEET_ENTRIES = st.lists(st.tuples(
    st.sampled_from(["r1", "r2", ".hidden", "_out", "README"]),
    st.one_of(st.sampled_from(["2026-11-01.csv", "2026-11-02", "x.mcap", "notes.txt", "run.db3", "RUN.json",
                               "robot.yaml"]), st.text(alphabet="abc.-_", min_size=1, max_size=6)),
    st.sampled_from(["file", "dir", "link_up", "link_root", "link_self", "broken", "fifo", "junk_csv"]),
), max_size=6)


@FUZZ
@given(entries=FLEET_ENTRIES)
def test_fleet_folder_fuzz(cli, tmp_path_factory, entries):
    """`fleet identify` on folders of junk entries (files, folders, links up, to the root, to themselves, broken,
    FIFOs, CSV files that are not logs): exit 0, 1 with the failures summarized in one line, or 2; never a
    traceback nor a hang; no entry read twice."""
    root = tmp_path_factory.mktemp("fleet")
    (root / "robot.yaml").write_text(f"urdf: {REPO / 'urdf' / 'dualv.urdf'}\n")  # a robot file that is refused
    for robot, name, kind in entries:
        folder = root / robot
        folder.mkdir(exist_ok=True)
        path = folder / name
        if path.exists() or path.is_symlink():
            continue
        if kind == "dir":
            path.mkdir()
        elif kind == "link_up":
            path.symlink_to(folder, target_is_directory=True)
        elif kind == "link_root":
            path.symlink_to(root, target_is_directory=True)
        elif kind == "link_self":
            path.symlink_to(path)
        elif kind == "broken":
            path.symlink_to(root / "nowhere")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "junk_csv":
            path.write_text("t,a_position\n0,1\n1,x\n")
        else:
            path.write_text("")
    code, _, err = cli("fleet", "identify", root, "--no-report", "--quiet", "--workers", "1")
    check_outcome(code, err, entries, codes=(0, 1, 2))


LOG_PATTERNS = st.sampled_from(["Position{i}", "{joint}_position", "{joint}_effort", "{i}", "t", "Torque{i}",
                                "{joint}", "{x}", "{", "position", ""])


@FUZZ
@given(position=LOG_PATTERNS, effort=st.one_of(st.none(), LOG_PATTERNS), velocity=st.one_of(st.none(), LOG_PATTERNS),
       unit=st.sampled_from([None, "s", "ms", "us", "ns", "samples"]), rate=st.sampled_from([None, "100", "200"]),
       extra=st.sampled_from(["", ",joints=x", ",first_index=0", ",time=t", ",position=again"]))
def test_log_schema_fuzz(cli, tmp_path_factory, small_log, position, effort, velocity, unit, rate, extra):
    """`bag from-csv` on a valid 200 Hz log with junk `--columns` and any `--time-unit`/`--rate`: a bag of the
    log's times, or one line naming the option, column or unit at fault."""
    folder = tmp_path_factory.mktemp("schema")
    columns = f"position={position}" + (f",effort={effort}" if effort is not None else "") + (
        f",velocity={velocity}" if velocity is not None else "") + extra
    arguments = ["--columns", columns] + (["--time-unit", unit] if unit else []) + (["--rate", rate] if rate else [])
    code, _, err = cli("bag", "from-csv", "--csv", small_log, "--out", folder / "bag", *arguments)
    check_outcome(code, err, arguments)
    if code == 0:
        assert unit in (None, "s"), (arguments, "a log in seconds read in another unit")


@pytest.fixture(scope="module")
def small_log(tmp_path_factory):
    """A 1 s, 200 Hz log of joints j1, j2 (seconds): t, jK_position, jK_effort and Position1, Torque1 copies."""
    path = tmp_path_factory.mktemp("small") / "log.csv"
    t = np.arange(200) / 200.0
    q = np.column_stack([np.sin(t), np.cos(t)])
    np.savetxt(path, np.column_stack([t, q, 2 * q, q, 2 * q]), delimiter=",", comments="", fmt="%.9g",
               header="t,j1_position,j2_position,j1_effort,j2_effort,Position1,Position2,Torque1,Torque2")
    return path
