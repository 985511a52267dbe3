"""Plants by name: the one registry of simulated robots (the ``sim`` node's ``plant``, ``bench/loop.py``).

* ``mujoco``: :class:`pardyn.plants.mujoco_plant.MujocoPlant`, an independent engine
  (loops closed by stiff equality constraints);
* ``pinocchio``: :class:`pardyn.plants.pinocchio_plant.PinocchioPlant`, pardyn's own
  constrained forward dynamics (RK4 + projection);
* ``flexible``: :class:`pardyn.plants.flexible_joint.FlexibleJointPlant`, a serial robot
  with flexible joints and the rotor model of its YAML.

A plant is a plug-in (:class:`pardyn.registry.Plugin`): a class with ``name``, ``Options`` (its
settings, :func:`pardyn.registry.option` fields named as the ``sim`` node's parameters, which are
generated from them) and ``build(robot, params, options, payload)``, registered with
:func:`register`. Engines are imported when a plant of theirs is made, not with this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pardyn.errors import InputError
from pardyn.plants.integrators import MUJOCO_INTEGRATORS
from pardyn.registry import Registry, option, options_from, shared_options

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.plants import Plant
    from pardyn.plants.payload import Payload
    from pardyn.robot import Robot

__all__ = ["PLANTS", "REGISTRY", "make_plant", "plant_options", "register"]


class PlantPlugin(Protocol):
    """A plant of the registry (module docstring)."""

    name: str
    Options: type

    def build(self, robot: Robot, params: DynamicParameters | None, options: Any, payload: Payload | None) -> Plant:
        """The plant of ``robot`` simulating ``params`` (None: nominal), carrying ``payload``."""


REGISTRY: Registry[PlantPlugin] = Registry("plant")
register = REGISTRY.plugin
"""Class decorator: register a plant plug-in under its ``name``."""


def _timestep() -> Any:
    """The integration step option every plant has (the ``sim`` node's ``plant_timestep``)."""
    return option(0.0, "plant integration step (s); 0: the plant's default", unit="s", low=0.0, high=1.0,
                  parameter="plant_timestep")


def _steps(options: Any) -> dict[str, float]:
    """``{"timestep": ...}`` for the plant's constructor, empty for 0 (its default)."""
    return {"timestep": options.timestep} if options.timestep > 0.0 else {}


@dataclass(frozen=True)
class Timestep:
    """A plant whose only option is its integration step."""

    timestep: float = _timestep()


@dataclass(frozen=True)
class MujocoOptions(Timestep):
    integrator: str = option("", "MuJoCo plant's integrator; empty: its default (RK4, 0.1 ms steps); "
                             "implicitfast: ~1/3 of RK4's cost per step, first order (RK4 at a coarser plant_timestep is "
                             "cheaper and closer: bench/plants.py)",
                             choices=("",) + MUJOCO_INTEGRATORS)


@register
class Mujoco:
    name = "mujoco"
    Options = MujocoOptions

    def build(self, robot: Robot, params: DynamicParameters | None, options: MujocoOptions,
              payload: Payload | None) -> Plant:
        from pardyn.plants.mujoco_plant import MujocoPlant  # noqa: PLC0415 - mujoco only when asked for

        integrator = {"integrator": options.integrator} if options.integrator else {}
        return MujocoPlant(robot, params, payload=payload, **_steps(options), **integrator)


@dataclass(frozen=True)
class PinocchioOptions:
    coulomb_width: float = option(0.01, "Coulomb friction smoothing of the pinocchio plant (rad/s)", unit="rad/s",
                                  low=0.0, high=1e3)
    timestep: float = _timestep()


@register
class Pinocchio:
    name = "pinocchio"
    Options = PinocchioOptions

    def build(self, robot: Robot, params: DynamicParameters | None, options: PinocchioOptions,
              payload: Payload | None) -> Plant:
        from pardyn.plants.pinocchio_plant import PinocchioPlant  # noqa: PLC0415

        return PinocchioPlant(robot, params, payload=payload, coulomb_width=options.coulomb_width, **_steps(options))


@register
class Flexible:
    name = "flexible"
    Options = Timestep

    def build(self, robot: Robot, params: DynamicParameters | None, options: Timestep,
              payload: Payload | None) -> Plant:
        from pardyn.dynamics.rotor import load_rotor_model  # noqa: PLC0415
        from pardyn.plants.flexible_joint import FlexibleJointPlant  # noqa: PLC0415

        if payload is not None:
            raise InputError("parameter payload_mass: the flexible-joint plant carries no payload")
        return FlexibleJointPlant(robot, load_rotor_model(robot.mechanism), params=params, **_steps(options))


PLANTS: tuple[str, ...] = REGISTRY.names
"""The registered plant names."""


def plant_options() -> list:
    """Every registered plant's options, each parameter once with the plants reading it
    (:func:`pardyn.registry.shared_options`): the ``sim`` node's plant parameters."""
    return shared_options((name, REGISTRY.get(name).Options, "") for name in REGISTRY)


def make_plant(robot: Robot, kind: str, params: DynamicParameters | None = None, options: Any = None, *,
               payload: Payload | None = None) -> Plant:
    """A plant of ``kind`` (:data:`PLANTS`) for ``robot`` simulating the dynamic parameters ``params``.

    ``params``: ``robot.nominal_parameters`` by default (the pinocchio plant adds the
    drive offsets ``tau_off``; MuJoCo builds counterweights as bodies, see
    :mod:`pardyn.plants.mujoco_plant`). ``options``: the plant's ``Options``, or values by
    parameter name (the ``sim`` node's: ``plant_timestep`` 0 keeps the plant's default,
    ``coulomb_width`` the pinocchio plant's friction smoothing (rad/s), ``integrator`` the MuJoCo
    plant's), or None (the defaults).

    Raises:
        InputError: an unknown ``kind`` (the message lists the known ones), an option of other plants
            set away from its default (``integrator`` for the pinocchio plant).
    """
    try:
        plugin = REGISTRY.get(kind)
    except InputError as error:
        raise InputError(f"parameter plant: {error}") from error
    if options is None or isinstance(options, Mapping):
        values = options or {}
        own = {spec.parameter for spec, users in plant_options() if kind in users}
        for spec, users in plant_options():
            if spec.parameter not in own and values.get(spec.parameter, spec.default) != spec.default:
                raise InputError(f"parameter {spec.parameter}: only the {'/'.join(users)} plant reads it (plant {kind})")
        options = options_from(plugin.Options, values)
    return plugin.build(robot, params, options, payload)
