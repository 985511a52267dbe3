"""Robots as common tools export them (issue 41): onshape-to-robot's URDF and MJCF of a planar five-bar with its
closing frames, a joint named like a link, revolute joints without limits, an MJCF with a free joint and an absent
texture. The files are written here in each tool's own style (onshape-to-robot ``exporter_urdf.py`` /
``exporter_mujoco.py``: dummy links on fixed joints ``<frame>_frame``, ``closing_<name>_1``/``_2`` frames plus the
``_z`` pair of a revolute mate, sites joined by unnamed ``connect`` equalities, position actuators, a
``<freejoint>`` unless disabled).

References: the five-bar's closed form by circle intersection (hand-derived below), MuJoCo's own equality residuals
(``efc_pos``) at pardyn's solutions.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import pardyn
from pardyn.cli import main
from pardyn.errors import DescriptionError

# Five-bar in the xy plane (hinges about z): motors at A1, A2 on the base, proximal links of length L1 to B1, B2,
# distal links of length L2 meeting at P; assembled (q = 0) at P = (0, 0.15).
A1, A2 = np.array([-0.05, 0.0]), np.array([0.05, 0.0])
L1 = 0.08
B1 = A1 + L1 * np.array([math.cos(2 * math.pi / 3), math.sin(2 * math.pi / 3)])
B2 = np.array([-B1[0], B1[1]])
P = np.array([0.0, 0.15])
L2 = float(np.linalg.norm(P - B1))
YAW = {"base": 0.0, "proximal1": 0.3, "distal1": -0.4, "proximal2": -0.2, "distal2": 0.5}
"""Each link frame's yaw in the world at q = 0 (rad): an onshape export places link frames where the parts are."""
POSITION = {"base": np.zeros(2), "proximal1": A1, "distal1": B1, "proximal2": A2, "distal2": B2}


def _rz(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s], [s, c]])


def _local(link: str, point: np.ndarray) -> np.ndarray:
    """A world point (2,) in the frame of ``link`` at q = 0."""
    return _rz(YAW[link]).T @ (np.asarray(point) - POSITION[link])


def _origin(parent: str, child_position: np.ndarray, child_yaw: float) -> str:
    x, y = _local(parent, child_position)
    return f'<origin xyz="{x:.17g} {y:.17g} 0" rpy="0 0 {child_yaw - YAW[parent]:.17g}" />'


def _inertial(mass: float) -> str:
    i = mass * 1e-4
    return (f'<inertial><origin xyz="0.01 0 0" rpy="0 0 0" /><mass value="{mass}" />'
            f'<inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}" /></inertial>')


def _frame(link: str, frame: str, point: np.ndarray, z: float = 0.0) -> str:
    """onshape-to-robot's frame: a dummy link (mass 1e-9) on a fixed joint ``<frame>_frame``."""
    x, y = _local(link, point)
    return (f'<link name="{frame}"><origin xyz="0 0 0" rpy="0 0 0" /><inertial><origin xyz="0 0 0" rpy="0 0 0" />'
            '<mass value="1e-9" /><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0" /></inertial></link>'
            f'<joint name="{frame}_frame" type="fixed"><origin xyz="{x:.17g} {y:.17g} {z}" rpy="0 0 0" />'
            f'<parent link="{link}" /><child link="{frame}" /><axis xyz="0 0 0"/></joint>')


RING = ('<link name="ring1">' + _inertial(0.2) + '</link><joint name="ring1" type="revolute"><origin xyz="0 -0.05 0" '
        'rpy="0 0 0" /><parent link="base" /><child link="ring1" /><axis xyz="0 0 1"/>'
        '<limit effort="10" velocity="10" lower="-1" upper="1" /></joint>')
"""A ring on the base turning about z, its joint named like its link (locked by the YAML)."""


