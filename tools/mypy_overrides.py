#!/usr/bin/env python3
"""Print the [tool.mypy] ``overrides`` that silence exactly what mypy reports today, module by module.

The adoption baseline of pyproject.toml (issue 35): mypy runs lenient, and each module is excused only the error
codes it has. To tighten, delete a module from its table and fix what ``make lint`` then reports; run this again
(``python tools/mypy_overrides.py``, after removing the generated tables from pyproject.toml) only to see what is
left, never to excuse new code: a new module starts with no override.

Reads mypy's output on stdin (``mypy --no-error-summary | python tools/mypy_overrides.py``) or runs mypy itself.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

ERROR = re.compile(r"^(?P<path>src/[\w/]+)\.py:\d+(?::\d+)?: error: .*\[(?P<code>[a-z-]+)\]$")


def module_of(path: str) -> str:
    """``src/pardyn/a/b.py`` -> ``pardyn.a.b`` (a package's ``__init__`` -> the package)."""
    parts = path.removeprefix("src/").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def overrides(report: str) -> str:
    """``overrides = [...]`` for [tool.mypy]: one line per module (sorted), its error codes sorted."""
    codes: dict[str, set[str]] = defaultdict(set)
    for line in report.splitlines():
        if match := ERROR.match(line):
            codes[module_of(match["path"])].add(match["code"])
    lines = []
    for module, found in sorted(codes.items()):
        quoted = ", ".join(f'"{code}"' for code in sorted(found))
        lines.append(f'    {{ module = "{module}", disable_error_code = [{quoted}] }},')
    return "overrides = [\n" + "\n".join(lines) + "\n]\n"


def main() -> int:
    if sys.stdin.isatty():
        report = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], capture_output=True,
                                text=True, check=False).stdout
    else:
        report = sys.stdin.read()
    print(overrides(report), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
