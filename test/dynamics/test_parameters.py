"""Standard dynamic parameters: pinocchio's ordering, body frames, YAML nominal values, result files."""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics.parameters import (
    PINOCCHIO_FROM_STANDARD,
    body_to_joint_matrix,
    inertia_from_standard,
    read_parameter_file,
    standard_from_inertia,
    write_parameter_file,
)
from pardyn.errors import DescriptionError, InputError
from pardyn.resources import robots_directory

ROBOTS = ("five_bar", "dualv", "rrr3", "wu3r", "wu3n")


def _hand_built():
    """A body with every inertia component nonzero: mass, com, inertia about the com."""
    mass = 2.5
    com = np.array([0.1, -0.2, 0.3])
    inertia_com = np.array([[0.04, 0.003, -0.002], [0.003, 0.05, 0.001], [-0.002, 0.001, 0.06]])
    return mass, com, inertia_com


def test_standard_order_against_a_hand_built_inertia():
    mass, com, inertia_com = _hand_built()
    # Eq. (3)-(4) by hand: inertia at the frame origin (parallel axes), first moments m * com.
    origin = inertia_com + mass * (com @ com * np.eye(3) - np.outer(com, com))
    expected = [origin[0, 0], origin[0, 1], origin[0, 2], origin[1, 1], origin[1, 2], origin[2, 2],
                mass * com[0], mass * com[1], mass * com[2], mass]
    inertia = pin.Inertia(mass, com, inertia_com)
    np.testing.assert_allclose(standard_from_inertia(inertia), expected, rtol=1e-14)
    # pinocchio's own order [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
    pinocchio = [mass, *(mass * com), origin[0, 0], origin[0, 1], origin[1, 1], origin[0, 2], origin[1, 2], origin[2, 2]]
    np.testing.assert_allclose(inertia.toDynamicParameters(), pinocchio, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(expected)[PINOCCHIO_FROM_STANDARD], pinocchio, rtol=1e-14)
    back = inertia_from_standard(np.asarray(expected))
    assert back.mass == pytest.approx(mass)
    np.testing.assert_allclose(back.lever, com, rtol=1e-13)
    np.testing.assert_allclose(back.inertia, inertia_com, rtol=1e-12, atol=1e-15)


def test_massless_body_with_first_moment_is_refused():
    with pytest.raises(InputError, match="zero mass"):
        inertia_from_standard(np.array([0.1, 0, 0, 0.1, 0, 0.1, 0.2, 0, 0, 0.0]), where="test body")
    rotor = inertia_from_standard(np.array([0, 0, 0, 0, 0, 0.3, 0, 0, 0, 0.0]))
    assert rotor.mass == 0.0 and rotor.inertia[2, 2] == pytest.approx(0.3)


def test_body_transform_matches_pinocchio_se3_action():
    rng = np.random.default_rng(3)
    mass, com, inertia_com = _hand_built()
    inertia = pin.Inertia(mass, com, inertia_com)
    for _ in range(5):
        placement = pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3))
        expected = placement.act(inertia).toDynamicParameters()
        np.testing.assert_allclose(body_to_joint_matrix(placement) @ standard_from_inertia(inertia), expected,
                                   rtol=1e-12, atol=1e-14)


def _pinned(mass, com_x, izz_com):
    """(m, mx, zz at the link origin) of a link with its com on the link's x axis."""
    return mass, mass * com_x, izz_com + mass * com_x**2


def _check_body(values, link, mass, com_x, izz_com):
    m, mx, zz = _pinned(mass, com_x, izz_com)
    assert values[f"m_{link}"] == pytest.approx(m, rel=1e-14)
    assert values[f"mx_{link}"] == pytest.approx(mx, rel=1e-14, abs=1e-16)
    assert values[f"my_{link}"] == 0.0 and values[f"mz_{link}"] == 0.0
    assert values[f"zz_{link}"] == pytest.approx(zz, rel=1e-14)


def test_rrr3_nominal_values(load):
    robot = load("rrr3")
    params = robot.nominal_parameters
    values = params.as_dict()
    for i in (1, 2, 3):
        _check_body(values, f"leg{i}_link1", 0.4239, 0.25, 0.0088)
        _check_body(values, f"leg{i}_link2", 0.3391, 0.2, 0.0045)
        _check_body(values, f"leg{i}_sensor", 0.0656, 0.0, 3.687e-6)
        for p in ("ia", "fv", "fs", "offset"):
            assert values[f"{p}_leg{i}_joint1"] == 0.0
    _check_body(values, "platform", 1.3576, 0.0, 0.0085)
    _check_body(values, "payload", 0.5, 0.0, 8.3333e-4)
    np.testing.assert_array_equal(params.gravity, [0.0, -9.81, 0.0])
    # the sensor is fixed to the distal link, the payload to the platform
    assert robot.model.names[params.bodies[[b.name for b in params.bodies].index("leg2_sensor")].joint] == "leg2_joint2"
    assert robot.model.names[params.bodies[[b.name for b in params.bodies].index("payload")].joint] == "platform_phi"