def five_bar_urdf(*, limits: bool = True, joint_names: dict[str, str] | None = None,
                  transmissions: bool = False, ring: bool = False) -> str:
    """The five-bar as onshape-to-robot's URDF exporter writes it (``limits``: its default ``lower="-pi"
    upper="pi"``; False: ``<limit effort velocity>`` only). ``joint_names`` renames joints (a name clash);
    ``ring``: :data:`RING` too."""
    names = {"motor1": "motor1", "passive1": "passive1", "motor2": "motor2", "passive2": "passive2",
             **(joint_names or {})}
    limit = f'lower="{-math.pi}" upper="{math.pi}" ' if limits else ""

    def joint(name: str, parent: str, child: str) -> str:
        return (f'<joint name="{names[name]}" type="revolute">{_origin(parent, POSITION[child], YAW[child])}'
                f'<parent link="{parent}" /><child link="{child}" /><axis xyz="0 0 1"/>'
                f'<limit effort="10" velocity="10" {limit}/></joint>')

    links = "".join(f'<link name="{link}">{_inertial(mass)}</link>' for link, mass in
                    (("base", 1.0), ("proximal1", 0.05), ("distal1", 0.06), ("proximal2", 0.05), ("distal2", 0.06)))
    frames = (_frame("distal1", "closing_effector_1", P) + _frame("distal1", "closing_effector_1_z", P, 0.1)
              + _frame("distal2", "closing_effector_2", P) + _frame("distal2", "closing_effector_2_z", P, 0.1)
              + _frame("distal1", "effector", P))
    joints = (joint("motor1", "base", "proximal1") + joint("passive1", "proximal1", "distal1")
              + joint("motor2", "base", "proximal2") + joint("passive2", "proximal2", "distal2"))
    transmission = "".join(
        f'<transmission name="{names[m]}_transmission"><type>transmission_interface/SimpleTransmission</type>'
        f'<joint name="{names[m]}"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
        f'<actuator name="{names[m]}_motor"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>'
        for m in ("motor1", "motor2")) if transmissions else ""
    return ('<?xml version="1.0" ?><!-- Generated using onshape-to-robot --><robot name="five_bar">'
            f"{links}{frames}{joints}{RING if ring else ''}{transmission}</robot>")


def effector_closed_form(q1: float, q2: float) -> np.ndarray:
    """P (2,) for motor angles ``q1``, ``q2`` (rad from the assembled pose): B_i = A_i + L1 (cos, sin)(a_i + q_i),
    then the intersection of the circles of radius L2 about B1 and B2 on the upper side (the assembled branch)."""
    b1 = A1 + L1 * np.array([math.cos(2 * math.pi / 3 + q1), math.sin(2 * math.pi / 3 + q1)])
    b2 = A2 + L1 * np.array([math.cos(math.pi / 3 + q2), math.sin(math.pi / 3 + q2)])
    middle, half = 0.5 * (b1 + b2), 0.5 * np.linalg.norm(b2 - b1)
    height = math.sqrt(L2**2 - half**2)
    direction = (b2 - b1) / (2 * half)
    return middle + height * np.array([-direction[1], direction[0]])


def _quat(yaw: float) -> str:
    return f"{math.cos(yaw / 2):.17g} 0 0 {math.sin(yaw / 2):.17g}"


