"""A law with a parameter of its own is one file (test/control/gravity_pd.py): its option reaches the
``controller`` node's parameter table, ``pardyn bringup``'s flags, the check of its parameter files, ``pardyn identify``'s reading
of them and the law the node builds, without any other file changing.

Its torques are checked against the gradient of the potential energy (central differences), not
against the gravity routine the law calls.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pardyn.cli import main
from pardyn.control import JointReference
from pardyn.control.laws import law_from_parameters
from pardyn.control.laws.registry import REGISTRY
from pardyn.errors import DescriptionError
from pardyn.node_parameters import check_parameters_file, markdown, table

from .gravity_pd import GravityCompensatedPD, register_law


@pytest.fixture
def gravity_pd():
    name = register_law()
    yield name
    REGISTRY.unregister(name)


def test_the_option_is_a_controller_parameter(gravity_pd):
    spec = table("controller")["gravity_scale"]
    assert (spec.type, spec.default, spec.low, spec.high) == ("double", 1.0, 0.0, 2.0)
    assert "gravity_pd" in table("controller")["law"].choices
    assert "| `gravity_scale` | double | `1.0` | [0, 2] |" in markdown(["controller"])


def test_the_option_is_a_flag_of_pardyn_bringup(gravity_pd, capsys):
    assert main(["bringup", "sim", "--law", gravity_pd, "--gravity-scale", "0.5", "--dry-run"]) == 0
    controller = next(line for line in capsys.readouterr().out.splitlines() if "pardyn controller " in line)
    assert controller.endswith("-p gravity_scale:=0.5 -p law:=gravity_pd")
    with pytest.raises(SystemExit):  # argparse: outside [0, 2]
        main(["bringup", "sim", "--gravity-scale", "3", "--dry-run"])


def test_the_option_is_checked_in_parameter_files(gravity_pd, tmp_path):
    good = tmp_path / "gravity.yaml"
    good.write_text("controller:\n  ros__parameters:\n    law: gravity_pd\n    gravity_scale: 0.5\n")
    check_parameters_file(good)
    bad = tmp_path / "bad.yaml"
    bad.write_text("controller:\n  ros__parameters:\n    gravity_scale: 3.0\n")
    with pytest.raises(DescriptionError, match=r"bad.yaml: controller: gravity_scale: 3.0 outside \[0, 2\]"):
        check_parameters_file(bad)


def test_the_option_is_gone_with_its_law(tmp_path):
    assert "gravity_scale" not in table("controller")
    path = tmp_path / "gravity.yaml"
    path.write_text("controller:\n  ros__parameters:\n    gravity_scale: 0.5\n")
    with pytest.raises(DescriptionError, match="gravity_scale: unknown parameter of node controller"):
        check_parameters_file(path)


def test_the_node_and_identify_build_the_law_with_its_option(gravity_pd, load, tmp_path):
    from pardyn.cli.identify import _controller_law  # the reading of --controller files

    robot = load("ur5e")
    path = tmp_path / "controller.yaml"
    path.write_text("controller:\n  ros__parameters:\n    law: gravity_pd\n    kp: [0.0]\n    kd: [0.0]\n"
                    "    gravity_scale: 0.5\n    effort_limits: [1000.0]\n")
    law, rate = _controller_law(robot, [path])
    assert isinstance(law, GravityCompensatedPD) and law.scale == 0.5 and rate == 1000.0
    values = {name: spec.default for name, spec in table("controller").items()}
    assert law_from_parameters(robot, {**values, "law": gravity_pd, "kp": [1.0], "kd": [1.0]}).scale == 1.0

    q = np.array([0.3, -1.1, 0.8, -0.4, 1.2, 0.1])
    model, data = robot.model, robot.model.createData()
    h = 1e-6
    potential = [(pin.computePotentialEnergy(model, data, q + h * e) - pin.computePotentialEnergy(model, data, q - h * e))
                 / (2 * h) for e in np.eye(6)]  # G = dV/dq
    tau = law.torques(q, np.zeros(6), JointReference.hold(q))
    np.testing.assert_allclose(tau, 0.5 * np.array(potential), rtol=1e-6, atol=1e-6)
