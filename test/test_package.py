"""The ROS 2 package itself: manifest, data files, and the pure core free of rclpy."""

from __future__ import annotations

import functools
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_package_xml_is_format_3_ament_python_with_run_dependencies():
    root = ElementTree.parse(ROOT / "package.xml").getroot()
    assert root.get("format") == "3"
    assert root.findtext("name") == "pardyn"
    assert root.find("export/build_type").text == "ament_python"
    run = {element.text for element in root.findall("exec_depend")}
    needed = {"rclpy", "sensor_msgs", "std_msgs", "geometry_msgs", "pinocchio", "python3-numpy", "python3-yaml"}
    assert needed <= run, needed - run


def test_ament_resource_marker_and_data_files():
    assert (ROOT / "resource" / "pardyn").is_file()
    setup = (ROOT / "setup.py").read_text()
    for folder in ("launch", "urdf", "config"):
        assert f'"{folder}"' in setup
    assert "share/ament_index/resource_index/packages" in setup


def test_setup_cfg_puts_scripts_where_ros2_run_looks():
    text = (ROOT / "setup.cfg").read_text()
    assert "script_dir=$base/lib/pardyn" in text and "install_scripts=$base/lib/pardyn" in text


def test_pure_core_never_imports_rclpy():
    code = (
        "import sys, pkgutil, importlib, pardyn\n"
        "for module in pkgutil.walk_packages(pardyn.__path__, 'pardyn.'):\n"
        "    if not module.name.startswith('pardyn.nodes') and not module.name.endswith('__main__'):\n"
        "        importlib.import_module(module.name)\n"
        "print('rclpy' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_kinematics_never_imports_dynamics():
    """The layering description -> kinematics -> dynamics: no module of pardyn.kinematics imports pardyn.dynamics."""
    import ast  # noqa: PLC0415

    offenders = []
    for path in sorted((ROOT / "src" / "pardyn" / "kinematics").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(ROOT)}: {name}" for name in names if name.startswith("pardyn.dynamics")]
    assert not offenders, offenders


# --------------------------------------------------------------------------- layering
PACKAGE = ROOT / "src" / "pardyn"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module: str, name: str) -> str:
    """``from module import name``: the submodule ``module.name`` if there is one, else ``module``."""
    return f"{module}.{name}" if f"{module}.{name}" in MODULES else module


@functools.cache
def _imports(path: Path) -> list[tuple[int, str, str, bool]]:
    """Every import of pardyn in ``path`` (function-local and TYPE_CHECKING ones included, found by ast):
    ``(line, imported module, the statement's text, at module level)``; module level = not in a function:
    executed on import, or read by type checkers under ``if TYPE_CHECKING:`` (an arrow all the same: a type
    hint names what the module stands on)."""
    import ast  # noqa: PLC0415

    tree = ast.parse(path.read_text())
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rsplit(".", 1)[0]
    found = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False)
            elif isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name, ast.unparse(child), top) for alias in child.names
                             if alias.name.split(".")[0] == "pardyn")
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: from the package, up level - 1 packages
                    base = ".".join(package.split(".")[: len(package.split(".")) - child.level + 1] + ([base] if base else []))
                if base.split(".")[0] == "pardyn":
                    found.extend((child.lineno, _resolve(base, alias.name), ast.unparse(child), top)
                                 for alias in child.names)
            else:
                visit(child, top)

    visit(tree, True)
    return found


def _violations(rule) -> list[str]:
    """``file:line: import`` of every import for which ``rule(importer, imported)`` is true."""
    out = []
    for name, path in MODULES.items():
        for line, target, text, _ in _imports(path):
            if rule(name, target):
                out.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    return out


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_identification_never_imports_experiments_or_nodes():
    offenders = _violations(lambda importer, imported: _inside(importer, "pardyn.identification") and (
        _inside(imported, "pardyn.experiments") or _inside(imported, "pardyn.nodes")))
    assert not offenders, "identification reaches up:\n" + "\n".join(offenders)


