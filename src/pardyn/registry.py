"""Named implementations of one kind of thing: the registries of control laws and plants share this.

    LAWS = Registry("control law")

    @LAWS.register("pd")
    def _pd(...): ...

    LAWS.get("pd")          # the factory; InputError listing the known names for another name
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
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

    def unregister(self, name: str) -> None:
        """Withdraw ``name`` (a test's demonstration law, a plug-in unloaded); no error if it is absent."""
        self._items.pop(name, None)

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names."""
        return tuple(self._items)

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
