"""Control laws by name: the one registry the ``controller`` node, ``pardyn identify`` and every experiment build their laws from.

=================  ==============================================================================  ==================
name               law                                                                             options
=================  ==============================================================================  ==================
``pd``             :class:`pardyn.control.pd.JointPD`                                              ``kp``, ``kd``
``augmented_pd``   :class:`pardyn.control.feedforward.AugmentedPD` (Briot et al. 2015, Fig. 4)     ``natural_frequency_hz`` (bandwidth), ``damping``, ``feedforward``
``ctc``            :class:`pardyn.control.computed_torque.ComputedTorque`, actuated space          ``ctc_kp``, ``ctc_kd`` or ``natural_frequency_hz``, ``damping``
``ctc_task``       the same in task space (Vivas et al. 2003, eqs. 35-37)                          as ``ctc``
``extended_ctc``   :class:`pardyn.control.computed_torque.ExtendedComputedTorque`                  as ``ctc``
                   (Zubizarreta et al. 2010, eq. 59: actuated + sensed joints)
``pfc``            :class:`pardyn.control.pfc.PredictiveFunctionalControl`                         ``pfc_kp``, ``pfc_kv``, ``pfc_response_periods``,
                   (Vivas & Poignet 2003, section 3)                                               ``pfc_points``, ``pfc_degree``, ``pfc_error_window``
=================  ==============================================================================  ==================

Every law also takes the control period and the per-actuator torque ``limits`` (empty: the
URDF's; :class:`.registry.LawCommon`) and, but the PD, the dynamic parameters of its model (None:
the robot's nominal ones).

One module per law in this package registers a plug-in class (:func:`.registry.register`: ``name``,
``Options``, ``build``); :func:`law_from_parameters` builds the law the ``controller`` node's
parameters name (the node and ``pardyn identify``'s closed-loop estimators use it). The node's
parameter table and ``pardyn bringup``'s flags take each law's options from its ``Options``
(:func:`law_option_specs`): adding a law, with settings of its own or not, is one module here (and its test).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import REGISTRY, Law, LawCommon, register
from pardyn.errors import InputError
from pardyn.registry import OptionSpec, import_modules, options_from, shared_options

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["LAWS", "LawCommon", "law_from_parameters", "law_option_specs", "law_options", "make_law", "needs_model",
           "register"]

import_modules(__name__, first=("pd", "augmented_pd", "ctc", "extended_ctc", "pfc"))  # the table's order

LAWS: tuple[str, ...] = REGISTRY.names
"""The registered law names."""


def needs_model(name: str) -> bool:
    """Whether the law ``name`` uses the robot's dynamic model (its parameters); the PD does not."""
    return _entry(name).model


def make_law(name: str, robot: Robot, params: DynamicParameters | None = None,
             options: Any = None, *, period_s: float = 1e-3, limits: Sequence[float] = ()) -> ControlLaw:
    """The law ``name`` (:data:`LAWS`) for ``robot``, its model with ``params`` (None: nominal).

    ``options``: the law's ``Options``, or values by parameter name (:func:`law_options`; a mapping
    may hold other laws' too), or None (the defaults). ``period_s``: the control period (s);
    ``limits``: per-actuator torque limits (N m, N), empty: the robot's.

    Raises:
        InputError: an unknown name (the message lists the known ones), gains or limits of the wrong size.
    """
    law = _entry(name)
    if options is None or isinstance(options, Mapping):
        options = law_options(name, options or {})
    elif not isinstance(options, law.Options):
        raise InputError(f"law {name}: options must be a {law.Options.__name__}, got {type(options).__name__}")
    return law.build(robot, params, options, LawCommon(period_s, tuple(limits)))


def law_options(name: str, values: Mapping[str, Any]) -> Any:
    """The ``Options`` of the law ``name`` from values by parameter name (others ignored, absent ones default)."""
    law = _entry(name)
    return options_from(law.Options, values, law.prefix)


def law_option_specs() -> list[tuple[OptionSpec, tuple[str, ...]]]:
    """Every registered law's options, each parameter once with the laws reading it: the ``controller`` node's law
    parameters (:mod:`pardyn.node_parameters`) and ``pardyn bringup``'s flags."""
    return shared_options((law.name, law.Options, law.prefix) for law in map(REGISTRY.get, REGISTRY))


def _entry(name: str) -> Law:
    try:
        return REGISTRY.get(name)
    except InputError as error:
        raise InputError(f"parameter law: {error}") from error


def law_from_parameters(robot: Robot, p: Mapping[str, Any]) -> ControlLaw:
    """The law the ``controller`` node's parameters ``p`` name (every parameter of its table, by name).

    ``p``: the values of :func:`pardyn.node_parameters.table` ``("controller")``; the node builds its
    law with it, and ``pardyn identify`` rebuilds the law the bags were recorded with for the
    closed-loop estimators. ``parameters_file`` (or ``dynamic_model: simplified``) gives a
    model-based law its parameters.
    """
    try:
        law = _entry(p["law"])
        params = None
        if p["parameters_file"] and law.model:
            from pardyn.dynamics.parameters import read_parameter_file  # noqa: PLC0415

            params = read_parameter_file(p["parameters_file"], robot)
        elif p["dynamic_model"] == "simplified" and law.model:
            from pardyn.dynamics.lumped import simplified_parameters  # noqa: PLC0415

            params = simplified_parameters(robot)
        return make_law(p["law"], robot, params, p, period_s=1.0 / p["rate"], limits=p["effort_limits"])
    except InputError as error:
        raise InputError(f"controller parameters: {error}") from error
