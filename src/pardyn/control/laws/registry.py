"""What a control law of the registry is: a plug-in (:class:`pardyn.registry.Plugin`) with its own options.

A law module of this package (one per law, found by :func:`pardyn.registry.import_modules`)
decorates a class with :func:`register`: ``name``, ``model`` (whether it uses the dynamic model),
``Options`` (a frozen dataclass of :func:`pardyn.registry.option` fields: its settings), ``prefix``
(of its ROS parameter names: the PFC's ``pfc_``) and ``build(robot, params, options, common)``.
The ``controller`` node's parameter table and ``config`` checks take the law's options from
``Options`` (:func:`pardyn.node_parameters.option_parameters`): a law with a setting of its own
is one file. The option classes several laws share are here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pardyn.control import ControlLaw
from pardyn.control.gains import ctc_gains
from pardyn.errors import InputError
from pardyn.registry import Registry, option

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["REGISTRY", "CtcOptions", "ErrorDynamics", "Law", "LawCommon", "NoOptions", "PDGains",
           "limits_or_none", "register"]


@dataclass(frozen=True)
class LawCommon:
    """What every law is built with beside its own options (the controller's, not the law's).

    Attributes:
        period_s: control period (s).
        limits: per-actuator torque limits (N m, N); empty: the robot's (URDF ``<limit effort>``).
    """

    period_s: float = 1e-3
    limits: Sequence[float] = ()


class Law(Protocol):
    """A control law plug-in (module docstring)."""

    name: str
    model: bool
    prefix: str
    Options: type

    def build(self, robot: Robot, params: DynamicParameters | None, options: Any, common: LawCommon) -> ControlLaw:
        """The law for ``robot``, its model with ``params`` (None: nominal)."""


REGISTRY: Registry[Law] = Registry("control law")


def register(cls: type) -> type:
    """Class decorator: register the law ``cls`` (``model`` defaults to True, ``prefix`` to "")."""
    for attribute, default in (("model", True), ("prefix", "")):
        if not hasattr(cls, attribute):
            setattr(cls, attribute, default)
    return REGISTRY.plugin(cls)


@dataclass(frozen=True)
class NoOptions:
    """A law without settings of its own."""


@dataclass(frozen=True)
class PDGains:
    """Joint PD gains, one for all actuators or one each."""

    kp: tuple[float, ...] = option((), "pd: proportional gains (N m/rad), one per actuator or one for all",
                                   unit="N m/rad")
    kd: tuple[float, ...] = option((), "pd: derivative gains (N m s/rad), one per actuator or one for all",
                                   unit="N m s/rad")


@dataclass(frozen=True)
class ErrorDynamics:
    """The CTC error dynamics ``Kp = w^2``, ``Kd = 2 xi w``, ``w = 2 pi f``; the augmented PD's bandwidth."""

    natural_frequency_hz: float = option(10.0, "CTC error dynamics natural frequency / augmented PD bandwidth (Hz)",
                                         unit="Hz", low=1e-6, high=1e5)
    damping: float = option(1.0, "damping ratio of the CTC error dynamics / augmented PD", low=1e-6, high=100.0)


@dataclass(frozen=True)
class CtcOptions(ErrorDynamics):
    """Computed-torque gains: explicit ``ctc_kp``, ``ctc_kd`` or from the error dynamics."""

    ctc_kp: tuple[float, ...] = option((), "CTC gains Kp (1/s^2), one per coordinate or one for all; "
                                       "empty: (2 pi natural_frequency_hz)^2", unit="1/s^2")
    ctc_kd: tuple[float, ...] = option((), "CTC gains Kd (1/s); empty: 2 damping (2 pi natural_frequency_hz)",
                                       unit="1/s")

    def ctc_gains(self) -> tuple[Any, Any]:
        """``(Kp, Kd)``: ``ctc_kp``, ``ctc_kd`` if given, else from the frequency and damping."""
        if bool(len(self.ctc_kp)) != bool(len(self.ctc_kd)):
            raise InputError(f"parameters ctc_kp and ctc_kd: give both or neither, got {list(self.ctc_kp)}, "
                             f"{list(self.ctc_kd)}")
        if len(self.ctc_kp):
            return self.ctc_kp, self.ctc_kd
        return ctc_gains(self.natural_frequency_hz, self.damping)


def limits_or_none(common: LawCommon) -> Sequence[float] | None:
    """The torque limits, ``None`` when empty (the law then takes the robot's)."""
    return list(common.limits) or None
