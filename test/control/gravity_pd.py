"""A control law with a parameter of its own, as a user adds one: this file is the whole law.

``gravity_pd``: a joint PD plus ``gravity_scale`` times the gravity torques of the robot's
description, ``tau = Kp (q_ref - q) + Kd (qdot_ref - qdot) + s G(q)`` (serial robots: every joint
actuated). ``gravity_scale`` is its own option; ``kp``, ``kd`` are the PD's. The module registers
nothing at import: :func:`register_law` does (test/control/test_plugin_law.py), as the module of
``pardyn.control.laws`` would with ``@register`` on the class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from pardyn.control import ControlLaw, actuator_limits
from pardyn.control.laws.registry import PDGains, register
from pardyn.errors import InputError
from pardyn.registry import option


class GravityCompensatedPD(ControlLaw):
    """``Kp e + Kd e_dot + s G(q)`` (n_a,) on a serial robot's model."""

    def __init__(self, model: pin.Model, kp: np.ndarray, kd: np.ndarray, scale: float, limits: np.ndarray) -> None:
        self.model, self.data = model, model.createData()
        self.kp, self.kd, self.scale, self.limits = kp, kd, scale, limits

    def unsaturated(self, position, velocity, reference):
        gravity = pin.computeGeneralizedGravity(self.model, self.data, position)
        return (self.kp * (reference.position - position) + self.kd * (reference.velocity - velocity)
                + self.scale * gravity)


@dataclass(frozen=True)
class GravityPDOptions(PDGains):
    gravity_scale: float = option(1.0, "gravity_pd: fraction of the model's gravity torques added to the PD's",
                                  low=0.0, high=2.0)


class GravityPD:
    name = "gravity_pd"
    model = True
    Options = GravityPDOptions

    def build(self, robot, params, options: GravityPDOptions, common) -> ControlLaw:
        n = len(robot.actuated_names)
        if robot.model.nq != n:
            raise InputError(f"law gravity_pd: serial robots only ({robot.name} has {robot.model.nq} joints, {n} actuated)")
        gains = [np.broadcast_to(np.asarray(g, dtype=float), (n,)) for g in (options.kp, options.kd)]
        return GravityCompensatedPD(robot.model, *gains, options.gravity_scale, actuator_limits(robot, common.limits))


def register_law() -> str:
    register(GravityPD)
    return GravityPD.name
