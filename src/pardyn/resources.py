"""Where pardyn's data files (``config/``, ``urdf/``, ``launch/``) are.

Three ways to install the package, three places for the data:

* from a source checkout (``pip install -e .``, ``make``): the repository root;
* with ``colcon build`` on a ROS 2 install: the ament share directory;
* ``pip install .``: ``<prefix>/share/pardyn`` (setup.py ``data_files``).

``PARDYN_SHARE`` overrides all three.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["share_directory", "robots_directory", "list_robots", "resolve_path"]

PACKAGE_NAME = "pardyn"


def _is_share(path: Path) -> bool:
    return (path / "config" / "robots").is_dir()


def share_directory() -> Path:
    """Return the directory holding ``config/``, ``urdf/`` and ``launch/``."""
    override = os.environ.get("PARDYN_SHARE")
    if override:
        return Path(override)
    source_root = Path(__file__).resolve().parents[2]
    if (source_root / "package.xml").is_file() and _is_share(source_root):
        return source_root
    try:
        from ament_index_python.packages import (  # noqa: PLC0415 - optional on pip installs
            PackageNotFoundError,
            get_package_share_directory,
        )

        try:
            candidate = Path(get_package_share_directory(PACKAGE_NAME))
            if _is_share(candidate):
                return candidate
        except (PackageNotFoundError, ValueError, LookupError, OSError):
            pass
    except ImportError:
        pass
    candidate = Path(sys.prefix) / "share" / PACKAGE_NAME
    if _is_share(candidate):
        return candidate
    raise FileNotFoundError(
        "pardyn data files not found: set PARDYN_SHARE to the directory holding config/robots"
    )


def robots_directory() -> Path:
    """Directory of the robot YAML files (``config/robots``)."""
    return share_directory() / "config" / "robots"


def list_robots() -> list[str]:
    """Names of the robots shipped with pardyn, sorted."""
    return sorted(path.stem for path in robots_directory().glob("*.yaml"))


def resolve_path(reference: str, *, relative_to: Path) -> Path:
    """Resolve a path written in a config file.

    ``package://pardyn/<rest>`` is taken from the share directory; a relative
    path is taken relative to ``relative_to`` (the directory of the file that
    names it); an absolute path is kept.
    """
    prefix = f"package://{PACKAGE_NAME}/"
    if reference.startswith(prefix):
        return share_directory() / reference[len(prefix) :]
    path = Path(reference)
    return path if path.is_absolute() else (relative_to / path).resolve()
