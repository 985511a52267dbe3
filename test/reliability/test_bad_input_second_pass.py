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
