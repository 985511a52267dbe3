"""Every shipped robot exported once per session; the libsdformat check compiled once and run once on all."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import pardyn
from pardyn.export import export
from pardyn.resources import list_robots

HERE = Path(__file__).parent
INSTALL = ("libsdformat (Gazebo's SDF parser) is missing: install it with "
           "'apt-get install libsdformat-dev' (Debian/Ubuntu; .ci/run does it), then rerun")


PLACEHOLDER_MASS, PLACEHOLDER_INERTIA = 1e-7, 1e-9
"""kg, kg m^2: small, so that test_sdf_dynamics compares the mechanism, not the placeholders."""


@pytest.fixture(scope="session")
def exported(tmp_path_factory) -> dict[str, tuple[pardyn.Robot, dict[str, Path]]]:
    """``{robot name: (robot, {role: path})}`` for every robot pardyn ships (light placeholder links)."""
    out = tmp_path_factory.mktemp("export")
    result = {}
    for name in list_robots():
        robot = pardyn.load_robot(name)
        result[name] = (robot, export(robot, "sdf", out / name, placeholder_mass=PLACEHOLDER_MASS,
                                      placeholder_inertia=PLACEHOLDER_INERTIA))
    return result


@pytest.fixture(scope="session")
def sdf_check(tmp_path_factory) -> Path:
    """The C++ check program (test/export/sdf_check.cpp) built with the system compiler and libsdformat."""
    if shutil.which("pkg-config") is None or subprocess.run(
        ["pkg-config", "--exists", "sdformat12"], check=False
    ).returncode != 0:
        pytest.fail(INSTALL)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "sdformat12"], check=True,
                           capture_output=True, text=True).stdout.split()
    binary = tmp_path_factory.mktemp("sdf_check") / "sdf_check"
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.fail("no C++ compiler (c++ or g++): apt-get install g++")
    subprocess.run([compiler, "-std=c++17", "-O1", str(HERE / "sdf_check.cpp"), *flags, "-o", str(binary)],
                   check=True, timeout=300)
    return binary


@pytest.fixture(scope="session")
def libsdformat(exported, sdf_check) -> dict[Path, dict]:
    """What libsdformat resolves from every exported SDF file, by path (one run of the check)."""
    files = [path for _, paths in exported.values() for role, path in paths.items() if path.suffix == ".sdf"]
    run = subprocess.run([str(sdf_check), *map(str, files)], capture_output=True, text=True, timeout=120,
                         check=False)
    results = {Path(item["file"]): item for item in map(json.loads, run.stdout.splitlines())}
    assert set(results) == set(files), run.stderr
    return results
