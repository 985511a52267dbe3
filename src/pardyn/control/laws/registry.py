"""What a control law of the registry is: the options it is built from, how it registers itself.

A law module of this package (one per law, found by :func:`pardyn.registry.import_modules`)
decorates its factory ``(robot, params, options) -> ControlLaw`` with :func:`register`; a law that
reads controller-node parameters of its own also gives ``options``, a function from the node's
parameter values to :class:`LawOptions` fields (the PFC's ``pfc_*``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pardyn.control import ControlLaw
from pardyn.control.gains import ctc_gains
from pardyn.errors import InputError
from pardyn.registry import Registry

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["REGISTRY", "LawEntry", "LawFactory", "LawOptions", "limits_or_none", "register"]


@dataclass(frozen=True)
class LawOptions:
    """What the laws of the registry are built from; each law reads its own fields (package table).

    Attributes:
        kp, kd: joint PD gains (N m/rad, N m s/rad), one for all actuators or one each.
        natural_frequency_hz, damping: CTC error dynamics ``Kp = w^2``, ``Kd = 2 xi w``,
            ``w = 2 pi f`` (:func:`pardyn.control.gains.ctc_gains`); the augmented PD's bandwidth.
        ctc_kp, ctc_kd: explicit CTC gains (1/s^2, 1/s), one for all coordinates or one each;
            both empty: from ``natural_frequency_hz`` and ``damping``.
        feedforward: augmented PD: add the inverse dynamics of the reference.
        period_s: control period (s).
        limits: per-actuator torque limits (N m, N); empty: the URDF ``<limit effort>``.
        pfc: keyword arguments of :class:`pardyn.control.pfc.PredictiveFunctionalControl`
            (``kp``, ``kv``, ``response_periods``, ``points``, ``degree``, ``error_window``).
    """

    kp: Sequence[float] = ()
    kd: Sequence[float] = ()
    natural_frequency_hz: float = 10.0
    damping: float = 1.0
    ctc_kp: Sequence[float] = ()
    ctc_kd: Sequence[float] = ()
    feedforward: bool = True
    period_s: float = 1e-3
    limits: Sequence[float] = ()
    pfc: Mapping[str, Any] = field(default_factory=dict)

    def ctc_gains(self) -> tuple[Any, Any]:
        """``(Kp, Kd)`` of the CTC laws: ``ctc_kp``, ``ctc_kd`` if given, else from the frequency and damping."""
        if bool(len(self.ctc_kp)) != bool(len(self.ctc_kd)):
            raise InputError(f"parameters ctc_kp and ctc_kd: give both or neither, got {list(self.ctc_kp)}, "
                             f"{list(self.ctc_kd)}")
        if len(self.ctc_kp):
            return self.ctc_kp, self.ctc_kd
        return ctc_gains(self.natural_frequency_hz, self.damping)


LawFactory = Callable[["Robot", "DynamicParameters | None", LawOptions], ControlLaw]
ParameterOptions = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class LawEntry:
    """A registered law: its factory, whether it uses the dynamic model, its own node parameters."""

    factory: LawFactory
    model: bool = True
    options: ParameterOptions | None = None


REGISTRY: Registry[LawEntry] = Registry("control law")


def register(name: str, *, model: bool = True,
             options: ParameterOptions | None = None) -> Callable[[LawFactory], LawFactory]:
    """Function decorator: make a law factory ``(robot, params, options) -> ControlLaw`` available as ``name``.

    ``model``: whether the law uses the robot's dynamic model (and so its ``params``).
    ``options``: the law's own controller-node parameters (values by name) -> :class:`LawOptions` fields.
    """

    def decorate(factory: LawFactory) -> LawFactory:
        REGISTRY.register(name)(LawEntry(factory, model, options))
        return factory

    return decorate


def limits_or_none(options: LawOptions) -> Sequence[float] | None:
    """The options' torque limits, ``None`` when empty (the law then takes the robot's)."""
    return list(options.limits) or None
