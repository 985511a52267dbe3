"""Reading the text files users give (robot files, CSV, YAML, JSON) so that every failure is one short line.

Every loader of a user file goes through :func:`read_text` (UTF-8, with or
without a byte-order mark; any other encoding is named, with the byte offset
of the first byte that is not UTF-8), :func:`load_yaml` (syntax errors as one
line ``line L, column C: problem``) and quotes values with :func:`shown`
(a value shortened to ~80 characters, whatever its size: a YAML alias bomb or
a 400-digit integer never becomes a megabyte of error message).
"""

from __future__ import annotations

import json
import math
import reprlib
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from pardyn.errors import InputError, PardynError

__all__ = ["MAX_TEXT_BYTES", "check_regular_file", "load_json", "load_yaml", "read_text", "shown", "text_lines"]

MAX_TEXT_BYTES = 512 * 1024 * 1024
"""Largest text file read whole (bytes): a bigger one is refused, not swapped in."""

_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big endian)"),
    (b"\xff\xfe", "UTF-16 (little endian)"),
    (b"\xfe\xff", "UTF-16 (big endian)"),
)

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlong = 40
for _name in ("maxdict", "maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
    setattr(_REPR, _name, 6)


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for an error message, at most ``limit`` characters (``...`` marks a cut).

    Bounded in time and memory whatever the value (nested aliases, huge
    integers, long strings): :mod:`reprlib` stops at depth 3 and 6 items.
    A float is shown with 6 significant digits when its repr is long.
    """
    if isinstance(value, float) and math.isfinite(value) and len(repr(value)) > 24:
        text = f"{value:.6g}"
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        text = f"an integer of {len(str(abs(value)))} digits" if abs(value) < 10**4000 else "a huge integer"
    else:
        try:
            text = _REPR.repr(value)
        except Exception:  # noqa: BLE001 - a value whose repr fails is still named
            text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe_bytes(data: bytes) -> str:
    for bom, name in _BOMS:
        if data.startswith(bom):
            return f"{name} text"
    if b"\x00" in data[:4096]:
        return "binary data (NUL bytes)"
    return "not UTF-8"


def read_text(path: str | Path, *, what: str = "file", error: type[PardynError] = InputError,
              max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The text of ``path``: UTF-8, an initial byte-order mark removed.

    Raises ``error`` (:class:`InputError` by default) naming the file: missing,
    a directory, larger than ``max_bytes``, UTF-16/32 or binary, or an invalid
    UTF-8 byte (its offset, line and what to do).
    """
    path = Path(path)
    try:
        size = check_regular_file(path, what=what, error=error)
        if size > max_bytes:
            raise error(f"{path}: {size} bytes, more than the {max_bytes} a {what} may have")
        data = path.read_bytes()
    except OSError as cause:
        raise error(f"{path}: cannot read the {what}: {cause.strerror or cause}") from cause
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as cause:
        kind = _describe_bytes(data)
        line = data[: cause.start].count(b"\n") + 1
        raise error(
            f"{path}: the {what} is {kind} (byte {cause.start}, line {line}: {data[cause.start:cause.start + 1]!r}); "
            "save it as UTF-8"
        ) from None


def check_regular_file(path: str | Path, *, what: str = "file", error: type[PardynError] = InputError) -> int:
    """The size (bytes) of ``path`` after checking it is a regular file (symbolic links followed).

    A FIFO, socket or device named like a data file would block the reader forever or never end: it is
    refused, as is a directory. ``OSError`` (missing file, no permission) is left to the caller.
    """
    mode = Path(path).stat()
    if stat.S_ISDIR(mode.st_mode):
        raise error(f"{path}: is a directory, expected a {what}")
    if not stat.S_ISREG(mode.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode.st_mode) else "a socket" if stat.S_ISSOCK(mode.st_mode)
                else "a device" if stat.S_ISCHR(mode.st_mode) or stat.S_ISBLK(mode.st_mode) else "not a regular file")
        raise error(f"{path}: is {kind}, not a regular file; save the {what} to a file and give that")
    return mode.st_size


def text_lines(path: str | Path, *, what: str = "file", error: type[PardynError] = InputError) -> Iterator[str]:
    """The lines of ``path`` one at a time (UTF-8, an initial byte-order mark removed), for files too large to
    hold whole as text: the same checks and messages as :func:`read_text` (which reports a decoding error)."""
    path = Path(path)
    try:
        check_regular_file(path, what=what, error=error)
        stream = path.open(encoding="utf-8-sig", newline="")
    except OSError as cause:
        raise error(f"{path}: cannot read the {what}: {cause.strerror or cause}") from cause
    with stream:
        try:
            yield from stream
        except UnicodeDecodeError:
            pass
        else:
            return
    read_text(path, what=what, error=error)  # raises, naming the byte, line and encoding
    raise error(f"{path}: the {what} is not UTF-8; save it as UTF-8")  # pragma: no cover - read_text raised


FAST_LOADER = getattr(yaml, "CSafeLoader", None)
"""libyaml's safe loader, when PyYAML was built with it (:func:`load_yaml`)."""


def load_yaml(path: str | Path, *, what: str = "YAML file", error: type[PardynError] = InputError) -> Any:
    """The parsed content of a YAML file (:func:`read_text`, ``yaml.safe_load``); a syntax error in one line.

    Parsed by libyaml (``yaml.CSafeLoader``, the same constructor as ``safe_load``: the same data) where PyYAML
    has it: a robot YAML in 1.3 ms instead of 25 ms, read twice by each node as it starts (issue 34). A file it
    refuses is parsed again in Python, whose messages name the problem more precisely.
    """
    text = read_text(path, what=what, error=error)
    if FAST_LOADER is not None:
        try:
            return yaml.load(text, Loader=FAST_LOADER)  # noqa: S506 - a safe loader (SafeConstructor)
        except (yaml.YAMLError, RecursionError, ValueError, OverflowError):
            pass  # the message below, from the Python parser
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as cause:
        mark = cause.problem_mark or cause.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = " ".join(str(cause.problem or cause.context or "syntax error").split())
        raise error(f"{path}: not valid YAML: {where}{problem}") from None
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as cause:
        raise error(f"{path}: not valid YAML: {shown(str(cause), 120)}") from None


def load_json(path: str | Path, *, what: str = "JSON file", error: type[PardynError] = InputError) -> Any:
    """The parsed content of a JSON file (:func:`read_text`); errors in one line naming line and column."""
    text = read_text(path, what=what, error=error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as cause:
        raise error(f"{path}: not valid JSON: line {cause.lineno}, column {cause.colno}: {cause.msg}") from None
    except (RecursionError, ValueError) as cause:
        raise error(f"{path}: not valid JSON: {shown(str(cause), 120)}") from None
