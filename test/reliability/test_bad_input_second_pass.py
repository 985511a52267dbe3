"""Issue 39, what the first pass left: each case reproduces one line of the probe (a traceback, a message naming the
wrong thing or the wrong cause) and checks the refusal names the file, field, joint, column or time at fault, the
true cause, and what to do. The checks compare against the input we broke (the file left out, the value we wrote,
the row we corrupted, the columns we exchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ONE_BODY_MJCF = """<mujoco model="m">
  <include file="{include}"/>
  <worldbody>
    <body name="a"><joint name="j" type="hinge"/><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>
"""


# ------------------------------------------------------------------------------------- MJCF <include>
@pytest.mark.parametrize("command", ["--init", "--describe"])
def test_a_missing_mjcf_include_is_named_with_its_file(cli, tmp_path, command):
    """An MJCF whose <include file=...> is absent: `robots --init` gave MuJoCo's ValueError as a traceback (a
    regression), `--describe` MuJoCo's two-line message. Now one line naming the MJCF, the include's line and the
    path MuJoCo looked for it at (the MJCF's folder)."""
    path = tmp_path / "robot.xml"
    path.write_text(ONE_BODY_MJCF.format(include="parts/missing_part.xml"))
    cli("robots", command, path).refused(str(path), "line 2", 'include file="parts/missing_part.xml"',
                                         str(tmp_path / "parts" / "missing_part.xml"), "correct the path")


# ------------------------------------------------------------------------------------- inertials: vs dynamics:
def _platform_inertial(mass):
    def edit(description):
        description["inertials"] = [{"links": ["platform"], "mass": mass,
                                     "inertia_com": {"xx": 0.011, "yy": 0.011, "zz": 0.0206}}]
    return edit


def test_inertials_that_disagree_with_dynamics_are_named_as_the_source(cli, robot_file):
    """`inertials:` giving the platform 3 kg where `dynamics:` gives 1.92 kg was reported as "robot.urdf gives
    [3.0, ...]": the URDF gives 1.92 kg (the shipped DualV file). Now the YAML's inertials[0] is named as the
    source of 3.0, the URDF is not blamed, and the remedy is to state the body in one section."""
    path = robot_file(edit=_platform_inertial(3.0))
    line = cli("robots", "--describe", path).refused(str(path), "dynamics:", "1.92", "inertials[0] (platform)",
                                                    "[3.0,", "state ['platform'] twice")
    assert "robot.urdf" not in line


def test_a_urdf_that_disagrees_with_dynamics_is_still_named(cli, robot_file):
    """Without `inertials:`, a URDF whose platform mass differs (2.5 kg written into its <inertial>) is the source."""
    path = robot_file(urdf_edit=lambda text: _platform_mass(text, 2.5))
    cli("robots", "--describe", path).refused(str(path), str(path.parent / "robot.urdf"), "gives [2.5,")


def _platform_mass(text: str, mass: float) -> str:
    start = text.index('<link name="platform">')
    at = text.index("<mass value=", start)
    end = text.index("/>", at)
    return text[:at] + f'<mass value="{mass}"' + text[end:]


# ------------------------------------------------------------------------------------- locked:
PROBE_JOINT = ('<link name="probe"/><joint name="probe_joint" type="revolute"><parent link="platform"/>'
               '<child link="probe"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
               "</joint></robot>")


@pytest.mark.parametrize("keep_home", [True, False])
def test_locking_a_loop_joint_names_the_lost_degree_of_freedom(cli, robot_file, keep_home):
    """`locked: {leg1_joint2: 0.5}` (a passive joint of DualV's first leg, in its loop) said "home.joints: unknown
    joints ['leg1_joint2']" though the URDF has it; with it dropped from home.joints, "the loops do not close".
    The cause: leg 1 becomes a two-joint chain that holds the platform to a circle, so 15 - 1 joints under 12
    independent closure equations leave 2 degrees of freedom for the 3 task coordinates x, y, phi."""
    def edit(description):
        description["locked"] = {"leg1_joint2": 0.5}
        if not keep_home:
            del description["home"]["joints"]["leg1_joint2"]
    path = robot_file(edit=edit)
    line = cli("robots", "--describe", path).refused(str(path), "locked:", "['leg1_joint2']",
                                                    "leaves 2 degrees of freedom", "3 task coordinates",
                                                    "lock only joints outside the loops")
    assert "unknown joints" not in line


def test_a_locked_joint_named_in_home_is_said_to_be_locked(cli, robot_file):
    """A joint outside the loops (a probe on the platform), locked and also given a home value: was "unknown
    joints" though the URDF has it; now it is said to be locked, welded, and to be removed from home.joints."""
    def edit(description):
        description["locked"] = {"probe_joint": 0.5}
        description["home"]["joints"]["probe_joint"] = 0.5
    path = robot_file(edit=edit, urdf_edit=lambda text: text.replace("</robot>", PROBE_JOINT))
    line = cli("robots", "--describe", path).refused(str(path), "home.joints", "['probe_joint'] locked",
                                                    "remove it from home.joints")
    assert "unknown joints" not in line


# ------------------------------------------------------------------------------------- actuated:
FIXED_PROBE = ('<link name="probe"/><joint name="probe_joint" type="fixed"><parent link="platform"/>'
               '<child link="probe"/></joint></robot>')


@pytest.mark.parametrize("with_limit", [False, True])
def test_a_fixed_joint_listed_as_actuated_is_said_to_be_fixed(cli, robot_file, with_limit):
    """A fixed joint of the URDF in `actuated` was blamed on limits.effort ("no limit for the actuated joints
    ['probe_joint']"); given an effort limit too, it went on to a later error. Now: it is fixed, it cannot be
    actuated, remove it."""
    def edit(description):
        description["actuated"] = [*description["actuated"], "probe_joint"]
        if with_limit:
            description["limits"]["effort"]["probe_joint"] = 10.0
    path = robot_file(edit=edit, urdf_edit=lambda text: text.replace("</robot>", FIXED_PROBE))
    line = cli("robots", "--describe", path).refused(str(path), "actuated:", "'probe_joint' is a fixed joint",
                                                    "robot.urdf", "remove it")
    assert "limits.effort" not in line


# ------------------------------------------------------------------------------------- animate --scale
def test_an_unreachable_animate_scale_reports_the_users_value_and_a_reachable_one(cli, tmp_path):
    """`pardyn animate --scale 20` reported "sample 0 [0.0, 1.009765, 5.455785]: no closed configuration reached
    for the given values [...]" and a 14-joint closest configuration: values the user never gave. Now the user's
    --scale with the amplitudes it means (20 x the shipped box x 0.08 m, y 0.06 m, phi 0.3 rad), the time at which
    the motion leaves the workspace, and a --scale that the robot follows, which then animates (exit 0)."""
    import re  # noqa: PLC0415

    out = tmp_path / "animate"
    line = cli("animate", "--robot", "dualv", "--scale", "20", "--frames", "4", "--out", out).refused(
        "--scale 20", "{'x': 1.6, 'y': 1.2, 'phi': 6.0}", "at t = ", "none to size it from the workspace")
    assert "given values" not in line and "closest configuration" not in line
    followed = re.search(r"follows --scale (\S+): give --scale (\S+) or less", line)
    assert followed and followed[1] == followed[2] and 0 < float(followed[1]) < 20
    outcome = cli("animate", "--robot", "dualv", "--scale", followed[1], "--frames", "4", "--out", out)
    assert outcome.code == 0, outcome.err[-1000:]
    assert (out / "dualv.gif").is_file()


# ------------------------------------------------------------------------------------- logs: one corrupt sample
@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    """A valid DualV log (seconds, 200 Hz, positions then efforts of the four actuated joints)."""
    import importlib.util  # noqa: PLC0415 - the same log as the first pass's tests (test modules are no package)

    spec = importlib.util.spec_from_file_location("first_pass", Path(__file__).with_name("test_new_surfaces.py"))
    first_pass = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(first_pass)
    return first_pass.dualv_log(tmp_path_factory.mktemp("log") / "log.csv")


@pytest.mark.parametrize("column, field", [(3, "position"), (7, "effort")])
def test_a_single_corrupt_sample_is_named_with_its_time_not_as_a_unit(cli, tmp_path, log, column, field):
    """One 1e300 in leg3_joint1's position (column 3) or effort (column 7) at data row 501 (t = 2.5 s at 200 Hz)
    was reported as "positions from ... to 1e+300 ...: degrees instead of radians?" without its time. Now: the
    joint, the field, the value, its time and row, and that it is an outlier, not a unit."""
    lines = log.read_text().splitlines()
    cells = lines[501].split(",")  # line 0 is the header: data row 501 is sample 500
    cells[column] = "1e300"
    lines[501] = ",".join(cells)
    corrupt = tmp_path / "corrupt.csv"
    corrupt.write_text("\n".join(lines) + "\n")
    line = cli("identify", "--robot", "dualv", "--csv", corrupt, "--out", tmp_path / "r.json").refused(
        str(corrupt), "'leg3_joint1'", f"{field} 1e+300", "t=2.500000 s", "sample 500", "row 501", "outlier",
        "not a unit problem")
    assert "degrees instead of radians" not in line and "another unit" not in line
    assert not (tmp_path / "r.json").exists()


# ------------------------------------------------------------------------------------- --columns swapped
@pytest.fixture(scope="module")
def log_with_velocities(log, tmp_path_factory) -> Path:
    """The DualV log with ``<joint>_velocity`` columns: central differences of its positions (rad/s)."""
    import numpy as np  # noqa: PLC0415

    header = log.read_text().splitlines()[0].split(",")
    data = np.loadtxt(log, delimiter=",", skiprows=1)
    positions = [k for k, name in enumerate(header) if name.endswith("_position")]
    velocities = np.gradient(data[:, positions], data[:, 0], axis=0)
    names = header + [header[k].replace("_position", "_velocity") for k in positions]
    path = tmp_path_factory.mktemp("velocity") / "log.csv"
    np.savetxt(path, np.column_stack([data, velocities]), delimiter=",", header=",".join(names), comments="",
               fmt="%.12g")
    return path


def test_swapped_position_and_velocity_columns_are_said_to_be_swapped(cli, tmp_path, log_with_velocities):
    """`--columns position={joint}_velocity,velocity={joint}_position,...` (the two patterns exchanged) ended in a
    closure failure ("no closed configuration ... Newton did not converge") naming neither file nor column. The
    data say it: d/dt of the 'velocity' columns is the 'position' columns and not the other way round."""
    line = cli("identify", "--robot", "dualv", "--csv", log_with_velocities, "--columns",
               "position={joint}_velocity,velocity={joint}_position,effort={joint}_effort",
               "--out", tmp_path / "r.json").refused(str(log_with_velocities), "--columns", "swapped",
                                                     "{joint}_velocity", "{joint}_position")
    assert "Newton" not in line and "closed configuration" not in line


def test_position_and_velocity_columns_in_their_places_are_read(cli, tmp_path, log_with_velocities):
    """The same log with the patterns in their places passes the check (the identification runs to its end)."""
    outcome = cli("identify", "--robot", "dualv", "--csv", log_with_velocities, "--columns",
                  "position={joint}_position,velocity={joint}_velocity,effort={joint}_effort",
                  "--out", tmp_path / "r.json")
    assert outcome.code == 0, outcome.err[-2000:]
