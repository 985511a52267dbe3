"""Control laws by name: the one registry the ``controller`` node, ``pardyn identify`` and every experiment build their laws from.

=================  ==============================================================================  ==================
name               law                                                                             reads (LawOptions)
=================  ==============================================================================  ==================
``pd``             :class:`pardyn.control.pd.JointPD`                                              ``kp``, ``kd``
``augmented_pd``   :class:`pardyn.control.feedforward.AugmentedPD` (Briot et al. 2015, Fig. 4)     ``natural_frequency_hz`` (bandwidth), ``damping``, ``feedforward``, ``period_s``
``ctc``            :class:`pardyn.control.computed_torque.ComputedTorque`, actuated space          ``ctc_kp``, ``ctc_kd`` or ``natural_frequency_hz``, ``damping``
``ctc_task``       the same in task space (Vivas et al. 2003, eqs. 35-37)                          as ``ctc``
``extended_ctc``   :class:`pardyn.control.computed_torque.ExtendedComputedTorque`                  as ``ctc``
                   (Zubizarreta et al. 2010, eq. 59: actuated + sensed joints)
``pfc``            :class:`pardyn.control.pfc.PredictiveFunctionalControl`                         ``pfc``, ``period_s``
                   (Vivas & Poignet 2003, section 3)
=================  ==============================================================================  ==================

Every law also takes the per-actuator torque ``limits`` (empty: the URDF's) and,
but the PD, the dynamic parameters of its model (None: the robot's nominal ones).

One module per law in this package registers its factory (:func:`.registry.register`);
:func:`law_from_parameters` builds the law the ``controller`` node's parameters name (the node and
``pardyn identify``'s closed-loop estimators use it). Adding a law is one module here (and its test);
a law with parameters of its own also adds them to the node's table (``pardyn.node_parameters``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import REGISTRY, LawOptions, register
from pardyn.errors import InputError
from pardyn.registry import import_modules

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["LAWS", "LawOptions", "law_from_parameters", "make_law", "needs_model", "register"]

import_modules(__name__, first=("pd", "augmented_pd", "ctc", "extended_ctc", "pfc"))  # the table's order

LAWS: tuple[str, ...] = REGISTRY.names
"""The registered law names."""


def needs_model(name: str) -> bool:
    """Whether the law ``name`` uses the robot's dynamic model (its parameters); the PD does not."""
    return _entry(name).model


def make_law(name: str, robot: Robot, params: DynamicParameters | None = None,
             options: LawOptions | None = None) -> ControlLaw:
    """The law ``name`` (:data:`LAWS`) for ``robot``, its model with ``params`` (None: nominal).

    Raises:
        InputError: an unknown name (the message lists the known ones), gains or limits of the wrong size.
    """
    return _entry(name).factory(robot, params, options or LawOptions())


def _entry(name: str):
    try:
        return REGISTRY.get(name)
    except InputError as error:
        raise InputError(f"parameter law: {error}") from error


def law_from_parameters(robot: Robot, p: Mapping[str, Any]) -> ControlLaw:
    """The law the ``controller`` node's parameters ``p`` name (every parameter of its table, by name).

    ``p``: :data:`pardyn.node_parameters.CONTROLLER`'s values; the node builds its law with it, and
    ``pardyn identify`` rebuilds the law the bags were recorded with for the closed-loop estimators.
    ``parameters_file`` (or ``dynamic_model: simplified``) gives a model-based law its parameters.
    """
    try:
        entry = _entry(p["law"])
        options = LawOptions(
            kp=p["kp"], kd=p["kd"], natural_frequency_hz=p["natural_frequency_hz"], damping=p["damping"],
            ctc_kp=p["ctc_kp"], ctc_kd=p["ctc_kd"], feedforward=p["feedforward"], period_s=1.0 / p["rate"],
            limits=p["effort_limits"], **(entry.options(p) if entry.options else {}),
        )
        params = None
        if p["parameters_file"] and entry.model:
            from pardyn.dynamics.parameters import read_parameter_file  # noqa: PLC0415

            params = read_parameter_file(p["parameters_file"], robot)
        elif p["dynamic_model"] == "simplified" and entry.model:
            from pardyn.dynamics.lumped import simplified_parameters  # noqa: PLC0415

            params = simplified_parameters(robot)
        return make_law(p["law"], robot, params, options)
    except InputError as error:
        raise InputError(f"controller parameters: {error}") from error
