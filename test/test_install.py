"""The package as ``colcon build`` installs it (ament_python, no ``--symlink-install``) works from its prefix.

colcon-core's ``PythonBuildTask`` (colcon_core/task/python/build.py, reused by colcon-ros' ament_python task)
runs, with the source folder as working directory::

    python -W 'ignore:setup.py install is deprecated' -W 'ignore:easy_install command is deprecated' setup.py
        egg_info --egg-base <build> build --build-base <build>/build
        install --record <build>/install.log --install-scripts $base/lib/pardyn
        --single-version-externally-managed install_data

with ``PYTHONPATH = <build>/prefix_override:<colcon's commands>:<prefix>/lib/pythonX.Y/site-packages`` where
``prefix_override/sitecustomize.py`` sets ``sys.prefix`` to the install prefix (that is how the files land in
the prefix: no ``--prefix``). :func:`colcon_install` repeats exactly that into a temporary prefix. The installed
console scripts then run as ``ros2 run pardyn X`` runs them (``<prefix>/lib/pardyn/X``) with the environment
``install/setup.bash`` gives (``PYTHONPATH`` = the prefix's site-packages, ``AMENT_PREFIX_PATH`` = the prefix),
from a working directory outside the checkout, with the checkout taken off ``sys.path`` (the venv's editable
install puts it there; a colcon user's machine does not have it).

The compiled kernels are generated from ``solver.c`` and ``laws.c`` read next to ``pardyn/kernels/codegen.py``:
the test appends a marker comment to the *installed* ``laws.c`` and finds it in the generated source of the
kernels the installed CLI and node build, so they were built from the prefix's files, not the checkout's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "pardyn"
MARKER = "/* pardyn install test: the installed laws.c */"
SCRIPTS = ("pardyn", "closure_solver", "dynamics", "recorder", "sim", "controller", "trajectory", "identifier",
           "gazebo_joint_states")

# Runs first in every installed process: the checkout leaves sys.path (what a colcon user's machine looks like).
STRIP_CHECKOUT = """\
import sys
from pathlib import Path
_installed = {installed!r}
sys.path[:] = [p for p in sys.path
               if p == _installed or not (Path(p or '.') / 'pardyn' / '__init__.py').is_file()]