def test_the_simulation_runner_sits_below_identification():
    """identification may host its model in :mod:`pardyn.simulation.runner`, nothing else of the simulation;
    the runner never imports identification."""
    offenders = _violations(lambda importer, imported: (
        _inside(importer, "pardyn.identification") and _inside(imported, "pardyn.simulation")
        and imported != "pardyn.simulation.runner") or (
        importer == "pardyn.simulation.runner" and _inside(imported, "pardyn.identification")))
    assert not offenders, "\n".join(offenders)


EXCITATION_BELOW_IDENTIFICATION = ("pardyn.excitation.fourier", "pardyn.excitation.bounds")
"""The excitation room's lower half: the series and the bounds (identification reads the bounds)."""


def test_the_excitation_design_sits_above_identification_and_the_rest_below():
    """:mod:`pardyn.excitation.design` ranks by identification's base parameters; the series and the bounds
    never import identification, and identification imports only them of the room."""
    offenders = _violations(lambda importer, imported: (
        importer in EXCITATION_BELOW_IDENTIFICATION and _inside(imported, "pardyn.identification")) or (
        _inside(importer, "pardyn.identification") and _inside(imported, "pardyn.excitation")
        and imported not in EXCITATION_BELOW_IDENTIFICATION))
    assert not offenders, "\n".join(offenders)


def test_the_distributed_engine_stands_on_nothing_of_the_robots():
    """:mod:`pardyn.distributed` (Dask scheduling) is infrastructure: it imports only the errors and the progress
    display, so every room may run its tasks on it."""
    offenders = _violations(lambda importer, imported: importer == "pardyn.distributed"
                            and imported not in {"pardyn.errors", "pardyn.progress"})
    assert not offenders, "\n".join(offenders)


def test_the_recordings_sit_between_the_bags_and_identification():
    """:mod:`pardyn.recordings` reads bags (:mod:`pardyn.bags`) and tables for identification: it imports neither
    identification nor anything above it, and the bags never import it."""
    above = ("pardyn.identification", "pardyn.simulation", "pardyn.experiments", "pardyn.nodes", "pardyn.cli",
             "pardyn.fleet", "pardyn.robot")
    offenders = _violations(lambda importer, imported: (
        _inside(importer, "pardyn.recordings") and any(_inside(imported, package) for package in above)) or (
        _inside(importer, "pardyn.bags") and _inside(imported, "pardyn.recordings")))
    assert not offenders, "\n".join(offenders)


CLI_RUNS_NODES = {
    ("pardyn.cli.bringup", "pardyn.nodes.bringup"),  # pardyn bringup: the nodes in one process
    ("pardyn.cli.bringup", "pardyn.nodes.launcher"),  # pardyn bringup --processes: one process per node
    ("pardyn.cli.bringup", "pardyn.nodes.stopping"),  # its stop on SIGINT/SIGTERM
    ("pardyn.cli.demo", "pardyn.nodes.identification_runs"),  # pardyn demo --nodes: records through the nodes
    ("pardyn.cli.view", "pardyn.nodes.stopping"),  # its stop on SIGINT/SIGTERM (the nodes' one stop-signal class)
    ("pardyn.cli.view", "pardyn.nodes.visualizer"),  # pardyn view --live: a node feeds the browser view
}
"""The CLI's imports of nodes: each runs nodes."""


def test_the_cli_imports_nodes_only_to_run_them():
    offenders = _violations(lambda importer, imported: _inside(importer, "pardyn.cli") and _inside(
        imported, "pardyn.nodes") and (importer, imported) not in CLI_RUNS_NODES)
    assert not offenders, "the CLI imports nodes without running them:\n" + "\n".join(offenders)


CORE_RUNS_NODES = {
    ("pardyn.experiments.hexapod_identification", "pardyn.nodes.identification_runs"),  # records through the nodes
}
"""The core's imports of nodes (outside nodes/ and cli/): each runs nodes."""


def test_the_core_imports_nodes_only_to_run_them():
    offenders = _violations(lambda importer, imported: not _inside(importer, "pardyn.nodes")
                            and not _inside(importer, "pardyn.cli") and _inside(imported, "pardyn.nodes")
                            and (importer, imported) not in CORE_RUNS_NODES)
    assert not offenders, "the core imports nodes without running them:\n" + "\n".join(offenders)


