"""Adding a control law is one module of ``pardyn.control.laws`` (and its test): shown with a damping law.

The module's whole content is the decorated class below; the ``controller`` node's parameters then
build it by name (:func:`pardyn.control.laws.law_from_parameters`, what the node and ``pardyn
identify`` call), and its torques are the hand-derived ``-kd qdot``, saturated.
"""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.control import ControlLaw, JointReference, actuator_limits
from pardyn.control.laws import law_from_parameters, needs_model, register
from pardyn.control.laws.registry import REGISTRY, PDGains
from pardyn.node_parameters import table


class Damping(ControlLaw):
    """``tau = -kd qdot`` (n_a,): no reference, no model."""

    def __init__(self, kd: np.ndarray, limits: np.ndarray) -> None:
        self.kd, self.limits = kd, limits

    def unsaturated(self, position, velocity, reference):
        return -self.kd * velocity


@pytest.fixture
def damping_law():
    @register
    class DampingLaw:  # this class is the whole new module
        name = "damping_demo"
        model = False
        Options = PDGains  # the PD's kd

        def build(self, robot, params, options, common):
            return Damping(np.broadcast_to(np.asarray(options.kd, dtype=float), (len(robot.actuated_names),)),
                           actuator_limits(robot, common.limits))

    yield "damping_demo"
    REGISTRY.unregister("damping_demo")


def test_a_registered_law_is_built_from_the_controller_parameters(damping_law, load):
    robot = load("five_bar")
    values = {name: spec.default for name, spec in table("controller").items()}
    law = law_from_parameters(robot, {**values, "law": damping_law, "kd": [2.0], "effort_limits": [1.0]})
    assert isinstance(law, Damping) and not needs_model(damping_law)
    tau = law.torques(np.zeros(2), np.array([0.25, -3.0]), JointReference.hold(np.zeros(2)))
    np.testing.assert_array_equal(tau, [-0.5, 1.0])  # -2 * 0.25; -2 * -3 = 6 saturated at 1 N m
    assert law.describe() == "Damping"
