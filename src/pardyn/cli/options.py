"""Range-checked numeric options of the command line: ``type=number(...)`` for argparse.

Every numeric option of ``pardyn`` states its range once, where it is declared::

    parser.add_argument("--model-rate", type=number(0.0, 1e6, low_open=True, unit="Hz"), default=100.0)

A value outside it (``0``, ``-1``, ``inf``, ``nan``, ``1e-300`` below a
positive minimum, a 300-digit number) is refused by argparse in one line,
``pardyn identify: argument --model-rate: expected a number in (0, 1e+06] Hz, got '0'``, exit 2.
:func:`numbers` reads the comma-separated lists (``--task 0.02,-0.01,0.1``)
with one bound on the magnitude of every value. :func:`add_option_arguments` declares the flags of
plug-ins' options (:func:`pardyn.registry.option`) from their ``Options``; :func:`option_values`
reads them back by parameter name.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pardyn.errors import InputError
from pardyn.registry import OptionSpec, shown_default
from pardyn.textio import shown

__all__ = ["add_option_arguments", "number", "numbers", "option_values"]


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def number(low: float = -math.inf, high: float = math.inf, *, low_open: bool = False, high_open: bool = False,
           integer: bool = False, unit: str = "") -> Callable[[str], float]:
    """An argparse ``type``: the text as a float (or int) in ``[low, high]`` (ends open on request), finite."""
    interval = _interval(low, high, low_open, high_open)
    what = f"{'an integer' if integer else 'a number'} in {interval}{' ' + unit if unit else ''}"

    def parse(text: str) -> float:
        try:
            value = int(text, 10) if integer else float(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {what}, got {shown(text)}") from None
        inside = (
            (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
        )
        if not (inside and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"expected {what}, got {shown(text)}")
        return value

    parse.__name__ = "number"  # argparse names the type in its messages
    return parse


def numbers(text: str, option: str, *, count: int | None = None, bound: float = 1e6) -> list[float]:
    """Comma-separated numbers, each finite and of magnitude at most ``bound``; ``count`` of them if given.

    Raises:
        InputError: ``--task: expected comma-separated numbers ..., got '...'`` (value shortened).
    """
    try:
        values = [float(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise InputError(f"{option}: expected comma-separated numbers, got {shown(text)}") from None
    bad = [v for v in values if not (math.isfinite(v) and abs(v) <= bound)]
    if bad:
        raise InputError(f"{option}: {shown(bad[0])} is not a finite number of magnitude <= {bound:g} "
                         f"(m, rad, N m); got {shown(text)}")
    if count is not None and len(values) != count:
        raise InputError(f"{option}: expected {count} values, got {len(values)} ({shown(text)})")
    return values


def _option_type(spec: OptionSpec) -> Callable[[str], Any]:
    if spec.kind in ("int", "float"):
        low = -math.inf if spec.low is None else spec.low
        high = math.inf if spec.high is None else spec.high
        item = number(low, high, low_open=spec.low_open, integer=spec.kind == "int", unit=spec.unit)
    else:
        item = str
    if not spec.array:
        return item

    def parse(text: str) -> tuple:
        return tuple(item(part.strip()) for part in text.split(",") if part.strip())

    parse.__name__ = f"comma-separated {spec.kind}"
    return parse


def add_option_arguments(parser: argparse.ArgumentParser,
                         options: Iterable[tuple[OptionSpec, Sequence[str]]]) -> None:
    """One flag per plug-in option (:func:`pardyn.registry.shared_options`): ``--<flag>``, its type and range
    from the option; absent, the plug-in's default applies (:func:`option_values` leaves it out)."""
    for spec, users in options:
        if spec.default is not None:
            help_text = f"{'/'.join(users)}: {spec.description} (default {shown_default(spec)})"
        else:  # the description says the default (each plug-in's: shared_options(own_defaults=True))
            help_text = spec.description if len(users) > 1 else f"{users[0]}: {spec.description}"
        if spec.kind == "bool" and not spec.array:
            parser.add_argument(f"--{spec.flag}", dest=spec.parameter, action=argparse.BooleanOptionalAction,
                                default=None, help=help_text.replace("%", "%%"))
        else:  # an array's items are checked against the choices by options_from
            choices = None if spec.array else spec.choices or None
            parser.add_argument(f"--{spec.flag}", dest=spec.parameter, type=_option_type(spec), default=None,
                                choices=choices, metavar=spec.field.upper() if choices is None else None,
                                help=help_text.replace("%", "%%"))


def option_values(args: argparse.Namespace, options: Iterable[tuple[OptionSpec, Sequence[str]]]) -> dict[str, Any]:
    """The options given on the command line, by parameter name (those absent left out)."""
    return {spec.parameter: getattr(args, spec.parameter) for spec, _ in options
            if getattr(args, spec.parameter, None) is not None}
