"""The ROS 2 package itself: manifest, data files, and the pure core free of rclpy."""

from __future__ import annotations

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