def five_bar_mjcf(*, freejoint: bool = False, texture: bool = False, keyframe: bool = False,
                  joint_names: dict[str, str] | None = None, ring: bool = False) -> str:
    """The five-bar as onshape-to-robot's MuJoCo exporter writes it: nested bodies, hinges with ``range``, the
    closing frames as sites joined by unnamed ``connect`` equalities (point and ``_z`` pair), position actuators on
    the motors only, a ``<freejoint>`` on the base (``freejoint``), a material whose texture file is absent
    (``texture``), a keyframe ``home`` (``keyframe``: the base 1 m up, turned 0.3 rad about z). ``joint_names``
    renames joints (a name clash), ``ring``: a body ``ring1`` on the base with a hinge ``ring1``."""
    names = {"motor1": "motor1", "passive1": "passive1", "motor2": "motor2", "passive2": "passive2",
             **(joint_names or {})}

    def body(link: str, parent: str, joint: str, inner: str) -> str:
        x, y = _local(parent, POSITION[link])
        return (f'<body name="{link}" pos="{x:.17g} {y:.17g} 0" quat="{_quat(YAW[link] - YAW[parent])}">'
                f'<joint axis="0 0 1" name="{names[joint]}" type="hinge" range="{-math.pi} {math.pi}" />'
                f'<inertial pos="0.01 0 0" mass="0.05" fullinertia="5e-6 5e-6 5e-6 0 0 0" />'
                f'<geom type="capsule" size="0.005" fromto="0 0 0 0.02 0 0" class="visual" />{inner}</body>')

    def site(link: str, name: str, z: float = 0.0) -> str:
        x, y = _local(link, P)
        return f'<site group="3" name="{name}" pos="{x:.17g} {y:.17g} {z}" quat="1 0 0 0" />'

    distal1 = (site("distal1", "closing_effector_1") + site("distal1", "closing_effector_1_z", 0.1)
               + site("distal1", "effector"))
    distal2 = site("distal2", "closing_effector_2") + site("distal2", "closing_effector_2_z", 0.1)
    tree = (body("proximal1", "base", "motor1", body("distal1", "proximal1", "passive1", distal1))
            + body("proximal2", "base", "motor2", body("distal2", "proximal2", "passive2", distal2)))
    if ring:
        tree += ('<body name="ring1" pos="0 -0.05 0"><joint axis="0 0 1" name="ring1" type="hinge" range="-1 1" />'
                 '<inertial pos="0.01 0 0" mass="0.2" fullinertia="2e-5 2e-5 2e-5 0 0 0" /></body>')
    free = '<freejoint name="base_freejoint" />' if freejoint else ""
    material = 'material="base_material"' if texture else ""
    assets = ('<asset><texture name="grid" type="2d" file="textures/grid.png" />'
              '<material name="base_material" texture="grid" rgba="0.6 0.6 0.6 1" /></asset>') if texture else ""
    key = ""
    if keyframe:
        base = f"0 0 1 {_quat(0.3)} " if freejoint else ""
        key = f'<keyframe><key name="home" qpos="{base}0.1 -0.2 -0.1 0.2" /></keyframe>'
    return (f'<mujoco model="five_bar"><compiler angle="radian" autolimits="true" />{assets}'
            '<default><default class="five_bar"><joint frictionloss="0" armature="0.005" />'
            '<position kp="10" /><default class="visual"><geom contype="0" conaffinity="0" group="2" /></default>'
            '</default></default>'
            f'<worldbody><body name="base" pos="0 0 0" quat="1 0 0 0" childclass="five_bar">{free}'
            '<inertial pos="0 0 0" mass="1" fullinertia="1e-3 1e-3 1e-3 0 0 0" />'
            f'<geom type="box" size="0.06 0.01 0.01" class="visual" {material} />{tree}</body></worldbody>'
            f'<actuator><position class="five_bar" name="motor1" joint="{names["motor1"]}" inheritrange="1" />'
            f'<position class="five_bar" name="motor2" joint="{names["motor2"]}" inheritrange="1" /></actuator>'
            '<equality><connect site1="closing_effector_1" site2="closing_effector_2" />'
            '<connect site1="closing_effector_1_z" site2="closing_effector_2_z" /></equality>'
            f"{key}</mujoco>")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    folder = Path(tmp_path_factory.mktemp("vendor_exports"))
    (folder / "five_bar.urdf").write_text(five_bar_urdf())
    (folder / "five_bar_tx.urdf").write_text(five_bar_urdf(transmissions=True))
    (folder / "five_bar.xml").write_text(five_bar_mjcf(keyframe=True))
    return folder


MOTOR_ANGLES = [(0.0, 0.0), (0.2, -0.1), (-0.15, 0.25), (0.3, 0.3), (-0.25, -0.2)]


def _mujoco_residuals(path: Path, qpos: np.ndarray) -> np.ndarray:
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    return np.array(data.efc_pos[: data.ne])


