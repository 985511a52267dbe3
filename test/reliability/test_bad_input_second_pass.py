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
