"""Plants by name: the one registry of simulated robots (the ``sim`` node's ``plant``, ``bench/loop.py``).

* ``mujoco``: :class:`pardyn.plants.mujoco_plant.MujocoPlant`, an independent engine
  (loops closed by stiff equality constraints);
* ``pinocchio``: :class:`pardyn.plants.pinocchio_plant.PinocchioPlant`, pardyn's own
  constrained forward dynamics (RK4 + projection);
* ``flexible``: :class:`pardyn.plants.flexible_joint.FlexibleJointPlant`, a serial robot
  with flexible joints and the rotor model of its YAML.

Engines are imported when a plant of theirs is made, not with this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pardyn.errors import InputError
from pardyn.registry import Registry

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.plants import Plant
    from pardyn.plants.payload import Payload
    from pardyn.robot import Robot

__all__ = ["PLANTS", "make_plant", "register"]

_REGISTRY: Registry[Callable[..., Plant]] = Registry("plant")
register = _REGISTRY.register
"""Function decorator: make a plant factory ``(robot, params, *, payload, options, coulomb_width)``
available as ``name`` (``params``: the simulated dynamic parameters; ``options``: the plant's keyword
options, e.g. ``timestep``)."""


@register("mujoco")
def _mujoco(robot: Robot, params: DynamicParameters | None, *, payload: Payload | None, options: dict[str, Any],
            **_: Any) -> Plant:
    from pardyn.plants.mujoco_plant import MujocoPlant  # noqa: PLC0415 - mujoco only when asked for

    return MujocoPlant(robot, params, payload=payload, **options)


@register("pinocchio")
def _pinocchio(robot: Robot, params: DynamicParameters | None, *, payload: Payload | None, options: dict[str, Any],
               coulomb_width: float, **_: Any) -> Plant:
    from pardyn.plants.pinocchio_plant import PinocchioPlant  # noqa: PLC0415

    return PinocchioPlant(robot, params, payload=payload, coulomb_width=coulomb_width, **options)


@register("flexible")
def _flexible(robot: Robot, params: DynamicParameters | None, *, payload: Payload | None, options: dict[str, Any],
              **_: Any) -> Plant:
    from pardyn.dynamics.rotor import load_rotor_model  # noqa: PLC0415
    from pardyn.plants.flexible_joint import FlexibleJointPlant  # noqa: PLC0415

    if payload is not None:
        raise InputError("parameter payload_mass: the flexible-joint plant carries no payload")
    return FlexibleJointPlant(robot, load_rotor_model(robot), params=params, **options)


PLANTS: tuple[str, ...] = _REGISTRY.names
"""The registered plant names."""


def make_plant(robot: Robot, kind: str, params: DynamicParameters | None = None, *, payload: Payload | None = None,
               timestep: float = 0.0, coulomb_width: float = 0.0, integrator: str = "") -> Plant:
    """A plant of ``kind`` (:data:`PLANTS`) for ``robot`` simulating the dynamic parameters ``params``.

    ``params``: ``robot.nominal_parameters`` by default (the pinocchio plant adds the
    drive offsets ``tau_off``; MuJoCo builds counterweights as bodies, see
    :mod:`pardyn.plants.mujoco_plant`); ``timestep`` 0 keeps the plant's default;
    ``coulomb_width`` is the pinocchio plant's friction smoothing (rad/s);
    ``integrator`` the MuJoCo plant's integrator (``RK4``, ``implicitfast``, ...; "" keeps its default).

    Raises:
        InputError: an unknown ``kind`` (the message lists the known ones), an integrator for a plant
            that has no choice of integrator.
    """
    try:
        factory = _REGISTRY.get(kind)
    except InputError as error:
        raise InputError(f"parameter plant: {error}") from error
    options: dict[str, Any] = {} if timestep <= 0.0 else {"timestep": timestep}
    if integrator:
        if kind != "mujoco":
            raise InputError(f"parameter integrator: only the mujoco plant has a choice of integrator (plant {kind})")
        options["integrator"] = integrator
    return factory(robot, params, payload=payload, options=options, coulomb_width=coulomb_width)
