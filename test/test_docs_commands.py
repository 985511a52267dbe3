"""The commands of the README's tour and of the tutorials (doc/tutorials/*.md), extracted and run verbatim.

`test_the_own_robot_tutorial_runs_verbatim`: "Write your own robot" from an empty folder (the demo's runs cut to
3 s, its kinematics part to 100 Hz, the bringup to 3 s).
Checks what the page claims: the kinematics answer is the hand closed form, the demo identifies the robot (a
result file, a payload near the true 20 % of the robot's mass) and the controller runs on the identified
parameters (a bag of joint states written).

`test_the_readme_tour_runs_verbatim`: the README's five-minute tour (durations cut to 3 s / 2 s, the demo's
kinematics part to 100 Hz).

`test_every_shell_block_is_run_or_says_why_not`: every ```bash block of the README and the tutorials is run by
a test of this file, or listed in NOT_RUN_HERE with what it needs that a test machine lacks and the test that
runs the same command on the same kind of input.
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

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
TUTORIALS = REPO / "doc" / "tutorials"
OWN_ROBOT = TUTORIALS / "own_robot.md"
BLOCK = re.compile(r"^( *)```bash\n(.*?)^\1```", flags=re.DOTALL | re.MULTILINE)

# First line of a block (stripped) -> why it is not run here, and the test that runs its command.
NOT_RUN_HERE = {
    "make demo   # creates .venv if missing, installs everything, runs the demonstration (~1.5 min)":
        "creates a second venv; .ci/run runs `make test` from a fresh clone, and test/test_demo.py runs "
        "`pardyn demo`",
    "cd ~/ws/src && git clone <this repository> pardyn && cd ~/ws":
        "needs a ROS 2 install with colcon and rosdep; test/test_install.py repeats colcon's build and runs the "
        "installed nodes",
    "make install":
        "creates a second venv; its `pardyn bringup` lines are test/nodes/test_bringup.py's and "
        "test_launch_signals.py's",
    "pardyn fleet simulate cell --model delta --robots 4 --nights 3     # 12 bags, truth in cell/_truth/":
        "12 MuJoCo runs (minutes); test/fleet/test_fleet.py simulates a smaller fleet and runs `pardyn fleet "
        "identify` on it",
    "dask scheduler --port 8786                            # on one machine":
        "needs a cluster of machines; test/test_distributed.py runs the same engine on a local Dask cluster",
    "pardyn identify --robot ur5e --run log.csv --time-unit samples --rate 1000 \\":
        "needs a user's log; test/identification/test_log_formats.py writes such logs and runs these options",
    "pardyn identify --robot ur5e --run logs/ --validate held_out.csv \\":
        "needs a maker's logs; test/identification/test_vendor_logs.py writes them and runs this command",
    "D=../shared/datasets/staubli_tx40/data":
        "needs ../shared (doc/data.md); test/identification/test_tx40.py runs this command on it",
}


def bash_blocks(path: Path) -> list[str]:
    """The ```bash blocks of a Markdown page, dedented, in page order."""
    blocks = []
    for indent, body in BLOCK.findall(path.read_text()):
        blocks.append("\n".join(line[len(indent):] for line in body.splitlines()) + "\n")
    return blocks


def run_script(script: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=environment, capture_output=True, text=True,
                          check=False, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def own_robot_commands() -> str:
    """The ```bash blocks of the "Write your own robot" tutorial, joined."""
    return "".join(bash_blocks(OWN_ROBOT))


def tour_commands() -> str:
    """The README's "A five-minute tour" block."""
    text = README.read_text()
    section = text[text.index("## A five-minute tour"):]
    return bash_blocks_of(section[:section.index("\n## ", 5)])[0]


def bash_blocks_of(text: str) -> list[str]:
    return [body for _, body in BLOCK.findall(text)]


def test_the_own_robot_tutorial_runs_verbatim(tmp_path):
    # the demo's shortest runs (conftest.OWN_ROBOT_DEMO_S: the biglide's payload within 3 % at 3 s over seeds 7-14)
    # and its kinematics part at 100 Hz (1 kHz: ~8 s of solving); the bringup 3 s of wall time
    script = re.sub(r"(demo .*)--duration \d+", r"\1--duration 3 --rate 100", own_robot_commands())
    script = re.sub(r"(bringup .*)--duration \d+", r"\1--duration 3", script)
    assert script.count("--duration 3 --rate 100") == 1 and script.count("--duration 3") == 2, script
    done = run_script(script, tmp_path)
    folder = tmp_path / "my_robot"
    answer = json.loads(done.stdout[done.stdout.index("{\n"):done.stdout.index("\n}\n") + 2])
    assert answer["joints"]["slider1_joint"] == pytest.approx(0.03 - math.sqrt(0.3**2 - 0.2**2), abs=1e-12)
    result = json.loads((folder / "out" / "result.json").read_text())
    assert result["robot"] == "biglide" and result["payload"]["mass"] == pytest.approx(0.34, rel=0.3)
    assert "[INFO]" not in done.stderr and "node log:" in done.stdout  # the nodes' lines went to the log
    assert (folder / "run").is_dir() and "messages" in done.stdout  # the controller's run was recorded


def test_the_readme_tour_runs_verbatim(tmp_path):
    # the demo's kinematics part at 100 Hz (1 kHz: 2001 DualV forward solves, ~8 s): it only has to run here
    script = re.sub(r"(demo .*)--duration \d+", r"\1--duration 3 --rate 100", tour_commands())
    script = re.sub(r"(bringup .*)--duration \d+", r"\1--duration 2", script)
    assert script.count("--duration 3 --rate 100") == 1 and script.count("--duration 2") == 1, script
    done = run_script(script, tmp_path, timeout=600)
    assert "dualv" in done.stdout.split("\n", 12)[:12].__str__()  # `pardyn robots` lists it
    answer = json.loads(done.stdout[done.stdout.index("{\n"):done.stdout.index("\n}\n") + 2])
    assert answer["joints"]["platform_x"] == pytest.approx(0.02, abs=1e-12)
    assert answer["residual"] < 1e-12
    result = json.loads((tmp_path / "out" / "dualv.json").read_text())
    assert result["robot"] == "dualv" and result["payload"]["mass"] == pytest.approx(5.37, rel=0.1)  # paper's load
    assert (tmp_path / "out" / "dualv_report" / "report.md").is_file()
    assert (tmp_path / "out" / "demo" / "result.json").is_file()


def test_every_shell_block_is_run_or_says_why_not():
    run_here = {own_robot_commands(), tour_commands()}
    pages = [README, *sorted(TUTORIALS.glob("*.md"))]
    unaccounted = []
    for page in pages:
        for block in bash_blocks(page):
            if block in run_here or any(block in joined for joined in run_here):
                continue
            if block.splitlines()[0].strip() not in NOT_RUN_HERE:
                unaccounted.append(f"{page.relative_to(REPO)}: {block.splitlines()[0]}")
    assert not unaccounted, ("a shell block no test runs (run it here or say why in NOT_RUN_HERE):\n"
                             + "\n".join(unaccounted))
    listed = {block.splitlines()[0].strip() for page in pages for block in bash_blocks(page)}
    assert set(NOT_RUN_HERE) <= listed, set(NOT_RUN_HERE) - listed  # no stale entry
    for reason in NOT_RUN_HERE.values():
        for test in re.findall(r"test/\S+?\.py", reason):
            assert (REPO / test).is_file(), test