"""


def colcon_install(prefix: Path, build: Path) -> subprocess.CompletedProcess:
    """``colcon build --packages-select pardyn`` (no --symlink-install) of this checkout into ``prefix``."""
    override = build / "prefix_override"
    override.mkdir(parents=True)
    # colcon_core/task/python/template/sitecustomize.py.em
    (override / "sitecustomize.py").write_text(
        "import sys\n"
        f"if sys.prefix == {sys.prefix!r}:\n"
        "    sys.real_prefix = sys.prefix\n"
        f"    sys.prefix = sys.exec_prefix = {str(prefix)!r}\n")
    python_lib = site_packages(prefix)
    python_lib.mkdir(parents=True)  # "`setup.py develop|install` requires the python lib path to exist"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(override), str(python_lib)])}
    command = [sys.executable, "-W", "ignore:setup.py install is deprecated",
               "-W", "ignore:easy_install command is deprecated", "setup.py",
               "egg_info", "--egg-base", os.path.relpath(os.path.realpath(build), os.path.realpath(REPO)),
               "build", "--build-base", str(build / "build"),
               "install", "--record", str(build / "install.log"), "--install-scripts", "$base/lib/pardyn",
               "--single-version-externally-managed", "install_data"]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def site_packages(prefix: Path) -> Path:
    """colcon_core.python_install_path: the ``purelib`` path of the default scheme with ``base`` = prefix."""
    return Path(sysconfig.get_path("purelib", vars={"base": str(prefix)}))


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("colcon")
    prefix, build = root / "install" / PACKAGE, root / "build" / PACKAGE
    result = colcon_install(prefix, build)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    python_lib = site_packages(prefix)
    laws = python_lib / PACKAGE / "kernels" / "laws.c"
    if laws.is_file():
        laws.write_text(laws.read_text() + "\n" + MARKER + "\n")
    strip = root / "strip_checkout"
    strip.mkdir()
    (strip / "sitecustomize.py").write_text(STRIP_CHECKOUT.format(installed=str(python_lib)))
    cwd = root / "elsewhere"
    cwd.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("PARDYN_")}
    env.update({
        "PYTHONPATH": os.pathsep.join([str(strip), str(python_lib)]),  # install/setup.bash's, checkout stripped
        "AMENT_PREFIX_PATH": os.pathsep.join([str(prefix), env.get("AMENT_PREFIX_PATH", "")]).rstrip(os.pathsep),
        "PARDYN_KERNEL_CACHE": str(root / "kernel_cache"),  # empty: the kernels are generated here, now
        "PYTHONUNBUFFERED": "1",
        "OPENBLAS_NUM_THREADS": "1",
    })
    return {"prefix": prefix, "python_lib": python_lib, "env": env, "cwd": cwd, "cache": root / "kernel_cache"}


def test_colcon_layout_scripts_in_lib_data_in_share_modules_in_site_packages(installed):
    prefix, python_lib = installed["prefix"], installed["python_lib"]
    for script in SCRIPTS:
        path = prefix / "lib" / PACKAGE / script
        assert path.is_file() and os.access(path, os.X_OK), f"{path}: `ros2 run pardyn {script}` needs it"
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / PACKAGE).is_file()
    for item in ("package.xml", "launch/sim.launch.py", "config/bringup/hardware.yaml", "config/robots/rrr3.yaml",
                 "urdf/rrr3.urdf"):
        assert (prefix / "share" / PACKAGE / item).is_file(), item
    assert (python_lib / PACKAGE / "__init__.py").is_file()
    assert not (prefix / "bin" / PACKAGE).exists()  # not on PATH: `ros2 run pardyn pardyn ...` (README)


def test_every_file_of_the_source_package_is_installed(installed):
    """Every non-Python file under src/pardyn (read at run time next to its module) is in the prefix."""
    source = REPO / "src" / PACKAGE
    data = sorted(p.relative_to(source) for p in source.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts)
    assert Path("kernels/solver.c") in data and Path("kernels/laws.c") in data
    missing = [str(p) for p in data if not (installed["python_lib"] / PACKAGE / p).is_file()]
    assert not missing, f"not installed (setup.py package_data): {missing}"


def test_the_installed_version_is_package_xml_s(installed):
    """No package.xml beside the installed module: pardyn.__version__ is the egg-info's (setup.py: package.xml's)."""
    from xml.etree import ElementTree  # noqa: PLC0415

    code = "import pardyn; print(pardyn.__version__, pardyn.__file__)"
    result = subprocess.run([sys.executable, "-c", code], cwd=installed["cwd"], env=installed["env"],
                            capture_output=True, text=True, timeout=120, check=True)
    version, module = result.stdout.split()
    assert Path(module).is_relative_to(installed["python_lib"])
    assert version == ElementTree.parse(REPO / "package.xml").getroot().findtext("version")


def generated_sources(cache: Path, robot: str) -> list[Path]:
    return sorted(cache.glob(f"{robot}-*/pardyn_{robot}.c"))


def test_installed_cli_builds_the_kernels_from_the_prefix(installed):
    """``ros2 run pardyn pardyn kinematics`` with compiled kernels required (PARDYN_KERNELS=compiled)."""
    env = {**installed["env"], "PARDYN_KERNELS": "compiled"}
    command = [str(installed["prefix"] / "lib" / PACKAGE / PACKAGE), "kinematics", "--robot", "five_bar",
               "--task", "0.0,0.25"]
    result = subprocess.run(command, cwd=installed["cwd"], env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    answer = json.loads(result.stdout)
    assert answer["robot"] == "five_bar" and answer["task"] == {"x": 0.0, "y": 0.25}
    (source,) = generated_sources(installed["cache"], "five_bar")
    assert MARKER in source.read_text()  # generated from the prefix's laws.c


def test_installed_node_runs_on_its_compiled_kernels_and_stops_on_sigint(installed):
    """``ros2 run pardyn closure_solver`` (robot rrr3): logs its compiled kernels, built from the prefix's sources."""
    env = {**installed["env"], "ROS_DOMAIN_ID": os.environ.get("ROS_DOMAIN_ID", "0")}
    command = [str(installed["prefix"] / "lib" / PACKAGE / "closure_solver"), "--ros-args", "-p", "robot:=rrr3"]
    process = subprocess.Popen(command, cwd=installed["cwd"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 180.0
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "kernels" in line:
                break
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=30)
        lines.append(rest)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    output = "".join(lines)
    assert "compiled kernels (built in" in output and "unavailable" not in output, output[-3000:]
    (source,) = generated_sources(installed["cache"], "rrr3")
    assert MARKER in source.read_text()
    assert process.returncode == 0, output[-3000:]
