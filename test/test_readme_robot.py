"""README "Write your own robot": its commands, verbatim, from an empty folder (the durations cut to 6 s).

Checks what the section claims: the kinematics answer is the hand closed form, the demo identifies the
robot (a result file, a payload near the true 20 % of the robot's mass) and the controller runs on the
identified parameters (a bag of joint states written).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def section_commands() -> str:
    """The ```bash blocks of the README's "Write your own robot" section, joined."""
    text = README.read_text()
    section = text[text.index("## Write your own robot"):]
    section = section[:section.index("\n## ", 5)]
    return "\n".join(re.findall(r"```bash\n(.*?)```", section, flags=re.S))


def test_the_readme_walkthrough_runs_verbatim(tmp_path):
    script = re.sub(r"--duration \d+", "--duration 6", section_commands())
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=environment, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    folder = tmp_path / "my_robot"
    answer = json.loads(done.stdout[done.stdout.index("{\n"):done.stdout.index("\n}\n") + 2])
    assert answer["joints"]["slider1_joint"] == pytest.approx(0.03 - math.sqrt(0.3**2 - 0.2**2), abs=1e-12)
    result = json.loads((folder / "out" / "result.json").read_text())
    assert result["robot"] == "biglide" and result["payload"]["mass"] == pytest.approx(0.34, rel=0.3)
    assert "[INFO]" not in done.stderr and "node log:" in done.stdout  # the nodes' lines went to the log
    assert (folder / "run").is_dir() and "messages" in done.stdout  # the controller's run was recorded