def test_dualv_nominal_values(load):
    robot = load("dualv")
    params = robot.nominal_parameters
    values = params.as_dict()
    for i in (1, 2, 3, 4):
        _check_body(values, f"leg{i}_link1", 1.2, 0.12, 0.012)
        _check_body(values, f"leg{i}_link2", 0.6, 0.14, 0.004)
        assert values[f"ia_leg{i}_joint1"] == 0.02
        assert values[f"fv_leg{i}_joint1"] == 0.05
        assert values[f"fs_leg{i}_joint1"] == 0.3
        assert values[f"offset_leg{i}_joint1"] == 0.0
        assert f"fv_leg{i}_joint2" not in values and f"fs_leg{i}_joint3" not in values  # frictionless
    _check_body(values, "platform", 1.92, 0.0, 0.0206)
    assert values["m_payload"] == 0.0
    gravity = params.gravity
    assert gravity[0] == gravity[1] == 0.0 and abs(gravity[2]) == 9.81  # normal to the plane
    assert params.names[-4:] == ("ia_leg4_joint1", "fv_leg4_joint1", "fs_leg4_joint1", "offset_leg4_joint1")
    assert params.size == 10 * 10 + 4 * 4


def test_five_bar_nominal_values(load):
    values = load("five_bar").nominal_parameters.as_dict()
    for i in (1, 2):
        _check_body(values, f"leg{i}_link1", 0.3, 0.1, 1e-3)
        _check_body(values, f"leg{i}_link2", 0.2, 0.125, 1e-3)
    _check_body(values, "platform", 0.1, 0.0, 1e-6)


@pytest.mark.parametrize("name", ROBOTS)
def test_apply_reproduces_pinocchio_lumping_of_the_urdf(name):
    robot = pardyn.load_robot(name, check_urdf=False)
    params = robot.nominal_parameters
    urdf = pin.buildModelFromUrdf(str(robot.description.urdf))  # pinocchio lumps fixed links itself
    model = params.apply(robot.model.copy())
    for j in range(1, model.njoints):
        np.testing.assert_allclose(model.inertias[j].toDynamicParameters(), urdf.inertias[j].toDynamicParameters(),
                                   rtol=1e-12, atol=1e-15, err_msg=model.names[j])
    np.testing.assert_array_equal(model.gravity.linear, params.gravity)
    for drive in params.drives:
        assert model.armature[drive.index] == drive.ia
        assert model.damping[drive.index] == drive.fv == urdf.damping[drive.index]
        assert model.friction[drive.index] == drive.fs == urdf.friction[drive.index]


def test_apply_writes_the_given_model_and_leaves_the_robot_alone():
    robot = pardyn.load_robot("rrr3")
    params = robot.nominal_parameters
    model = params.apply(robot.model.copy())
    np.testing.assert_array_equal(model.gravity.linear, [0.0, -9.81, 0.0])
    joint = model.getJointId("leg1_joint2")
    assert model.inertias[joint].mass == pytest.approx(0.3391 + 0.0656)  # distal link + sensor
    heavier = params.with_values({"offset_leg1_joint1": 0.2, "ia_leg1_joint1": 0.01, "m_payload": 1.0})
    heavier.apply(model)
    assert model.armature[robot.actuated_indices[0]] == 0.01
    assert model.inertias[model.getJointId("platform_phi")].mass == pytest.approx(1.3576 + 1.0)
    # the robot's own tree carries no parameters of either: pinocchio's default gravity, no rotors
    assert robot.model.gravity.linear[2] == pytest.approx(-9.81) and not robot.model.armature.any()
    assert robot.model.inertias[model.getJointId("platform_phi")].mass == pytest.approx(1.3576 + 0.5)  # the URDF's payload
    assert heavier.offsets["leg1_joint1"] == 0.2
    offsets = heavier.offset_vector()
    assert offsets[robot.actuated_indices[0]] == 0.2 and np.count_nonzero(offsets) == 1


def test_regrouped_parameters_are_not_applied(load):
    params = load("dualv").nominal_parameters
    regrouped = params.with_values({"m_leg1_link2": 0.0})  # mx_leg1_link2 stays nonzero
    assert params.representable() and not regrouped.representable()
    with pytest.raises(InputError, match="leg1_joint2"):
        regrouped.apply(load("dualv").model.copy())


def test_with_vector_round_trip_and_errors(load):
    params = load("rrr3").nominal_parameters
    vector = np.arange(params.size, dtype=float)
    assert np.array_equal(params.with_vector(vector).vector(), vector)
    with pytest.raises(InputError, match="expected 122"):
        params.with_vector(vector[:-1])
    with pytest.raises(InputError, match="unknown parameters"):
        params.with_values({"zz_leg9_link1": 1.0})


# ------------------------------------------------------------------ YAML
def _yaml(tmp_path, name, edit):
    text = (robots_directory() / f"{name}.yaml").read_text()
    path = tmp_path / f"{name}.yaml"
    path.write_text(edit(text))
    return path