def test_bare_onshape_urdf_closes_its_closing_frames_as_the_closed_form(files):
    """Item 10 + 3: a bare onshape-to-robot URDF loads (closures from its closing frames, the frame task on its
    ``effector`` frame) and its forward problem gives the hand closed form's effector position."""
    robot = pardyn.load_robot(files / "five_bar.urdf")
    summary = robot.summary()
    assert summary["format"] == "urdf" and summary["degrees_of_freedom"] == 2
    assert [c["frames"] for c in summary["closures"]] == [["closing_effector_1", "closing_effector_2"]]
    assert summary["task"] == {"frame": "effector", "coordinates": ["x", "y"]}
    assert any("pardyn robots --init five_bar.urdf" in note for note in summary["notes"])
    worst = 0.0
    for q1, q2 in MOTOR_ANGLES:
        forward = robot.solve_forward(np.array([q1, q2]), start=robot.home)
        worst = max(worst, float(np.abs(robot.task_values(forward.q) - effector_closed_form(q1, q2)).max()))
        inverse = robot.solve_inverse(effector_closed_form(q1, q2), start=robot.home)
        assert np.abs(inverse.q[robot.actuated_indices] - [q1, q2]).max() < 1e-10
    assert worst < 1e-12, worst


def test_bare_onshape_mjcf_equalities_hold_in_mujoco_and_match_the_urdf(files):
    """Item 10: the MJCF export's unnamed site equalities are the closure ``effector`` (and ``effector_z``); at
    pardyn's forward solutions MuJoCo's own equality residuals vanish and the joints equal the URDF version's."""
    mjcf, urdf = pardyn.load_robot(files / "five_bar.xml"), pardyn.load_robot(files / "five_bar.urdf")
    assert mjcf.summary()["closures"][0]["name"] == "effector"
    for q1, q2 in MOTOR_ANGLES:
        q = mjcf.solve_forward(np.array([q1, q2]), start=mjcf.home).q
        assert np.abs(_mujoco_residuals(files / "five_bar.xml", q)).max() < 1e-12
        assert np.abs(q - urdf.solve_forward(np.array([q1, q2]), start=urdf.home).q).max() < 1e-10


def test_init_writes_a_starting_yaml_that_loads(files, capsys):
    """Item 3: ``pardyn robots --init FILE`` writes a YAML (actuated from the transmissions, closures from the
    closing frames; for the MJCF, home from its keyframe) that describes the robot; it never overwrites."""
    target = files / "out" / "five_bar.yaml"
    assert main(["robots", "--init", str(files / "five_bar_tx.urdf"), "--output", str(target)]) == 0
    text = target.read_text()
    assert "actuated: the URDF's <transmission> joints" in text and "closing_effector_1" in text
    robot = pardyn.load_robot(target)
    assert robot.task_frame == "effector" and robot.actuated_names == ("motor1", "motor2")
    assert main(["robots", "--init", str(files / "five_bar_tx.urdf"), "--output", str(target)]) == 2
    assert "exists: not overwritten" in capsys.readouterr().err
    keyed = files / "out" / "five_bar_mjcf.yaml"
    assert main(["robots", "--init", str(files / "five_bar.xml"), "--output", str(keyed)]) == 0
    assert "home: keyframe 'home'" in keyed.read_text()
    robot = pardyn.load_robot(keyed)
    q = robot.home
    assert abs(q[robot.indices(["motor1"])[0]] - 0.1) < 0.05  # refined from the keyframe's guess
    assert np.abs(_mujoco_residuals(files / "five_bar.xml", q)).max() < 1e-12