def test_only_the_cli_imports_the_cli():
    offenders = _violations(lambda importer, imported: not _inside(importer, "pardyn.cli")
                            and _inside(imported, "pardyn.cli"))
    assert not offenders, "\n".join(offenders)


def test_no_import_circle_at_module_level():
    """Tarjan's strongly connected components of the module-level import graph, type-only imports
    (``if TYPE_CHECKING:``) counted: none larger than one module. Function-local imports are left out (a
    deliberate late import: CasADi, rclpy on demand)."""
    edges: dict[str, dict[str, str]] = {name: {} for name in MODULES}
    for name, path in MODULES.items():
        for line, target, text, top in _imports(path):
            if top and target in MODULES and target != name:
                edges[name].setdefault(target, f"{path.relative_to(ROOT)}:{line}: {text}")
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def connect(node: str) -> None:  # recursive Tarjan; the graph is a few hundred modules deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for name in MODULES:
        if name not in index:
            connect(name)
    report = []
    for component in circles:
        report.append(" <-> ".join(component))
        report += [f"    {edges[a][b]}" for a in component for b in component if b in edges[a]]
    assert not circles, "import circles at module level:\n" + "\n".join(report)


def test_the_mechanism_stands_below_what_the_robot_assembles():
    """:mod:`pardyn.mechanism` (description, tree, indices, closures) reaches, through every module-level and
    type-only import, none of what :func:`pardyn.robot.load_robot` assembles on it: the robot, solvers' closed
    forms, dynamics, kernels."""
    above = ("pardyn.robot", "pardyn.kernels", "pardyn.dynamics", "pardyn.kinematics.analytic")
    reached, todo = set(), ["pardyn.mechanism"]
    while todo:
        name = todo.pop()
        for _, target, _, top in _imports(MODULES[name]):
            if top and target in MODULES and target not in reached:
                reached.add(target)
                todo.append(target)
    assert not [name for name in reached if any(_inside(name, package) for package in above)], sorted(reached)


LONG_FUNCTION = 80
"""Functions longer than this (lines from the ``def`` to the end) have a row in doc/architecture.md saying why."""


def _long_functions() -> dict[str, int]:
    """``{"dir/module.py: Class.function": lines}`` of every function of the package over :data:`LONG_FUNCTION` lines."""
    import ast  # noqa: PLC0415

    found: dict[str, int] = {}

    def visit(node: ast.AST, where: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = child.end_lineno - child.lineno + 1
                if lines > LONG_FUNCTION:
                    found[f"{where}: {prefix}{child.name}"] = lines
                visit(child, where, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, where, f"{prefix}{child.name}.")

    for path in sorted(PACKAGE.rglob("*.py")):
        visit(ast.parse(path.read_text()), path.relative_to(PACKAGE).as_posix(), "")
    return found


def test_every_function_over_80_lines_has_its_reason_here():
    """doc/architecture.md's table of long functions is the sources' (counted with ast), both ways: no function over
    80 lines without its row and reason, no row for a function that is shorter or gone, every count current."""
    import re  # noqa: PLC0415

    text = (ROOT / "doc" / "architecture.md").read_text()
    table = text[text.index("**Functions over 80 lines, and why**"):]
    rows = {match[1]: (int(match[2]), match[3]) for match in re.finditer(r"^\| `([^`]+)` \| (\d+) \| (.+) \|$", table,
                                                                          re.MULTILINE)}
    measured = _long_functions()
    wrong = [f"| `{name}` | {lines} | {rows[name][1] if name in rows else 'WHY?'} |"
             for name, lines in sorted(measured.items()) if rows.get(name, (None,))[0] != lines]
    gone = sorted(set(rows) - set(measured))
    assert not wrong and not gone, ("doc/architecture.md, functions over 80 lines: set these rows\n" + "\n".join(wrong)
                                    + "\nand remove these (now shorter or gone): " + ", ".join(gone))
