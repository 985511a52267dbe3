"""The exported SDF read back by libsdformat (test/export/sdf_check.cpp) against pinocchio at home.

References are independent of the exporter: pinocchio's model built here from the robot's
URDF (poses, joint axes from its Jacobian, inertias, limits, friction), the robot's
closure Jacobian (its rank), and a velocity-level count of the degrees of freedom of the
joint graph libsdformat resolved.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.export import ExportError, build_mechanism, export
from pardyn.resources import list_robots

ROBOTS = list_robots()
POSE_TOL = 1e-9


def _se3(pose: dict) -> pin.SE3:
    w, x, y, z = pose["quaternion"]
    return pin.SE3(pin.Quaternion(w, x, y, z).normalized().matrix(), np.array(pose["position"]))


def _model_of(libsdformat, paths, role="model") -> dict:
    result = libsdformat[paths[role]]
    assert result["errors"] == [], result["errors"]
    assert result["sdf_version"] == "1.9"
    (model,) = result["models"]
    return model


def _urdf_state(robot):
    model = pin.buildModelFromUrdf(str(robot.description.urdf))
    data = model.createData()
    q = robot.home
    pin.framesForwardKinematics(model, data, q)
    pin.computeJointJacobians(model, data, q)
    return model, data


def _close(a, b, tol=POSE_TOL) -> bool:
    return bool(np.allclose(a, b, rtol=0.0, atol=tol))


@pytest.mark.parametrize("name", ROBOTS)
def test_links_joints_frames_match_pinocchio_at_home(name, exported, libsdformat):
    robot, paths = exported[name]
    sdf = _model_of(libsdformat, paths)
    summary = json.loads(paths["summary"].read_text())
    model, data = _urdf_state(robot)
    links = {link["name"]: link for link in sdf["links"]}
    joints = {joint["name"]: joint for joint in sdf["joints"]}
    frames = {frame["name"]: frame for frame in sdf["frames"]}
    drives = {drive.joint: drive for drive in robot.nominal_parameters.drives}
    checked = 0
    for frame_id, frame in enumerate(model.frames):
        if frame.type != pin.FrameType.BODY or frame.name not in links:
            continue
        link = links[frame.name]
        pose = _se3(link["pose"])
        expected = data.oMf[frame_id]
        assert _close(pose.translation, expected.translation), frame.name
        assert _close(pose.rotation, expected.rotation), frame.name
        joint_id = frame.parentJoint
        if frame.placement != pin.SE3.Identity() or joint_id == 0:
            continue
        # inertial of the body moving with joint_id (fixed children lumped, as pinocchio does)
        inertia = model.inertias[joint_id]
        joint_name = model.names[joint_id]
        disk = np.zeros((3, 3))
        if joint_name in summary["rotor_disks_kg_m2"]:  # massless rotor disk on a base joint: ia about the axis
            axis = data.oMi[joint_id].rotation.T @ pin.getJointJacobian(
                model, data, joint_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[3:, model.joints[joint_id].idx_v]
            ia = drives[joint_name].ia
            disk = ia * (np.outer(axis, axis) + 0.5 * (np.eye(3) - np.outer(axis, axis)))
        if inertia.mass == 0.0:  # massless in pardyn: the placeholder (and the rotor disk)
            assert frame.name in summary["placeholder_links"]
            placeholder = _se3(link["inertial_pose"]).rotation @ np.array(link["moi"]).reshape(3, 3) @ \
                _se3(link["inertial_pose"]).rotation.T - disk
            assert _close(placeholder, placeholder[0, 0] * np.eye(3), 1e-12), frame.name
            continue
        scale = max(1.0, inertia.mass)
        assert abs(link["mass"] - inertia.mass) <= 1e-9 * scale, frame.name
        com = _se3(link["inertial_pose"])
        assert _close(com.translation, inertia.lever, 1e-9 * max(1.0, np.abs(inertia.lever).max())), frame.name
        got = com.rotation @ np.array(link["moi"]).reshape(3, 3) @ com.rotation.T
        want = np.array(inertia.inertia) + disk
        tol = 1e-9 * np.abs(want).max()
        if frame.name in summary["completed_planar_inertias"]:  # only I n enters planar dynamics
            normal = data.oMf[frame_id].rotation.T @ np.array([0.0, 0.0, 1.0])
            assert _close(got @ normal, want @ normal, tol), frame.name
            assert np.linalg.eigvalsh(got).min() > 0.0
        else:
            assert _close(got, want, tol), frame.name
        checked += 1
    assert checked > 0
    for joint_id in range(1, model.njoints):
        joint_name = model.names[joint_id]
        if joint_name in summary["dropped_virtual_joints"]:
            assert joint_name not in joints
            continue
        joint = joints[joint_name]
        assert _close(_se3(joint["pose"]).translation, data.oMi[joint_id].translation), joint_name
        index = model.joints[joint_id].idx_v
        column = pin.getJointJacobian(model, data, joint_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:, index]
        axis = column[3:] if joint["type"] == "revolute" else column[:3]
        assert joint["type"] in ("revolute", "prismatic")
        assert _close(joint["axis"]["xyz"], axis), joint_name
        home = robot.home[index]
        assert _close(joint["axis"]["lower"], model.lowerPositionLimit[index] - home), joint_name
        assert _close(joint["axis"]["upper"], model.upperPositionLimit[index] - home), joint_name
        assert joint["axis"]["effort"] == pytest.approx(model.effortLimit[index], rel=1e-12)
        assert joint["axis"]["damping"] == pytest.approx(model.damping[index], abs=1e-12)
        assert joint["axis"]["friction"] == pytest.approx(model.friction[index], abs=1e-12)
    for frame_id, frame in enumerate(model.frames):
        if frame.name in frames:
            pose = _se3(frames[frame.name]["pose"])
            assert _close(pose.translation, data.oMf[frame_id].translation), frame.name
            assert _close(pose.rotation, data.oMf[frame_id].rotation), frame.name
    for closure in robot.description.closures:  # closure frames are visible under their pardyn names
        for frame in closure.frames:
            assert frame in frames or frame in links, frame


def _body_of(sdf: dict, name: str) -> str:
    for frame in sdf["frames"]:
        if frame["name"] == name:
            return frame["body"]
    assert any(link["name"] == name for link in sdf["links"]), name
    return name


def _connected(joints: list[dict], start: str, goal: str) -> bool:
    neighbours: dict[str, set[str]] = {}
    for joint in joints:
        neighbours.setdefault(joint["parent_link"], set()).add(joint["child_link"])
        neighbours.setdefault(joint["child_link"], set()).add(joint["parent_link"])
    seen, todo = {start}, [start]
    while todo:
        for other in neighbours.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return goal in seen


CHAIN_PARTS = ("revolute", "ball", "universal", "coupler_a", "coupler_b")
CHAINS = {"2D": ["revolute"], "3D": ["ball"], "distance": ["ball", "universal"], "6D": [], "planar": []}


@pytest.mark.parametrize("name", ROBOTS)
def test_every_closure_is_a_joint_closing_a_loop_between_the_right_links(name, exported, libsdformat):
    robot, paths = exported[name]
    sdf = _model_of(libsdformat, paths)
    model, data = _urdf_state(robot)
    joints = sdf["joints"]
    by_name = {joint["name"]: joint for joint in joints}
    welds = [joint for joint in joints if joint["name"].endswith("_closure")]
    assert len(welds) == len(robot.description.closures)
    for closure in robot.description.closures:
        weld = by_name[f"{closure.name}_closure"]
        assert weld["type"] == "fixed"
        frame_a, frame_b = closure.frames
        assert weld["parent_link"] == _body_of(sdf, frame_a)
        chain = [j for j in joints if j["name"] in {f"{closure.name}_{part}" for part in CHAIN_PARTS}]
        kinds = sorted(j["type"] for j in chain)
        if closure.type in ("2D", "3D", "distance", "6D") or closure.components == (0, 1, 5):
            assert kinds == sorted(CHAINS[closure.type]), closure.name
        # the chain leads from the second frame's link to the weld's child
        assert _connected(chain, _body_of(sdf, frame_b), weld["child_link"]), closure.name
        if closure.components == (5,):  # [rz]: a parallelogram, its coupler parallel to the hinges' line
            coupler = {j["name"]: _se3(j["pose"]).translation for j in chain}
            hinges = [data.oMi[model.frames[model.getFrameId(f)].parentJoint].translation for f in (frame_a, frame_b)]
            side = coupler[f"{closure.name}_coupler_a"] - coupler[f"{closure.name}_coupler_b"]
            assert _close(side, hinges[0] - hinges[1]), closure.name
        else:  # the weld sits at the first frame's point
            position = data.oMf[model.getFrameId(frame_a)].translation
            assert _close(_se3(weld["pose"]).translation, position), closure.name
        # and closes a loop: its links are connected without it
        others = [j for j in joints if j is not weld]
        assert _connected(others, weld["parent_link"], weld["child_link"]), closure.name
        if closure.type == "2D":
            assert _close(chain[0]["axis"]["xyz"], [0.0, 0.0, 1.0])
        if closure.type == "distance":
            (ball,) = [j for j in chain if j["type"] == "ball"]
            (universal,) = [j for j in chain if j["type"] == "universal"]
            rod = _se3(universal["pose"]).translation - _se3(ball["pose"]).translation
            assert np.linalg.norm(rod) == pytest.approx(closure.length, abs=1e-9)
            assert abs(np.dot(rod, universal["axis"]["xyz"])) < 1e-9
            assert abs(np.dot(rod, universal["axis2"]["xyz"])) < 1e-9


def _degrees_of_freedom(sdf: dict, skip_welds: bool = False) -> int:
    """Velocity-level count: link twists (6 each) and joint rates, one 6-row equation per joint."""
    links = [link["name"] for link in sdf["links"]]
    index = {name: k for k, name in enumerate(links)}
    columns = 6 * len(links)
    blocks = []
    for joint in sdf["joints"]:
        if skip_welds and joint["name"].endswith("_closure"):
            continue
        point = _se3(joint["pose"]).translation
        if joint["type"] == "revolute":
            axes = [np.array(joint["axis"]["xyz"])]
        elif joint["type"] == "universal":
            axes = [np.array(joint["axis"]["xyz"]), np.array(joint["axis2"]["xyz"])]
        elif joint["type"] == "ball":
            axes = list(np.eye(3))
        else:
            axes = []
        subspace = [np.concatenate([a, np.cross(point, a)]) for a in axes]
        if joint["type"] == "prismatic":
            subspace = [np.concatenate([np.zeros(3), joint["axis"]["xyz"]])]
        blocks.append((joint, subspace))
    gearboxes = [joint for joint, _ in blocks if joint["type"] == "gearbox"]
    blocks = [(joint, subspace) for joint, subspace in blocks if joint["type"] != "gearbox"]
    rates = sum(len(s) for _, s in blocks)
    matrix = np.zeros((6 * len(blocks) + len(gearboxes), columns + rates))
    for row, gear in enumerate(gearboxes, start=6 * len(blocks)):
        # SDF's theta_2 = -ratio theta_1, both angles from the reference body: a row on the angular rates
        axis, axis2 = np.array(gear["axis"]["xyz"]), np.array(gear["axis2"]["xyz"])
        matrix[row, 6 * index[gear["child_link"]]:6 * index[gear["child_link"]] + 3] += axis2
        matrix[row, 6 * index[gear["parent_link"]]:6 * index[gear["parent_link"]] + 3] += gear["gearbox_ratio"] * axis
        if gear["gearbox_reference_body"] in index:
            reference = 6 * index[gear["gearbox_reference_body"]]
            matrix[row, reference:reference + 3] -= axis2 + gear["gearbox_ratio"] * axis
    column = columns
    for row, (joint, subspace) in enumerate(blocks):
        rows = slice(6 * row, 6 * row + 6)
        matrix[rows, 6 * index[joint["child_link"]]:6 * index[joint["child_link"]] + 6] = np.eye(6)
        if joint["parent_link"] != "world":
            matrix[rows, 6 * index[joint["parent_link"]]:6 * index[joint["parent_link"]] + 6] -= np.eye(6)
        for twist in subspace:
            matrix[rows, column] = -twist
            column += 1
    singular = np.linalg.svd(matrix, compute_uv=False)
    rank = int(np.sum(singular > 1e-9 * singular[0]))
    return matrix.shape[1] - rank


@pytest.mark.parametrize("name", ROBOTS)
def test_round_trip_degrees_of_freedom_and_closure_rank(name, exported, libsdformat):
    robot, paths = exported[name]
    sdf = _model_of(libsdformat, paths)
    summary = json.loads(paths["summary"].read_text())
    _, jacobian = robot.closures.residual_and_jacobian(robot.home)
    pardyn_rank = int(np.linalg.matrix_rank(jacobian, tol=1e-9)) if jacobian.size else 0
    pardyn_dof = robot.nv - pardyn_rank
    sdf_dof = _degrees_of_freedom(sdf)
    tree_dof = _degrees_of_freedom(sdf, skip_welds=True)
    assert sdf_dof == pardyn_dof == len(robot.task_names)
    # closure rank: the loops' rank in the SDF tree's coordinates is pardyn's, shifted by the
    # coordinates the trees differ by (free platform for the virtual chain, pins, rods)
    sdf_rank = tree_dof - sdf_dof
    assert sdf_rank - pardyn_rank == tree_dof - robot.nv
    cycles = len(sdf["joints"]) - (len(sdf["links"]) + 1) + 1
    assert cycles == len(robot.description.closures) - (1 if summary["free_platform"] else 0)


@pytest.mark.parametrize("name", ROBOTS)
def test_gz_sim_variant_closes_every_loop_with_a_detachable_joint(name, exported, libsdformat):
    robot, paths = exported[name]
    loops = {j["name"]: j for j in _model_of(libsdformat, paths)["joints"] if j["name"].endswith("_closure")}
    gz = _model_of(libsdformat, paths, "gz_model")
    assert not any(j["name"].endswith("_closure") for j in gz["joints"])
    detachable = [p for p in gz["plugins"] if "DetachableJoint" in p]
    assert len(detachable) == len(loops)
    for weld in loops.values():
        assert any(f"<parent_link>{weld['parent_link']}</parent_link>" in p and
                   f"<child_link>{weld['child_link']}</child_link>" in p and
                   f"<child_model>{robot.name}</child_model>" in p for p in detachable), weld["name"]
    (control,) = [p for p in gz["plugins"] if "gz_ros2_control::GazeboSimROS2ControlPlugin" in p]
    assert f"<parameters>{paths['controllers'].resolve()}</parameters>" in control
    world = libsdformat[paths["gz_world"]]
    assert world["errors"] == []
    (gz_world,) = world["worlds"]
    assert _close(gz_world["gravity"], robot.nominal_parameters.gravity)
    assert "type='dart'" in gz_world["physics"][0] and "<solver_type>pgs</solver_type>" in gz_world["physics"][0]
    classic = libsdformat[paths["classic_world"]]
    assert classic["errors"] == []
    (classic_world,) = classic["worlds"]
    assert "type='ode'" in classic_world["physics"][0]
    assert {j["name"] for j in classic_world["models"][0]["joints"]} >= set(loops)


def test_a_closure_no_sdf_joint_reproduces_is_refused(exported):
    robot, _ = exported["dualv"]
    from dataclasses import replace  # noqa: PLC0415

    original = robot.description
    closure = replace(robot.description.closures[0], components=(0, 4))  # x, ry: no joint does that
    robot.description = replace(robot.description, closures=(closure, *robot.description.closures[1:]))
    try:
        with pytest.raises(ExportError, match=r"closure 'leg1'.*\['ry', 'x'\]"):
            build_mechanism(robot)
    finally:
        robot.description = original


@pytest.mark.parametrize(("name", "free", "guides"), [
    ("dualv", True, []), ("rrr3", True, []), ("wu3r", True, []), ("wu3n", True, []),
    ("five_bar", False, ["platform_x", "platform_y"]),            # x, y only: the end-effector must not spin
    ("h4", False, ["nacelle_x", "nacelle_y", "nacelle_z"]),       # the parallelograms keep the nacelle level
    ("ur5e", False, []),                                          # serial: no virtual chain
    ("delta", False, ["platform_x", "platform_y", "platform_z"]),  # the parallelograms keep the platform level
    ("hexapod", True, []),                                        # six legs hold all six platform motions
])
def test_virtual_chain_is_dropped_only_where_the_loops_hold_the_platform(name, free, guides, exported):
    summary = json.loads(exported[name][1]["summary"].read_text())
    assert summary["free_platform"] is free
    assert summary["guide_joints"] == guides
    assert bool(summary["dropped_virtual_joints"]) is free


# ---------------------------------------------------------------- robots from other formats (issue 41)
DESCRIPTION = Path(__file__).resolve().parents[1] / "description"
GEPETTO = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "gepetto_parallel_robots"


def _module(path: Path):
    """A test module's text constants (the four-bar of test/description/conftest.py, the 2F-85-style gripper of
    test/description/test_vendor_gripper.py), loaded by path: the tests run in importlib mode."""
    spec = importlib.util.spec_from_file_location(f"_sdf_source_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _foreign_robots(folder: Path) -> dict[str, Path]:
    """YAML paths of an MJCF four-bar, the MJCF gripper with its joint coupling and Gepetto's URDF models."""
    four_bar = _module(DESCRIPTION / "conftest.py").FOUR_BAR
    gripper = _module(DESCRIPTION / "test_vendor_gripper.py")
    (folder / "four_bar.xml").write_text(four_bar)
    (folder / "four_bar.yaml").write_text("name: four_bar\nurdf: four_bar.xml\ntask: actuated\nactuated: [crank_joint]\n")
    (folder / "gripper.xml").write_text(gripper.GRIPPER)
    (folder / "gripper.yaml").write_text(gripper.YAML)
    robots = {"mjcf_four_bar": folder / "four_bar.yaml", "mjcf_gripper": folder / "gripper.yaml"}
    ball = _module(DESCRIPTION / "test_vendor_ball.py")  # a Cassie-style leg: ball joint, free joint, loop
    (folder / "leg.xml").write_text(ball.leg_mjcf())
    (folder / "leg.yaml").write_text(ball.YAML)
    robots["mjcf_ball_leg"] = folder / "leg.yaml"
    vendor = _module(DESCRIPTION / "test_vendor_exports.py")  # joints named like links (body:/joint: in pardyn)
    for suffix, text in (("urdf", vendor.five_bar_urdf(joint_names=vendor.CLASH, ring=True)),
                         ("xml", vendor.five_bar_mjcf(joint_names=vendor.CLASH, ring=True))):
        (folder / f"clash.{suffix}").write_text(text)
        robots[f"{'urdf' if suffix == 'urdf' else 'mjcf'}_name_clash"] = vendor._clash_yaml(folder, f"clash.{suffix}")
    spherical = _module(DESCRIPTION / "test_vendor_spherical.py")  # onshape's 3-RRR spherical mechanism
    from pardyn.description.starting import starting_yaml  # noqa: PLC0415
    for suffix, text in (("urdf", spherical.spherical_urdf()), ("xml", spherical.spherical_mjcf())):
        (folder / f"spherical.{suffix}").write_text(text)
        yaml_path = folder / f"spherical_{suffix}.yaml"
        yaml_path.write_text(starting_yaml(folder / f"spherical.{suffix}", yaml_path))
        robots[f"{'urdf' if suffix == 'urdf' else 'mjcf'}_spherical"] = yaml_path
    written = _module(DESCRIPTION / "test_vendor_commands.py").styles(folder / "styles")  # issue 41's other styles
    robots.update({f"style_{name}": written[name] for name in STYLES})
    robots.update({f"gepetto_{path.parent.name}": path for path in sorted(GEPETTO.glob("*/robot.yaml"))})
    return robots


