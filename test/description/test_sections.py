"""The typed sections of the robot YAML: parsed once, every unknown key an error naming file and key path."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

import pardyn
from pardyn.description import load_description
from pardyn.errors import DescriptionError
from pardyn.resources import robots_directory
from pardyn.excitation.bounds import excitation_settings

def _write(tmp_path: Path, name: str, edit) -> Path:
    data = yaml.safe_load((robots_directory() / f"{name}.yaml").read_text())
    data["urdf"] = str(robots_directory().parents[1] / "urdf" / f"{name}.urdf")
    edit(data)
    path = tmp_path / f"{name}_edited.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _error(tmp_path: Path, name: str, edit) -> str:
    path = _write(tmp_path, name, edit)
    with pytest.raises(DescriptionError) as info:
        load_description(path)  # the YAML alone: before any URDF check
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    return message


@pytest.mark.parametrize(
    ("name", "where", "path"),
    [
        ("dualv", lambda d: d, "dynamcs"),  # a misspelt section at the top level
        ("dualv", lambda d: d["dynamics"], "dynamics.gravty"),
        ("dualv", lambda d: d["dynamics"]["bodies"][0], "dynamics.bodies[0].masss"),
        ("dualv", lambda d: d["dynamics"]["bodies"][0]["inertia_com"], "dynamics.bodies[0].inertia_com.zx"),
        ("dualv", lambda d: d["dynamics"]["drives"][0], "dynamics.drives[0].viscous"),
        ("ur5e", lambda d: d["rotors"], "rotors.reference_temperature"),
        ("ur5e", lambda d: d["rotors"]["drives"][1], "rotors.drives[1].stifness"),
        ("dualv", lambda d: d["home"], "home.task_"),
        ("dualv", lambda d: d["closures"][2], "closures[2].lenght"),
        ("dualv", lambda d: d["working_mode"][3], "working_mode[3].axes"),
        ("h4", lambda d: d["limits"], "limits.torque"),
    ],
)
def test_unknown_keys_name_file_and_key_path(tmp_path, name, where, path):
    key = path.rsplit(".", 1)[-1]
    message = _error(tmp_path, name, lambda d: where(d).__setitem__(key, 1.0))
    assert f": {path}: unknown key; allowed " in message, message


def test_a_typo_under_dynamics_fails_when_the_robot_loads(tmp_path):
    """Not later, when a dynamics command first reads the section (issue 20, item 9)."""
    def edit(d):
        d["dynamics"]["drives"][0]["fss"] = d["dynamics"]["drives"][0].pop("fs")

    path = _write(tmp_path, "dualv", edit)
    with pytest.raises(DescriptionError, match=r"dynamics.drives\[0\].fss: unknown key; allowed under "
                                               r"dynamics.drives\[0\]: \['fs', 'fv', 'ia', 'joints', 'offset'\]"):
        pardyn.load_robot(path)


@pytest.mark.parametrize(
    ("name", "edit", "expected"),
    [
        ("ur5e", lambda d: d["rotors"]["drives"][1]["joints"].append("elbow_joint"),
         r"rotors.drives\[1\].joints\[3\]: joint 'elbow_joint' listed twice"),
        ("ur5e", lambda d: d["rotors"]["drives"].pop(), r"rotors.drives: no entry for the actuated joints"),
        ("dualv", lambda d: d["dynamics"]["drives"][0]["joints"].append("platform_phi"),
         r"dynamics.drives\[0\].joints\[4\]: 'platform_phi' is a virtual task coordinate"),
        ("dualv", lambda d: d["dynamics"]["bodies"][1]["links"].append("leg1_link1"),
         r"dynamics.bodies: links listed twice: \['leg1_link1'\]"),
        ("h4", lambda d: d["limits"]["effort"].__setitem__("nacelle_x", 5.0),
         r"limits.effort.nacelle_x: 'nacelle_x' is not an actuated joint"),
        ("h4", lambda d: d["limits"]["effort"].__setitem__("motor2", -15.0),
         r"limits.effort.motor2: must be positive"),
        ("wu3r", lambda d: d.__setitem__("counterweights", ["platform_x"]),
         r"counterweights: \['platform_x'\] are task coordinates"),
        ("five_bar", lambda d: d.__setitem__("analytic", 3), r"analytic: expected a non-empty string"),
        ("h4", lambda d: d["limits"]["effort"].pop("motor3"),
         r"limits.effort: no limit for the actuated joints \['motor3'\]"),
        ("dualv", lambda d: d.__setitem__("excitation", {"amplitude": {"x": 0.1}, "max_velocity": {},
                                                          "max_acceleration": {}, "base_frequency_hz": 1.0}),
         r"excitation.amplitude: expected one value per task coordinate \['x', 'y', 'phi'\]"),
    ],
)
def test_section_content_errors(tmp_path, name, edit, expected):
    assert re.search(expected, _error(tmp_path, name, edit))


def test_counterweight_must_be_a_prismatic_joint_of_the_base(tmp_path):
    path = _write(tmp_path, "wu3r", lambda d: d.__setitem__("counterweights", ["link1_joint"]))
    with pytest.raises(DescriptionError, match="counterweights: 'link1_joint' must be a prismatic joint of the base"):
        pardyn.load_robot(path)


def test_shipped_robots_have_typed_sections(load):
    dualv = load("dualv").description
    assert dualv.analytic == "dualv" and dualv.counterweights == () and dualv.rotors is None
    assert [body.links for body in dualv.dynamics.bodies][0] == ("leg1_link1", "leg2_link1", "leg3_link1", "leg4_link1")
    assert dualv.dynamics.drives[0].ia == 0.02 and dualv.excitation.amplitude == (0.08, 0.06, 0.3)
    assert load("wu3r").description.counterweights == ("slider1_joint", "slider2_joint")
    rotors = load("ur5e").description.rotors
    assert rotors.joints == load("ur5e").actuated_names and rotors.values["stiffness"][3] == 3000.0
    h4 = load("h4")
    assert h4.description.limits.effort == {f"motor{i}": 15.0 for i in range(1, 5)}
    # the URDF generated from it carries the same limits (tools/generate_h4_urdf.py)
    np.testing.assert_array_equal(h4.model.effortLimit[h4.actuated_indices], 15.0)
    hexapod = load("hexapod")
    assert hexapod.description.limits.velocity == {f"leg{j}_length": 0.2 for j in range(1, 7)}  # m/s
    np.testing.assert_array_equal(hexapod.model.velocityLimit[hexapod.actuated_indices], 0.2)
    np.testing.assert_array_equal(hexapod.model.effortLimit[hexapod.actuated_indices], 500.0)  # N


def test_excitation_section_is_the_robots_default_excitation(tmp_path):
    """The YAML's section, in task order, comes before the shipped defaults (here all but the x amplitude)."""
    values = {"amplitude": {"x": 0.07, "y": 0.06, "phi": 0.3}, "max_velocity": {"x": 6.7, "y": 6.7, "phi": 26.7},
              "max_acceleration": {"phi": 160.0, "x": 40.0, "y": 40.0}, "base_frequency_hz": 1.0}
    robot = pardyn.load_robot(_write(tmp_path, "dualv", lambda d: d.__setitem__("excitation", values)))
    excitation = robot.description.excitation
    assert excitation.design_options() == {"amplitude": (0.07, 0.06, 0.3), "max_velocity": (6.7, 6.7, 26.7),
                                           "max_acceleration": (40.0, 40.0, 160.0), "base_frequency_hz": 1.0}
    shipped = pardyn.load_robot("dualv").description.excitation
    assert excitation == replace(shipped, amplitude=(0.07, 0.06, 0.3))
    assert excitation_settings(robot) == excitation and excitation_settings("dualv") == shipped
    assert excitation_settings(robot, base_frequency_hz=0.5).amplitude == (0.07, 0.06, 0.3)
