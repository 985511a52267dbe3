"""The markers (setup.cfg) land where they should: the whole suite is collected in a subprocess and what
test/conftest.py marked is compared with what the test files say, read independently (their source, by ast).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TEST_ROOT = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_pardyn_test_conftest", TEST_ROOT / "conftest.py")
rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rules)

DUMP = """\
import json, os
NAMES = {"slow", "ros", "compiled", "shared_data"}
def pytest_collection_finish(session):
    marks = {item.nodeid: sorted({m.name for m in item.iter_markers()} & NAMES) for item in session.items}
    with open(os.environ["PARDYN_MARKERS_OUT"], "w") as out:
        json.dump(marks, out)
"""


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> dict[str, set[str]]:
    """``{node id relative to test/: markers}`` of the whole suite, as ``pytest --collect-only`` marks it."""
    folder = tmp_path_factory.mktemp("markers")
    (folder / "pardyn_dump_markers.py").write_text(DUMP)
    out = folder / "markers.json"
    environment = {**os.environ, "PARDYN_MARKERS_OUT": str(out),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "pardyn_dump_markers",
                           "-p", "no:cacheprovider", str(TEST_ROOT)], cwd=TEST_ROOT.parent, env=environment,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {node.removeprefix("test/"): set(marks) for node, marks in json.loads(out.read_text()).items()}


def _test_functions():
    """``(module relative to test/, function name, argument names)`` of every test function, by ast."""
    for path in sorted(TEST_ROOT.rglob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                yield path.relative_to(TEST_ROOT).as_posix(), node.name, {a.arg for a in node.args.args}


def _items(collected, module: str, function: str | None = None) -> dict[str, set[str]]:
    prefix = f"{module}::" if function is None else f"{module}::{function}"
    return {node: marks for node, marks in collected.items()
            if node.startswith(prefix) and (function is None or node[len(prefix):len(prefix) + 1] in ("", "["))}


def test_every_test_that_starts_a_node_is_marked_ros(collected):
    checked = 0
    for module, function, arguments in _test_functions():
        if arguments & rules.ROS_FIXTURES:
            items = _items(collected, module, function)
            checked += len(items)
            assert all("ros" in marks for marks in items.values()), (module, function, items)
    assert checked > 50  # test/nodes: launch_node, ros_client, start_process, in_process
    nodes = {n: m for n, m in collected.items() if n.startswith("nodes/")
             and Path(n.split("::")[0]).name not in rules.NODES_WITHOUT_ROS}
    assert nodes and all("ros" in marks for marks in nodes.values())


def test_the_compiled_path_and_the_compilers_are_marked_compiled(collected):
    parametrized = {n: m for n, m in collected.items() if "[compiled" in n or "-compiled" in n}
    assert len(parametrized) > 10 and all("compiled" in marks for marks in parametrized.values())
    for module in ("export/test_sdf.py", "kernels/test_kernels.py"):
        assert any("compiled" in marks for marks in _items(collected, module).values()), module


def test_tests_on_the_shared_datasets_are_marked_shared_data(collected):
    for module in ("identification/test_tx40.py", "identification/test_tiago.py",
                   "dynamics/test_constraint_agreement.py"):
        items = _items(collected, module)
        assert items and all("shared_data" in marks for marks in items.values()), module
    assert "shared_data" in collected["identification/test_sources.py::"
                                      "test_foreign_sqlite3_bag_of_the_tx40_gives_what_the_csv_files_give"]


def test_every_listed_test_exists(collected):
    """A renamed or deleted test leaves no stale entry in the lists of test/conftest.py."""
    modules = {node.split("::")[0] for node in collected}
    for entry in sorted(rules.ROS_TESTS | rules.COMPILED_MODULES | rules.SLOW_TESTS | rules.NODES_WITHOUT_ROS
                        | set(rules.MODULE_WALL_S)):
        if "::" in entry:
            assert _items(collected, *entry.split("::")), entry
        else:
            assert entry in modules or f"nodes/{entry}" in modules, entry