STYLES = ["onshape_urdf", "onshape_mjcf", "unbounded_urdf", "free_texture_mjcf", "small_workspace", "friction_finger"]
"""test/description/test_vendor_commands.py's styles not built above (its clash and ball leg are)."""
FOREIGN = ["mjcf_four_bar", "mjcf_gripper", "mjcf_ball_leg", "urdf_name_clash", "mjcf_name_clash", "urdf_spherical",
           "mjcf_spherical", *(f"style_{name}" for name in STYLES), *(f"gepetto_{p.parent.name}" for p in sorted(GEPETTO.glob("*/robot.yaml")))]


@pytest.fixture(scope="module")
def foreign(tmp_path_factory, sdf_check):
    """``{name: (robot, {role: path}, {sdf path: what libsdformat resolved})}`` for :data:`FOREIGN`."""
    folder = tmp_path_factory.mktemp("foreign")
    result = {}
    for name, path in _foreign_robots(folder).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the gripper's absent meshes, said by its own test
            robot = pardyn.load_robot(path)
        paths = export(robot, "sdf", folder / "out" / name)
        files = [p for p in paths.values() if p.suffix == ".sdf"]
        run = subprocess.run([str(sdf_check), *map(str, files)], capture_output=True, text=True, timeout=120,
                             check=False)
        result[name] = (robot, paths, {Path(item["file"]): item for item in map(json.loads, run.stdout.splitlines())})
    return result