def test_describe_a_bare_urdf_and_refuse_an_sdf_in_one_line(files, capsys):
    """Item 3: ``--describe robot.urdf`` describes it (was "unknown robot"); an SDF says what to give instead."""
    assert main(["robots", "--describe", str(files / "five_bar.urdf")]) == 0
    assert "closing_effector_1 ~ closing_effector_2" in capsys.readouterr().out
    sdf = files / "robot.sdf"
    sdf.write_text('<?xml version="1.0"?><sdf version="1.9"><model name="m"><link name="a"/></model></sdf>')
    assert main(["robots", "--describe", str(sdf)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "an SDF file: pardyn reads URDF and MJCF trees" in err


def test_frame_task_through_demo_animate_and_export_c(files, tmp_path, capsys):
    """Item 1: a frame task (the README's form) goes through the demo's kinematics part and ``animate`` (both
    stopped with "use robot.task_values(q)"); ``export c`` says in one line why it cannot."""
    from pardyn.cli.demo import kinematics_demo

    path = files / "five_bar_frame_task.yaml"  # the README's form, written by hand
    path.write_text("urdf: five_bar.urdf\nactuated: [motor1, motor2]\ntask: {frame: effector, coordinates: [x, y]}\n"
                    "closures: [{name: effector, frames: [closing_effector_1, closing_effector_2], type: 3D}]\n")
    summary = kinematics_demo(str(path), duration_s=1.0, rate_hz=40.0, radius_m=0.01, out=tmp_path / "kinematics")
    assert summary["max_inverse_residual"] < 1e-10 and summary["max_forward_round_trip_error"] < 1e-9
    assert (tmp_path / "kinematics" / "kinematics.png").is_file()
    assert main(["animate", "--robot", str(path), "--frames", "4", "--duration", "0.5", "--scale", "0.2",
                 "--out", str(tmp_path / "animate")]) == 0
    assert (tmp_path / "animate" / "five_bar_frame_task.gif").is_file()
    capsys.readouterr()
    assert main(["export", "c", "--robot", str(path), "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "task read from frame 'effector'" in err


CLASH = {"passive1": "distal1", "motor2": "proximal1"}
"""Joint ``distal1`` drives link ``distal1`` (the two frames coincide); joint ``proximal1`` (the right motor, at A2)
has the name of the left proximal link (at A1)."""


def _clash_yaml(folder: Path, tree: str, point: str = "body:proximal1") -> Path:
    path = folder / f"clash_{Path(tree).suffix[1:]}_{point.replace(':', '_')}.yaml"
    closures = ("closures: [{name: effector, frames: [closing_effector_1, closing_effector_2], type: 3D}]\n"
                if tree.endswith(".urdf") else "")
    path.write_text(f"urdf: {tree}\nactuated: [motor1, proximal1]\n{closures}task: {{frame: effector, coordinates: "
                    f"[x, y]}}\nlocked: {{ring1: 0.3}}\nassembly_mode:\n"
                    f"  - {{point: effector, above: distal1, axis: y}}\n"
                    f"  - {{point: effector, above: {point}, axis: y}}\n")
    return path


@pytest.mark.parametrize("suffix", ["urdf", "xml"])
def test_a_joint_named_like_a_link_loads_locks_and_solves(files, suffix, capsys):
    """Item 2: joints named like links load (the URDF was refused, the MJCF's ``locked:`` reached pinocchio's
    "Several frames match the filter"); ``body:proximal1`` and the inferred ``distal1`` are addressed; the locked
    ring is welded at 0.3 rad; the forward problem gives the closed form."""
    tree = files / f"clash.{suffix}"
    tree.write_text(five_bar_urdf(joint_names=CLASH, ring=True) if suffix == "urdf"
                    else five_bar_mjcf(joint_names=CLASH, ring=True))
    robot = pardyn.load_robot(_clash_yaml(files, tree.name))
    assert robot.locked_joints == {"ring1": 0.3} and "ring1" not in robot.joint_names
    assert robot.joint_names == ("motor1", "distal1", "proximal1", "passive2")
    for q1, q2 in MOTOR_ANGLES:
        q = robot.solve_forward(np.array([q1, q2]), start=robot.home).q
        assert np.abs(robot.task_values(q) - effector_closed_form(q1, q2)).max() < 1e-12
    assert main(["robots", "--describe", str(_clash_yaml(files, tree.name))]) == 0
    capsys.readouterr()
    with pytest.raises(DescriptionError, match=r"'proximal1' names 2 frames at different places \(body:proximal1, "
                                               r"joint:proximal1\): write one of them"):
        pardyn.load_robot(_clash_yaml(files, tree.name, point="proximal1"))
    assert pardyn.load_robot(_clash_yaml(files, tree.name, point="joint:proximal1")).nv == 4


def test_revolutes_without_limits_are_unbounded_with_one_note(files):
    """Item 4: URDF revolutes whose ``<limit>`` has no lower/upper were read as [0, 0] (the demo later said "home
    ... on a position limit"); they are unbounded, said once, and the excitation is sized from the robot (10 % of
    its size, the largest distance between joint origins at home: |B1 B2| = 0.18 m by construction)."""
    import warnings

    from pardyn.excitation.bounds import derived_excitation

    path = files / "unbounded.urdf"
    path.write_text(five_bar_urdf(limits=False, transmissions=True))
    robot = pardyn.load_robot(path)
    assert np.all(np.isinf(robot.model.lowerPositionLimit)) and np.all(np.isinf(robot.model.upperPositionLimit))
    notes = [note for note in robot.summary()["notes"] if "no lower/upper limit" in note]
    assert notes == ["revolute joints ['motor1', 'passive1', 'motor2', 'passive2'] of unbounded.urdf have no "
                     "lower/upper limit: unbounded (as continuous joints)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = derived_excitation(robot)
    size = float(np.linalg.norm(B1 - B2))
    assert np.allclose(settings.amplitude, [0.1 * size, 0.1 * size], rtol=1e-12)


def _free_yaml(folder: Path, base: str) -> Path:
    path = folder / f"free_{base.replace(' ', '').replace(':', '').replace('{', '').replace('}', '')}.yaml"
    path.write_text(f"urdf: free.xml\nactuated: [motor1, motor2]\ntask: {{frame: effector, coordinates: [x, y]}}\n"
                    f"base: {base}\n")
    return path


@pytest.mark.filterwarnings("ignore:.*(texture files missing|free joint):UserWarning")
def test_a_free_joint_held_by_the_yaml_and_an_absent_texture(files):
    """Item 5: an MJCF with a free joint (onshape-to-robot's default) and a texture whose file is absent: the
    texture is skipped with one note (it was fatal); bare, the free joint is refused with the YAML to write (the
    advice was for spherical joints); ``base: {keyframe: home}`` holds the base at the keyframe's pose (1 m up,
    turned 0.3 rad), ``base: fixed`` at the file's. References: the closed form turned by the base's yaw, MuJoCo's
    equality residuals of the same file (texture left out) with the free joint at the keyframe's pose."""
    import mujoco

    (files / "free.xml").write_text(five_bar_mjcf(freejoint=True, texture=True, keyframe=True))
    with pytest.warns(UserWarning, match=r"texture files missing: \['grid'\] skipped"):
        with pytest.raises(DescriptionError, match=r"'base_freejoint' is a free joint .* 'base: fixed' .* "
                                                   r"'base: \{keyframe: NAME\}'"):
            pardyn.load_robot(files / "free.xml")
    with pytest.warns(UserWarning, match=r"free joint\(s\) \['base_freejoint'\] fixed at keyframe 'home'"):
        robot = pardyn.load_robot(_free_yaml(files, "{keyframe: home}"))
    held = pardyn.load_robot(_free_yaml(files, "fixed"))
    reference = files / "free_reference.xml"
    reference.write_text(five_bar_mjcf(freejoint=True, keyframe=True))
    mj = mujoco.MjModel.from_xml_path(str(reference))
    base_pose = np.array(mj.key_qpos[0][:7])
    for q1, q2 in MOTOR_ANGLES:
        q = robot.solve_forward(np.array([q1, q2]), start=robot.home).q
        assert np.abs(robot.task_values(q) - _rz(0.3) @ effector_closed_form(q1, q2)).max() < 1e-12
        assert np.abs(_mujoco_residuals(reference, np.concatenate([base_pose, q]))).max() < 1e-12
        q = held.solve_forward(np.array([q1, q2]), start=held.home).q
        assert np.abs(held.task_values(q) - effector_closed_form(q1, q2)).max() < 1e-12
