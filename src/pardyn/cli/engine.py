"""The engine options of every command that runs many tasks (:mod:`pardyn.distributed`)."""

from __future__ import annotations

import argparse

from pardyn.cli.options import number
from pardyn.distributed import Engine

__all__ = ["add_engine_arguments", "engine_from_arguments"]


def add_engine_arguments(parser: argparse.ArgumentParser, *, workers_help: str) -> None:
    """``--workers N`` (local worker processes) and ``--scheduler ADDRESS`` (a running Dask scheduler)."""
    parser.add_argument("--workers", type=number(1, 1024, integer=True), help=workers_help)
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run the tasks on a running Dask scheduler, e.g. tcp://host:8786 (its workers need "
                             "pardyn and the data paths); see the README's 'On a cluster'")


def engine_from_arguments(args: argparse.Namespace) -> Engine:
    """The engine the options ask for (serial for ``--workers 1``)."""
    return Engine(args.workers, scheduler=args.scheduler)