@pytest.mark.skipif(not GEPETTO.is_dir(), reason=f"shared datasets absent: {GEPETTO} not found (Gepetto models)")
def test_gepetto_models_are_among_the_exported():
    assert sum(name.startswith("gepetto_") for name in FOREIGN) == 5


@pytest.mark.parametrize("name", FOREIGN)
def test_every_format_exports_files_libsdformat_loads(name, foreign):
    """MJCF (a world body, which libsdformat refused as ``<frame name="world">``: 'frame name [world] is reserved',
    and world_classic.sdf failed to load), a joint coupling (refused before: no SDF joint), Gepetto's URDFs: every
    file loads without error, the degrees of freedom libsdformat's joint graph leaves are the robot's."""
    robot, paths, loaded = foreign[name]
    for path, item in loaded.items():
        assert item["errors"] == [], (path.name, item["errors"])
    (model,) = loaded[paths["model"]]["models"]
    (classic,) = loaded[paths["classic_world"]]["worlds"]
    assert len(classic["models"]) == 1
    assert all(frame["name"] != "world" for frame in model["frames"])
    _, jacobian = robot.closures.residual_and_jacobian(robot.home)
    assert _degrees_of_freedom(model) == robot.nv - int(np.linalg.matrix_rank(jacobian, tol=1e-9))


