"""Named implementations of one kind of thing: every registry of pardyn is one of these.

    LAWS = Registry("control law")

    @LAWS.register("pd")
    def _pd(...): ...

    LAWS.get("pd")          # the factory; InputError listing the known names for another name
    "pd" in LAWS, list(LAWS), LAWS.names

The registries: control laws (:mod:`pardyn.control.laws`), estimators
(:mod:`pardyn.identification.estimators`), plants (:mod:`pardyn.plants.registry`), closed-form
kinematics (:mod:`pardyn.kinematics.analytic`), description formats
(:mod:`pardyn.description.formats`), export formats (:mod:`pardyn.export`), recording formats
(:mod:`pardyn.recordings`), nodes (:mod:`pardyn.nodes.registry`) and experiments
(:mod:`pardyn.experiments.registry`). Where each implementation is a module of a package, :func:`import_modules`
finds them: adding one is one file.

The plug-in contract (laws, estimators, plants, export and description formats, experiments; recording formats the
same but for ``Options``: they share :class:`pardyn.recordings.protocol.ReadOptions`): a class with a ``name``, an ``Options``
frozen dataclass whose fields are declared with :func:`option` (type from the annotation; default, description,
unit and valid range in the field's metadata) and the kind's verb (``build(...)``; ``load`` for a description
format, ``read`` for a recording format, ``run`` for an experiment), registered with :meth:`Registry.plugin`.
From ``Options`` follow the node parameters (:func:`pardyn.node_parameters.option_parameters`) and the
command-line flags (:func:`pardyn.cli.options.add_option_arguments`, the options of every plug-in of a kind
through :func:`shared_options`): a plug-in with a setting of its own is one file.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pardyn.errors import InputError

__all__ = ["OptionSpec", "Plugin", "Registry", "import_modules", "option", "option_specs", "options_from",
           "refuse_unread", "shared_options", "shown_default"]

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

    def plugin(self, cls: type) -> type:
        """Class decorator: register an instance of the plug-in class ``cls`` under ``cls.name`` (:class:`Plugin`)."""
        self._items[cls.name] = cls()
        return cls

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


class Plugin(Protocol):
    """What every plug-in of a registry is: a ``name``, its ``Options`` (a frozen dataclass of :func:`option`
    fields, the settings a user gives it) and ``build(...)`` (the arguments are the kind's: a law's
    ``(robot, params, options, common)``, an estimator's ``(system, options, context)``; a description format
    loads, a recording format reads and an experiment runs instead)."""

    name: str
    Options: type

    def build(self, *args: Any, **kwargs: Any) -> Any: ...


KINDS = {bool: "bool", int: "int", float: "float", str: "str"}
"""Python type of an option (or of the items of a ``tuple[T, ...]`` option) -> its name in :class:`OptionSpec`."""


def option(default: Any, description: str, *, unit: str = "", low: float | None = None, high: float | None = None,
           low_open: bool = False, choices: tuple[str, ...] = (), parameter: str | None = None,
           flag: str | None = None) -> Any:
    """A field of a plug-in's ``Options``: its default, what it is (with its unit where the text gives it) and its range.

    ``low_open``: ``low`` itself is refused (a positive quantity: ``low=0.0, low_open=True``).
    ``parameter``: the ROS parameter name (default: the field's name, with the plug-in's prefix);
    ``flag``: the command-line flag without ``--`` (default: the parameter name with dashes).
    A list default is stored as a tuple (the dataclass stays frozen and hashable).
    """
    if isinstance(default, list):
        default = tuple(default)
    metadata = {"description": description, "unit": unit, "low": low, "high": high, "low_open": low_open,
                "choices": tuple(choices),
                "parameter": parameter, "flag": flag}
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True)
class OptionSpec:
    """One option of a plug-in, as its ``Options`` field states it.

    Attributes:
        field: the ``Options`` field name.
        kind: ``bool``, ``int``, ``float``, ``str``; ``array`` True for a ``tuple[kind, ...]``.
        default, description, unit, low, high, choices: as given to :func:`option`.
        parameter: the ROS parameter name; flag: the command-line flag (without ``--``).
    """

    field: str
    kind: str
    array: bool
    default: Any
    description: str
    unit: str = ""
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    parameter: str = ""
    flag: str = ""
    low_open: bool = False


def _kind(annotation: Any, where: str) -> tuple[str, bool]:
    if typing.get_origin(annotation) is tuple:
        args = typing.get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis and args[0] in KINDS:
            return KINDS[args[0]], True
    elif annotation in KINDS:
        return KINDS[annotation], False
    raise TypeError(f"{where}: an option is a bool, int, float, str or tuple[T, ...] of one, got {annotation!r}")


def option_specs(options: type, prefix: str = "") -> tuple[OptionSpec, ...]:
    """The options of the ``Options`` dataclass ``options`` (parameter names ``prefix + field`` unless stated)."""
    hints = typing.get_type_hints(options)
    specs = []
    for f in dataclasses.fields(options):
        kind, array = _kind(hints[f.name], f"{options.__qualname__}.{f.name}")
        meta = f.metadata
        parameter = meta.get("parameter") or prefix + f.name
        specs.append(OptionSpec(f.name, kind, array, f.default, meta.get("description", ""), meta.get("unit", ""),
                                meta.get("low"), meta.get("high"), meta.get("choices", ()), parameter,
                                meta.get("flag") or parameter.replace("_", "-"), meta.get("low_open", False)))
    return tuple(specs)


def options_from(options: type, values: Mapping[str, Any], prefix: str = "") -> Any:
    """An ``Options`` instance from ``values`` by parameter name (others ignored; absent ones: the defaults).

    Arrays become tuples, integers given for a float option floats.

    Raises:
        InputError: ``parameter <name>: ...`` for a value outside its range or choices.
    """
    given = {}
    for spec in option_specs(options, prefix):
        if spec.parameter in values and values[spec.parameter] is not None:
            value = values[spec.parameter]
            if spec.array:
                value = tuple(float(v) if spec.kind == "float" else v for v in value)
            elif spec.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            _check(spec, value)
            given[spec.field] = value
    return options(**given)


def _check(spec: OptionSpec, value: Any) -> None:
    for item in value if spec.array else (value,):
        if spec.choices and item not in spec.choices:
            raise InputError(f"parameter {spec.parameter}: {item!r} is not one of {list(spec.choices)}")
        low = spec.low if spec.low is not None else -float("inf")
        high = spec.high if spec.high is not None else float("inf")
        bounded = spec.low is not None or spec.high is not None
        if bounded and not ((low < item if spec.low_open else low <= item) and item <= high):
            raise InputError(f"parameter {spec.parameter}: {item!r} outside {'(' if spec.low_open else '['}{low:g}, "
                             f"{high:g}]")


def shared_options(plugins: Iterable[tuple[str, type, str]], *,
                   own_defaults: bool = False) -> list[tuple[OptionSpec, tuple[str, ...]]]:
    """The options of several plug-ins ``(name, Options, prefix)``, each parameter once, with the plug-ins using it.

    A parameter several plug-ins share must be the same option in each (type, default, range): it is one
    node parameter or flag. Each plug-in's own options stay together: a new one goes right after the one
    before it in its ``Options`` (at the end if it is the first).

    ``own_defaults`` (command-line flags only, absent meaning each plug-in's default: the experiments): plug-ins
    may give one parameter their own default and description; such an option comes back with the default None and
    a description naming each plug-in's (``a: what (default 30); b: ...``).

    Raises:
        TypeError: two plug-ins declare one parameter differently.
    """
    order: list[str] = []
    found: dict[str, OptionSpec] = {}
    users: dict[str, list[str]] = {}
    each: dict[str, list[OptionSpec]] = {}
    for name, options, prefix in plugins:
        previous = None
        for spec in option_specs(options, prefix):
            key = spec.parameter
            if key in found:
                loose = {"default": spec.default, "description": spec.description} if own_defaults else {}
                if dataclasses.replace(found[key], field=spec.field, flag=spec.flag, **loose) != spec:
                    raise TypeError(f"option {key}: plug-in {name} declares it unlike {users[key]}")
            else:
                found[key] = spec
                order.insert(order.index(previous) + 1 if previous else len(order), key)
            users.setdefault(key, []).append(name)
            each.setdefault(key, []).append(spec)
            previous = key
    for key, specs in each.items():
        if len({(s.default, s.description) for s in specs}) > 1:
            found[key] = dataclasses.replace(found[key], default=None, description="; ".join(
                f"{user}: {s.description}" + ("" if s.default is None else f" (default {shown_default(s)})")
                for user, s in zip(users[key], specs)))
    return [(found[key], tuple(users[key])) for key in order]


def shown_default(spec: OptionSpec) -> str:
    """An option's default as a user writes it (``a,b`` for an array, ``none`` for an empty one)."""
    default = ",".join(map(str, spec.default)) if spec.array else str(spec.default)
    return default if default != "" else "none"


def refuse_unread(name: str, given: Iterable[str], options: Iterable[tuple[OptionSpec, Sequence[str]]],
                  what: str) -> None:
    """Refuse the options ``given`` (parameter names) that the plug-in ``name`` does not read.

    ``options``: every plug-in's (:func:`shared_options`); ``what``: the kind, for the message.

    Raises:
        InputError: ``--<flag>: the <name> <what> has no such option (the <users> <what> reads it)``.
    """
    options = list(options)
    for parameter in given:
        readers = [(spec, users) for spec, users in options if spec.parameter == parameter]
        if not (readers and name in readers[0][1]):
            flag = readers[0][0].flag if readers else parameter.replace("_", "-")
            raise InputError(f"--{flag}: the {name} {what} has no such option"
                             + (f" (the {'/'.join(readers[0][1])} {what} reads it)" if readers else ""))
