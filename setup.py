"""Build script for both ``colcon build`` (ament_python) and ``pip install -e .``.

colcon installs the data files under ``share/pardyn`` and the console scripts
under ``lib/pardyn`` (setup.cfg) for ``ros2 run``/``ros2 launch``. pip installs
the same package; ``make`` adds the ROS 2 Kilted PyPI wheels (extra ``ros``).
"""

from pathlib import Path
from xml.etree import ElementTree

from setuptools import find_packages, setup
from setuptools.command.install_scripts import install_scripts

PACKAGE = "pardyn"
ROOT = Path(__file__).parent
VERSION = ElementTree.parse(ROOT / "package.xml").getroot().findtext("version").strip()
"""package.xml's <version>: the one place it is written (ROS reads it; pardyn.__version__ and the C export follow)."""

CONSOLE_SCRIPTS = [
    "pardyn = pardyn.cli:console_main",
    "closure_solver = pardyn.nodes.stopping:closure_solver",
    "dynamics = pardyn.nodes.stopping:dynamics",
    "recorder = pardyn.nodes.stopping:recorder",
    "sim = pardyn.nodes.stopping:sim",
    "controller = pardyn.nodes.stopping:controller",
    "trajectory = pardyn.nodes.stopping:trajectory",
    "identifier = pardyn.nodes.stopping:identifier",
    "gazebo_joint_states = pardyn.nodes.stopping:gazebo_joint_states",
    "visualizer = pardyn.nodes.stopping:visualizer",
]

DIRECT_SCRIPT = """\
# pardyn's console script {name!r} (setup.py: DirectEntryScripts): the entry point imported directly, as pip's
# scripts do, so that a node takes SIGINT/SIGTERM within milliseconds of its start (pardyn.nodes.stopping)
import sys

from {module} import {attribute}

if __name__ == "__main__":
    sys.exit({attribute}())
"""


class DirectEntryScripts(install_scripts):
    """The console scripts of ``setup.py install`` (what ``colcon build`` runs) written as pip writes them.

    setuptools' own wrapper (``# EASY-INSTALL-ENTRY-SCRIPT``) first imports
    ``importlib.metadata`` and scans ``sys.path`` for the entry point, ~0.1-0.4 s
    under load during which a Ctrl-C is a KeyboardInterrupt traceback and exit
    -2 (issue 34); this one imports the entry point at once.
    """

    def write_script(self, script_name, contents, mode="t", *ignored):
        targets = dict(line.replace(" ", "").split("=") for line in CONSOLE_SCRIPTS)
        if script_name in targets and "EASY-INSTALL-ENTRY-SCRIPT" in contents:
            module, attribute = targets[script_name].split(":")
            shebang = contents.splitlines(keepends=True)[0]
            contents = shebang + DIRECT_SCRIPT.format(name=script_name, module=module, attribute=attribute)
        return super().write_script(script_name, contents, mode, *ignored)


def data_files():
    files = [
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ]
    for folder in ("launch", "urdf", "config"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file():
                relative = path.relative_to(ROOT)
                files.append((f"share/{PACKAGE}/{relative.parent}", [str(relative)]))
    return files


setup(
    name=PACKAGE,
    version=VERSION,
    description="Dynamics, identification and control of parallel robots and cobots (ROS 2)",
    license="BSD-3-Clause",
    package_dir={"": "src"},
    packages=find_packages("src"),
    # Read at run time next to their module (pardyn.kernels.codegen: the compiled kernels' C sources): a
    # non-editable install (colcon build, pip install .) must carry them, test/test_install.py checks it.
    package_data={"pardyn.kernels": ["*.c"]},
    data_files=data_files(),
    python_requires=">=3.10",
    # ROS packages take their dependencies from package.xml (rosdep); these
    # are the pure-Python ones every install needs.
    install_requires=["setuptools", "numpy", "scipy", "pyyaml", "threadpoolctl"],
    extras_require={
        # What a machine without a ROS 2 install needs, all from PyPI.
        "ros": [
            "pin>=3",
            "casadi>=3.8",  # pardyn.kernels: the closed-loop model generated to C (the nodes' compiled path)
            "ros-kilted-rclpy",
            "ros-kilted-rmw-fastrtps-cpp",
            "ros-kilted-sensor-msgs",
            "ros-kilted-std-msgs",
            "ros-kilted-geometry-msgs",
            "ros-kilted-trajectory-msgs",
            "ros-kilted-std-srvs",
            "ros-kilted-rosgraph-msgs",
            "ros-kilted-visualization-msgs",  # the visualizer node's robot_markers
        ],
        "sim": ["mujoco", "rosbags>=0.11,<0.12", "mcap>=1.2", "matplotlib"],
        # Physically consistent identification (SDP with LMIs): pardyn identify --physical.
        "physical": ["cvxpy>=1.5"],
        # MATLAB v7.3 logs (HDF5) for pardyn identify --run FILE.mat (v5-v7 are read by scipy)
        "mat": ["h5py>=3"],
        # pardyn view: the robot in 3D in the browser (pardyn.scene.viewer).
        "view": ["viser>=1.0"],
        # hypothesis: the bad-input fuzz suite (test/reliability/test_fuzz.py, bench/fuzz.py)
        # pytest-xdist: make test runs the suite in TEST_WORKERS processes
        "test": ["pytest", "pytest-xdist", "hypothesis"],
        # make lint, .pre-commit-config.yaml: the linter and the type checker (settings in pyproject.toml); pinned
        # to a minor release, as a new one adds checks to the selected families
        "dev": ["ruff>=0.17,<0.18", "mypy>=2.4,<2.5", "pre-commit"],
        # make docs: the site in doc/ (Sphinx + MyST Markdown pages + furo; rosdoc2 reads the same doc/conf.py)
        "docs": ["sphinx>=7", "myst-parser>=3", "furo"],
        # Studies, sweeps and fleets on more than one process or machine (pardyn.distributed);
        # dask-jobqueue (not installed) starts the workers on SLURM/PBS clusters.
        "distributed": ["dask[distributed]>=2024.1"],
        # make bench: FIGAROH's own identification of the Staubli TX40 beside pardyn's (bench/tx40.py), MuJoCo's
        # system identification beside pardyn's on the DualV and the Delta (bench/peers.py).
        "bench": ["figaroh", "mujoco[sysid]"],
    },
    entry_points={"console_scripts": CONSOLE_SCRIPTS},
    cmdclass={"install_scripts": DirectEntryScripts},
)
