"""Bad-input tests: run ``pardyn`` in process and check the promise (one line, exit 2, no traceback, no NaN)."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest
import yaml

from pardyn.cli import main

REPO = Path(__file__).resolve().parents[2]
GEPETTO = REPO.parent / "shared" / "datasets" / "gepetto_parallel_robots"  # ../shared beside the clone


class Outcome:
    """What one ``pardyn`` run gave: exit code, stdout, stderr."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __iter__(self):  # code, out, err = cli(...)
        return iter((self.code, self.out, self.err))

    def refused(self, *fragments: str) -> str:
        """Assert a clean refusal (exit 2, one line on stderr, no traceback) mentioning every fragment; the line."""
        assert self.code == 2, (self.code, self.out[-500:], self.err[-2000:])
        line = self.err.strip()
        assert "\n" not in line, line
        assert "Traceback" not in line
        for fragment in fragments:
            assert fragment in line, (fragment, line)
        return line


def run_cli(*args: str) -> Outcome:
    """``pardyn ARGS`` in this process (argparse exits caught)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 2
    return Outcome(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def cli():
    """``cli(*args)``: ``pardyn ARGS`` in this process, an :class:`Outcome`."""
    return run_cli


def robot_copy(directory: Path, name: str = "dualv", *, edit=None, urdf_edit=None) -> Path:
    """A copy of a shipped robot (YAML + URDF) in ``directory``; ``edit(dict)`` / ``urdf_edit(text) -> text``."""
    description = yaml.safe_load((REPO / "config" / "robots" / f"{name}.yaml").read_text())
    urdf = (REPO / "urdf" / f"{name}.urdf").read_text()
    description["urdf"] = "robot.urdf"
    if edit is not None:
        edit(description)
    if urdf_edit is not None:
        urdf = urdf_edit(urdf)
    (directory / "robot.urdf").write_text(urdf)
    path = directory / f"{name}_copy.yaml"
    path.write_text(yaml.safe_dump(description, sort_keys=False))
    return path


@pytest.fixture
def robot_file(tmp_path):
    """``robot_file(name="dualv", edit=..., urdf_edit=...)``: the path of an edited copy of a shipped robot."""
    def make(name: str = "dualv", **edits) -> Path:
        folder = tmp_path / f"robot{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        return robot_copy(folder, name, **edits)

    return make


@pytest.fixture
def gepetto_copy(tmp_path):
    """``gepetto_copy(urdf_edit=None, yaml_text=None)``: an edited copy of Gepetto's 5bar_linkage; its robot.yaml."""
    if not GEPETTO.is_dir():
        pytest.skip(f"shared datasets absent: {GEPETTO} not found")

    def make(urdf_edit=None, yaml_text: str | None = None) -> Path:
        folder = tmp_path / f"gepetto{len(list(tmp_path.iterdir()))}" / "5bar_linkage"
        shutil.copytree(GEPETTO / "5bar_linkage", folder)
        if urdf_edit is not None:
            urdf = folder / "robot.urdf"
            urdf.write_text(urdf_edit(urdf.read_text()))
        if yaml_text is not None:
            (folder / "robot.yaml").write_text(yaml_text)
        return folder / "robot.yaml"

    return make
