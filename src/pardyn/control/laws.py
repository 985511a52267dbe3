"""Control laws by name: the one registry the ``controller`` node and every experiment build their laws from.

=================  ==========================================================================  ==================
name               law                                                                         reads (LawOptions)
=================  ==========================================================================  ==================
``pd``             :class:`pardyn.control.pd.JointPD`                                          ``kp``, ``kd``
``augmented_pd``   :class:`pardyn.control.feedforward.AugmentedPD` (Briot et al. 2015, Fig. 4)  ``natural_frequency_hz`` (bandwidth), ``damping``, ``feedforward``, ``period_s``
``ctc``            :class:`pardyn.control.computed_torque.ComputedTorque`, actuated space       ``ctc_kp``, ``ctc_kd`` or ``natural_frequency_hz``, ``damping``
``ctc_task``       the same in task space (Vivas et al. 2003, eqs. 35-37)                      as ``ctc``
``extended_ctc``   :class:`pardyn.control.computed_torque.ExtendedComputedTorque`              as ``ctc``
                   (Zubizarreta et al. 2010, eq. 59: actuated + sensed joints)
``pfc``            :class:`pardyn.control.pfc.PredictiveFunctionalControl`                     ``pfc``, ``period_s``
                   (Vivas & Poignet 2003, section 3)
=================  ==========================================================================  ==================

Every law also takes the per-actuator torque ``limits`` (empty: the URDF's) and,
but the PD, the dynamic parameters of its model (None: the robot's nominal ones).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pardyn.control import ControlLaw, actuator_limits
from pardyn.control.gains import ctc_gains
from pardyn.errors import InputError
from pardyn.registry import Registry

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["LAWS", "LawOptions", "make_law", "needs_model", "register"]


@dataclass(frozen=True)
class LawOptions:
    """What the laws of the registry are built from; each law reads its own fields (module table).

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
_REGISTRY: Registry[LawFactory] = Registry("control law")
_MODEL_FREE: set[str] = set()


def register(name: str, *, model: bool = True) -> Callable[[LawFactory], LawFactory]:
    """Function decorator: make a law factory ``(robot, params, options) -> ControlLaw`` available as ``name``.

    ``model``: whether the law uses the robot's dynamic model (and so its ``params``).
    """
    if not model:
        _MODEL_FREE.add(name)
    return _REGISTRY.register(name)


def _limits(options: LawOptions) -> Sequence[float] | None:
    return list(options.limits) or None


@register("pd", model=False)
def _pd(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.pd import JointPD  # noqa: PLC0415

    if not len(options.kp) or not len(options.kd):
        raise InputError(f"parameters kp and kd: the PD law needs gains for {list(robot.actuated_names)}, "
                         f"got {list(options.kp)}, {list(options.kd)}")
    return JointPD(options.kp, options.kd, limits=actuator_limits(robot, options.limits),
                   joints=tuple(robot.actuated_names))


@register("augmented_pd")
def _augmented_pd(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.feedforward import AugmentedPD  # noqa: PLC0415

    return AugmentedPD(robot, params, bandwidth_hz=options.natural_frequency_hz, damping=options.damping,
                       feedforward=options.feedforward, period_s=options.period_s, limits=_limits(options))


@register("ctc")
def _ctc(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.computed_torque import ComputedTorque  # noqa: PLC0415

    kp, kd = options.ctc_gains()
    return ComputedTorque(robot, params, kp=kp, kd=kd, space="actuated", limits=_limits(options))


@register("ctc_task")
def _ctc_task(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.computed_torque import ComputedTorque  # noqa: PLC0415

    kp, kd = options.ctc_gains()
    return ComputedTorque(robot, params, kp=kp, kd=kd, space="task", limits=_limits(options))


@register("extended_ctc")
def _extended_ctc(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.computed_torque import ExtendedComputedTorque  # noqa: PLC0415

    kp, kd = options.ctc_gains()
    return ExtendedComputedTorque(robot, params, kp=kp, kd=kd, limits=_limits(options))


@register("pfc")
def _pfc(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.pfc import PredictiveFunctionalControl  # noqa: PLC0415

    return PredictiveFunctionalControl(robot, params, period_s=options.period_s, limits=_limits(options),
                                       **options.pfc)


LAWS: tuple[str, ...] = _REGISTRY.names
"""The registered law names."""


def needs_model(name: str) -> bool:
    """Whether the law ``name`` uses the robot's dynamic model (its parameters); the PD does not."""
    return name not in _MODEL_FREE


def make_law(name: str, robot: Robot, params: DynamicParameters | None = None,
             options: LawOptions | None = None) -> ControlLaw:
    """The law ``name`` (:data:`LAWS`) for ``robot``, its model with ``params`` (None: nominal).

    Raises:
        InputError: an unknown name (the message lists the known ones), gains or limits of the wrong size.
    """
    try:
        factory = _REGISTRY.get(name)
    except InputError as error:
        raise InputError(f"parameter law: {error}") from error
    return factory(robot, params, options or LawOptions())
