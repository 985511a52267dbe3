"""The ``pardyn`` command line: one module per command, each with ``add_parser`` and ``run``.

Adding a command: write ``pardyn/cli/<name>.py`` with

* ``HELP``: one line for ``pardyn --help``;
* ``add_arguments(parser)``: its options;
* ``run(args) -> int``: the exit status,

and list its module name in ``COMMANDS``. Errors of pardyn (``PardynError``)
and bad files are reported on stderr as ``pardyn <command>: <message>`` with
exit status 2, never as a traceback. Warnings are one line each, each shown once
(``pardyn: warning: <message>``); a closed output pipe (``pardyn kinematics ... | head``)
ends the command quietly with status 0.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
import warnings
from collections.abc import Sequence

from pardyn.errors import PardynError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS = ("robots", "kinematics", "dynamics", "identify", "bag", "bringup", "demo", "experiment", "animate", "export",
            "fleet", "view")


NEGATIVE_LIST = re.compile(r"^-\.?\d[\d.eE+\-,\s]*$")
"""A value such as ``-2.37,0.77`` (a list starting with a negative number), not an option."""


def _accept_negative_lists(parser: argparse.ArgumentParser) -> None:
    # argparse takes only plain negative numbers ("-2.37") as values; no pardyn option looks like a number
    parser._negative_number_matcher = NEGATIVE_LIST  # noqa: SLF001 - the documented-by-source hook


class _Parser(argparse.ArgumentParser):
    """argparse with its refusals in one line (``pardyn identify: argument --model-rate: ...``), exit 2."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        self.exit(2, f"{self.prog}: {one_line(message)} (--help lists the options)\n")

    def _get_values(self, action, arg_strings):  # argparse's hook: `--task=--` would give the option a list
        if action.option_strings and action.nargs is None and list(arg_strings) == ["--"]:
            self.error(f"argument {'/'.join(action.option_strings)}: expected a value, got '--'")
        return super()._get_values(action, arg_strings)


def one_line(message: str, limit: int = 2000) -> str:
    """A message as one line of at most ``limit`` characters (whitespace runs collapsed)."""
    text = " ".join(str(message).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``pardyn`` parser; ``command``: only that command's module is imported and its options declared (the
    one :func:`main` runs: ``pardyn experiment`` imports every experiment, and with it the plants, to declare its
    flags; ``pardyn kinematics`` and ``identify`` pinocchio and SciPy, 0.8-1.5 s before ``pardyn bringup`` started
    its first node)."""
    parser = _Parser(
        prog="pardyn",
        description="Dynamics, identification and control of parallel robots and cobots.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        if command not in (None, name):  # not run: its module (and what it imports: pinocchio, SciPy) not loaded
            subparsers.add_parser(name.replace("_", "-"))
            continue
        module = importlib.import_module(f"pardyn.cli.{name}")
        sub = subparsers.add_parser(name.replace("_", "-"), help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        _accept_negative_lists(sub)
        sub.set_defaults(handler=module.run)
    return parser


def _one_line_warning(message, category, filename, lineno, line=None) -> str:  # noqa: ARG001 - warnings' hook
    return f"pardyn: warning: {message}\n"


def quiet_warnings() -> None:
    """Every warning once (whatever its source line), as one line without the Python source it came from.

    CPython's ``"once"`` remembers a warning in the registry of the module it is attributed to, so the same text
    raised from two call paths (an MJCF read for the description, then for the tree) would print twice: the
    texts already shown are kept here as well.
    """
    warnings.formatwarning = _one_line_warning
    warnings.simplefilter("once")
    shown_texts: set[str] = set()
    show = getattr(warnings.showwarning, "pardyn_wrapped", warnings.showwarning)  # one command: one set

    def show_once(message, category, filename, lineno, file=None, line=None) -> None:
        if str(message) not in shown_texts:
            shown_texts.add(str(message))
            show(message, category, filename, lineno, file, line)

    show_once.pardyn_wrapped = show
    warnings.showwarning = show_once
    for category in (DeprecationWarning, PendingDeprecationWarning):  # the libraries' business, as by default
        warnings.filterwarnings("ignore", category=category)


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(given[0] if given and given[0] in COMMANDS else None)
    if not given:  # bare `pardyn`: what it can do, as `--help` says it
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    quiet_warnings()
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:  # the reader of stdout left (| head): nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's flush at exit would raise again
        return 0
    except (PardynError, OSError) as error:
        print(f"pardyn {args.command}: {one_line(error)}", file=sys.stderr)
        return 2


def console_main() -> int:
    """The ``pardyn`` console script: :func:`main`, then SIGINT/SIGTERM ignored while the interpreter finalizes.

    Python gives a signal with a Python handler back to the default action when
    it finalizes (terminate): a Ctrl-C that comes late, after ``pardyn bringup``
    stopped cleanly, would otherwise kill the exiting process (:mod:`pardyn.nodes.stopping`).
    """
    try:
        return main()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console_main())