def test_yaml_and_urdf_must_agree(tmp_path):
    path = _yaml(tmp_path, "dualv", lambda t: t.replace("mass: 1.92", "mass: 2.0"))
    with pytest.raises(DescriptionError, match="platform_phi") as error:
        pardyn.load_robot(path)  # checked once, when the robot loads
    assert str(path) in str(error.value)
    assert pardyn.load_robot(path, check_urdf=False).nominal_parameters.as_dict()["m_platform"] == 2.0


def test_yaml_errors_name_the_key(tmp_path):
    path = _yaml(tmp_path, "dualv", lambda t: t.replace("links: [platform]", "links: [plateform]"))
    with pytest.raises(DescriptionError, match=r"dynamics.bodies\[2\].links\[0\]: unknown link 'plateform'"):
        pardyn.load_robot(path)
    path = _yaml(tmp_path, "dualv", lambda t: t.replace("fv: 0.05", "fv: fast"))
    with pytest.raises(DescriptionError, match=r"dynamics.drives\[0\].fv"):
        pardyn.load_robot(path)


def test_without_dynamics_section_the_urdf_values_are_used(tmp_path, load):
    robot = pardyn.load_robot(_yaml(tmp_path, "rrr3", lambda t: t[:t.index("\n# Nominal dynamic parameters")] + "\n"))
    fallback = robot.nominal_parameters
    yaml_values = load("rrr3").nominal_parameters
    np.testing.assert_allclose(fallback.joint_parameters(), yaml_values.joint_parameters(), rtol=1e-12, atol=1e-15)
    assert "m_leg1_link2" in fallback.names and "m_leg1_sensor" not in fallback.names  # lumped per joint
    assert [d.joint for d in fallback.drives] == list(robot.actuated_names)


# ------------------------------------------------------------ result files
def test_hand_written_result_file(tmp_path, load):
    robot = load("dualv")
    nominal = robot.nominal_parameters
    path = tmp_path / "result.json"
    path.write_text(json.dumps({
        "format": "pardyn-dynamic-parameters", "version": 1, "robot": "dualv",
        "standard_parameters": {"m_platform": 2.5, "fv_leg2_joint1": 0.1, "zz_payload": 0.016},
        "statistics": {"relative_error": 0.11},
    }))
    params = read_parameter_file(path, robot)
    values = params.as_dict()
    assert values["m_platform"] == 2.5 and values["fv_leg2_joint1"] == 0.1 and values["zz_payload"] == 0.016
    assert values["zz_leg1_link1"] == nominal.as_dict()["zz_leg1_link1"]  # unlisted: nominal

    path.write_text(json.dumps({"robot": "dualv", "unlisted": "zero",
                                "standard_parameters": {"zz_leg1_link1": 0.0445, "m_platform": 1.92}}))
    values = read_parameter_file(path, robot).as_dict()
    assert values["zz_leg1_link1"] == 0.0445 and values["m_platform"] == 1.92
    assert sum(abs(v) for v in values.values()) == pytest.approx(0.0445 + 1.92)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"robot": "rrr3", "standard_parameters": {}}, "robot: the file is for 'rrr3'"),
        ({"robot": "dualv", "standard_parameters": {"m_platfrom": 1.0}}, "unknown parameters"),
        ({"robot": "dualv", "standard_parameters": {"m_platform": "heavy"}}, "m_platform: expected a finite number"),
        ({"robot": "dualv", "standard_parameters": {"m_platform": 1.0}, "unlisted": "guess"}, "unlisted"),
        ({"robot": "dualv"}, "standard_parameters"),
        ({"format": "other", "robot": "dualv", "standard_parameters": {}}, "format"),
    ],
)
def test_bad_result_files(tmp_path, load, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(InputError, match=message) as error:
        read_parameter_file(path, load("dualv"))
    assert str(path) in str(error.value)


def test_result_file_round_trip(tmp_path, load):
    robot = load("rrr3")
    params = robot.nominal_parameters.with_values({"m_payload": 0.7, "offset_leg3_joint1": -0.05})
    path = tmp_path / "out.json"
    write_parameter_file(path, params, method="test")
    assert json.loads(path.read_text())["method"] == "test"
    np.testing.assert_array_equal(read_parameter_file(path, robot).vector(), params.vector())


def test_passive_joint_friction_and_task_coordinates_in_drives(tmp_path):
    extra = "    - joints: [leg1_joint2]\n      fv: 0.01\n"
    anchor = "      offset: 0.0                            # N m\n"
    path = _yaml(tmp_path, "dualv", lambda t: t.replace(anchor, anchor + extra, 1))
    params = pardyn.load_robot(path).nominal_parameters  # the URDF states no damping there: the YAML's, once
    assert params.names[-4:] == ("ia_leg1_joint2", "fv_leg1_joint2", "fs_leg1_joint2", "offset_leg1_joint2")
    assert params.as_dict()["fv_leg1_joint2"] == 0.01
    path = _yaml(tmp_path, "dualv", lambda t: t.replace(anchor, anchor + extra.replace("leg1_joint2", "platform_x"), 1))
    with pytest.raises(DescriptionError, match="virtual task coordinate"):
        pardyn.load_robot(path)