def test_a_joint_coupling_is_a_gearbox_joint(foreign):
    """The gripper's drivers coupled ``q_b = c0 + c1 q_a`` (MJCF polycoef): SDF's gearbox with theta_2 = -ratio
    theta_1 between the drivers' links about their hinge axes (pinocchio's Jacobian columns), on their common
    parent; without it the SDF graph has one degree of freedom more."""
    robot, paths, loaded = foreign["mjcf_gripper"]
    (model,) = loaded[paths["model"]]["models"]
    (coupling,) = [c for c in robot.description.closures if c.type == "coupling"]
    (gear,) = [j for j in model["joints"] if j["type"] == "gearbox"]
    joint_a, joint_b = coupling.joints
    assert gear["parent_link"] == joint_a.removesuffix("_joint") and gear["child_link"] == joint_b.removesuffix("_joint")
    assert gear["gearbox_ratio"] == pytest.approx(-coupling.coefficients[1], abs=1e-12)
    assert gear["gearbox_reference_body"] == "world"  # the drivers hang from the base, fixed to the world
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, robot.home)
    for key, joint in (("axis", joint_a), ("axis2", joint_b)):
        joint_id = robot.model.getJointId(joint)
        column = pin.getJointJacobian(robot.model, data, joint_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[
            3:, robot.model.joints[joint_id].idx_v]
        assert _close(gear[key]["xyz"], column), key
    without = dict(model, joints=[j for j in model["joints"] if j["type"] != "gearbox"])
    assert _degrees_of_freedom(without) == _degrees_of_freedom(model) + 1
