"""Named implementations of one kind of thing: every registry of pardyn is one of these.

    LAWS = Registry("control law")

    @LAWS.register("pd")
    def _pd(...): ...

    LAWS.get("pd")          # the factory; InputError listing the known names for another name
    "pd" in LAWS, list(LAWS), LAWS.names

The registries: control laws (:mod:`pardyn.control.laws`), estimators
(:mod:`pardyn.identification.estimators`), plants (:mod:`pardyn.plants.registry`), closed-form
kinematics (:mod:`pardyn.kinematics.analytic`), description formats
(:mod:`pardyn.description.formats`), export formats (:mod:`pardyn.export`), nodes
(:mod:`pardyn.nodes.registry`) and experiments (:mod:`pardyn.cli.experiment`). Where each
implementation is a module of a package, :func:`import_modules` finds them: adding one is one file.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from pardyn.errors import InputError

__all__ = ["Registry", "import_modules"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Implementations of one kind (``what``, e.g. ``"control law"``) by name, in registration order."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: make the decorated object available as ``name``."""

        def decorate(item: T) -> T:
            self._items[name] = item
            return item

        return decorate

    def add(self, name: str, item: T) -> None:
        """Register ``item`` (a value rather than a decorated definition) as ``name``."""
        self._items[name] = item

    def unregister(self, name: str) -> None:
        """Withdraw ``name`` (a test's demonstration law, a plug-in unloaded); no error if it is absent."""
        self._items.pop(name, None)

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names."""
        return tuple(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, name: str) -> T:
        """The implementation registered as ``name``.

        Raises:
            InputError: ``unknown <what> <name>, expected one of [...]``.
        """
        if name not in self._items:
            raise InputError(f"unknown {self.what} {name!r}, expected one of {list(self._items)}")
        return self._items[name]


def import_modules(package: str, first: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Import every module of ``package`` (``first`` in that order, then the others by name): each registers itself.

    This is what makes adding an implementation one file: the package's ``__init__`` calls
    ``import_modules(__name__)`` and a new module in the folder is found. Modules whose name starts
    with ``_`` are skipped. Returns the module names imported, in order.
    """
    found = sorted(info.name for info in pkgutil.iter_modules(importlib.import_module(package).__path__)
                   if not info.name.startswith("_"))
    order = [name for name in first if name in found] + [name for name in found if name not in first]
    for name in order:
        importlib.import_module(f"{package}.{name}")
    return tuple(order)
