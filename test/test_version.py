"""The version is written once, in package.xml (what ROS reads); setup.py, pardyn.__version__ and the C export follow."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pardyn
from pardyn.export.c_library import cmake_lists

ROOT = Path(__file__).resolve().parents[1]
MANIFEST_VERSION = ElementTree.parse(ROOT / "package.xml").getroot().findtext("version")


def test_package_xml_has_a_ros_version():
    # REP 149 (package format 3): three dot-separated non-negative integers
    assert re.fullmatch(r"\d+\.\d+\.\d+", MANIFEST_VERSION or ""), MANIFEST_VERSION


def test_setup_py_pardyn_and_the_c_export_agree_with_package_xml():
    setup_version = subprocess.run([sys.executable, "setup.py", "--version"], cwd=ROOT, capture_output=True,
                                   text=True, check=True).stdout.split()[-1]
    assert setup_version == MANIFEST_VERSION
    assert pardyn.__version__ == MANIFEST_VERSION
    assert f"project(pardyn_x VERSION {MANIFEST_VERSION} LANGUAGES C)" in cmake_lists("pardyn_x", "x")


def test_an_install_without_package_xml_reports_its_metadata(tmp_path, monkeypatch):
    """A wheel or colcon install (no package.xml two folders up) reads the installed metadata, not a guess."""
    from importlib import metadata

    fake = tmp_path / "lib" / "site-packages" / "pardyn" / "__init__.py"
    fake.parent.mkdir(parents=True)
    monkeypatch.setattr(pardyn, "__file__", str(fake))
    monkeypatch.setattr(metadata, "version", lambda name: {"pardyn": "7.8.9"}[name])
    assert pardyn._version() == "7.8.9"


def test_the_version_is_written_nowhere_else():
    written = re.compile(r"""(version\s*=\s*["']\d+\.\d+\.\d|VERSION \d+\.\d+\.\d+ LANGUAGES|__version__\s*=\s*["'])""")
    sources = [ROOT / "setup.py", *sorted((ROOT / "src" / "pardyn").rglob("*.py"))]
    offenders = [str(p.relative_to(ROOT)) for p in sources if written.search(p.read_text())]
    assert offenders == []
