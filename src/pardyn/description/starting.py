"""A starting pardyn YAML for a bare URDF or MJCF file (``pardyn robots --init FILE``, ``--robot robot.urdf``).

A tree file says most of what pardyn needs; the rest is read from conventions of the tools that write such files:

* **closures**: onshape-to-robot's closing frames. A mate named ``closing_<name>`` in Onshape is exported as two
  frames ``closing_<name>_1`` and ``closing_<name>_2`` (a dummy link on a fixed joint ``<frame>_frame`` in a URDF,
  a ``site`` in an MJCF), plus ``closing_<name>_1_z``/``closing_<name>_2_z`` 0.1 m along the mate's z axis when
  the mate is revolute (onshape-to-robot ``assembly.py``; its MJCF export joins each pair by a ``connect``
  equality). Each pair becomes a ``3D`` closure (coincident points), the ``_z`` pair a second one (the hinge
  axis); a fastened mate (no ``_z`` pair, orientations equal too) needs ``type: 6D``, said in a comment. An MJCF's
  ``<equality>`` section is the file's own closures (the YAML then writes none);
* **actuated joints**: the joints of the URDF's ``<transmission>`` elements, or the MJCF's actuators; without
  either, the movable joints on the root link (a parallel robot's motors sit on its base), marked as a guess;
* **base**: an MJCF's free joint (onshape-to-robot writes one unless told not to) held at the first keyframe, else at
  the file's pose (``base:``);
* **home**: the MJCF's first keyframe, else the configuration the file was written in (joints at 0, where an
  onshape export's loops are closed), refined at load;
* **task**: the pose components of the frame named ``effector`` (or ``end_effector``, ``tcp``, ``tool``), else of
  the first closing frame, chosen among x y z rx ry rz as the ones the free motions move best (as many as the
  mechanism has degrees of freedom); a tree without closures has its actuated joints as task.

:func:`starting_description` gives the YAML's content (a dict ``parse_description`` reads as it is);
:func:`starting_yaml` the commented text ``pardyn robots --init`` writes.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.errors import DescriptionError

__all__ = ["EFFECTOR_FRAMES", "closing_frame_pairs", "starting_description", "starting_yaml", "tree_kind"]

EFFECTOR_FRAMES = ("effector", "end_effector", "tcp", "tool", "tool0", "platform")
"""Frame names taken as the task frame, in this order of preference."""

_CLOSING = re.compile(r"^closing_(.+)_1$")
_COMPONENTS = ("x", "y", "z", "rx", "ry", "rz")


def tree_kind(path: Path) -> str:
    """``urdf``, ``mjcf`` or ``sdf``: what a tree file is, from its root element (the first 4 kB)."""
    with open(path, "rb") as file:
        head = file.read(4096).decode("utf-8", errors="replace")
    for kind, pattern in (("mjcf", r"<mujoco[\s>]"), ("sdf", r"<sdf[\s>]"), ("urdf", r"<robot[\s>]")):
        if re.search(pattern, head):
            return kind
    raise DescriptionError(f"{path}: neither a URDF (<robot> root), an MJCF (<mujoco>) nor an SDF (<sdf>): not a "
                           "robot description pardyn reads")


def closing_frame_pairs(frames: set[str]) -> list[tuple[str, str, str]]:
    """onshape-to-robot's closing frames among ``frames``: ``(closure name, frame 1, frame 2)`` per pair, the
    ``_z`` pair of a revolute mate as ``<name>_z`` (module docstring)."""
    pairs = []
    for frame in sorted(frames):
        match = _CLOSING.match(frame)
        if not match or f"closing_{match.group(1)}_2" not in frames:
            continue
        name = match.group(1)
        pairs.append((name, frame, f"closing_{name}_2"))
        if f"{frame}_z" in frames and f"closing_{name}_2_z" in frames:
            pairs.append((f"{name}_z", f"{frame}_z", f"closing_{name}_2_z"))
    return pairs


def _urdf_facts(path: Path) -> dict[str, Any]:
    """Joints on the root link, transmission joints, frame names (links) of a URDF (checked first)."""
    from pardyn.description.validation import check_urdf  # noqa: PLC0415

    tree = check_urdf(path)
    on_root = [name for name, (kind, parent, _) in tree.joints.items()
               if parent == tree.root and kind in ("revolute", "continuous", "prismatic")]
    transmitted = []
    for transmission in ElementTree.parse(path).getroot().iter("transmission"):
        for joint in transmission.iter("joint"):
            name = joint.get("name")
            if name in tree.joints and tree.joints[name][0] != "fixed" and name not in transmitted:
                transmitted.append(name)
    return {"on_root": on_root, "transmitted": transmitted, "frames": set(tree.links), "home": {}}


def _mjcf_facts(path: Path) -> dict[str, Any]:
    import mujoco  # noqa: PLC0415

    from pardyn.description.mjcf import mjcf_spec, read_mjcf  # noqa: PLC0415 - needs mujoco

    spec = mjcf_spec(path)
    base = None
    if any(joint.type == mujoco.mjtJoint.mjJNT_FREE for joint in spec.joints):  # a floating base, held
        base = spec.keys[0].name if spec.keys and spec.keys[0].name else "qpos0"
    robot = read_mjcf(path, base=base)
    model = robot.model
    keys = robot.keyframes
    home = {}
    if keys:
        values = model.referenceConfigurations[keys[0]]
        home = {model.names[j]: float(values[model.idx_qs[j]]) for j in range(1, model.njoints)}
    return {"on_root": [], "transmitted": list(robot.actuated), "frames": {f.name for f in model.frames},
            "home": home, "keyframe": keys[0] if keys else None, "equalities": len(robot.closures), "base": base}


def starting_description(path: str | Path) -> tuple[dict[str, Any], list[str]]:
    """The content of a starting YAML for the tree file ``path`` and one comment per decision (module docstring).

    The ``urdf:`` entry is ``path`` as given (absolute when ``path`` is); :func:`starting_yaml` writes it relative
    to the YAML. Raises :class:`DescriptionError` for an SDF (pardyn reads URDF and MJCF trees) or a file it
    cannot read.
    """
    path = Path(path)
    if not path.is_file():
        raise DescriptionError(f"{path}: file not found")
    kind = tree_kind(path)
    if kind == "sdf":
        raise DescriptionError(f"{path}: an SDF file: pardyn reads URDF and MJCF trees; export the robot as URDF or "
                               "MJCF (onshape-to-robot, MuJoCo's compile tool) and give that file")
    facts = _urdf_facts(path) if kind == "urdf" else _mjcf_facts(path)
    comments = []
    raw: dict[str, Any] = {"name": path.stem, "urdf": str(path)}
    closures = []
    if kind == "urdf":
        for name, first, second in closing_frame_pairs(facts["frames"]):
            closures.append({"name": name, "frames": [first, second], "type": "3D"})
        if closures:
            comments.append(f"closures: onshape-to-robot's closing frames ({len(closures)} pairs); a fastened mate "
                            "is type: 6D")
    elif facts["equalities"]:
        comments.append(f"closures: the MJCF's {facts['equalities']} equalities (none written here)")
    if facts["transmitted"]:
        actuated = facts["transmitted"]
        comments.append("actuated: the " + ("URDF's <transmission> joints" if kind == "urdf" else "MJCF's actuators"))
    else:
        actuated = facts["on_root"]
        comments.append("actuated: guessed, the movable joints on the root link (no transmissions): check them")
    if not actuated:
        raise DescriptionError(f"{path}: no actuated joint found (no transmission, actuator nor movable joint on the "
                               "root link): write a pardyn YAML naming them (actuated:)")
    raw["actuated"] = list(actuated)
    if closures:
        raw["closures"] = closures
    if facts.get("base"):
        raw["base"] = "fixed" if facts["base"] == "qpos0" else {"keyframe": facts["base"]}
        comments.append("base: the free joint held " + ("at the file's pose" if facts["base"] == "qpos0" else
                                                         f"at keyframe {facts['base']!r}"))
    if facts["home"]:
        raw["home"] = {"joints": facts["home"]}
        comments.append(f"home: keyframe {facts['keyframe']!r}")
    has_loops = bool(closures) or bool(facts.get("equalities"))
    frame = next((f for f in EFFECTOR_FRAMES if f in facts["frames"]), None)
    if frame is None and closures:
        frame = closures[0]["frames"][0]
    if not has_loops or frame is None:
        raw["task"] = "actuated"
        comments.append("task: the actuated joints" + ("" if has_loops else " (a tree)"))
        return raw, comments
    raw["task"] = {"frame": frame, "coordinates": ["x"]}
    coordinates, mobility = _moving_components(raw, path, frame)
    raw["task"]["coordinates"] = coordinates
    if all(c.startswith("r") for c in coordinates):
        comments.append(f"task: frame {frame!r}, its turns: the mechanism's {mobility} degrees of freedom turn it "
                        "about a fixed centre")
    else:
        comments.append(f"task: frame {frame!r}, the {mobility} of its pose components the mechanism's {mobility} "
                        "degrees of freedom move best")
    if mobility != len(actuated):
        comments.append(f"note: {mobility} degrees of freedom, {len(actuated)} actuated joints: check actuated")
    return raw, comments


def _moving_components(raw: dict[str, Any], path: Path, frame: str) -> tuple[list[str], int]:
    """The pose components of ``frame`` that the free motions of the closed tree move best, as many as its degrees
    of freedom (translations first), and that number."""
    import pinocchio as pin  # noqa: PLC0415

    from pardyn.description.config import parse_description  # noqa: PLC0415
    from pardyn.description.model import build_model  # noqa: PLC0415
    from pardyn.kinematics.closure import LoopClosures  # noqa: PLC0415 - a description needs its loops closed
    from pardyn.kinematics.rank import assemble, null_space, numeric_rank, select_columns  # noqa: PLC0415

    provisional = dict(raw, task="actuated")
    description = parse_description(provisional, source=path)
    if description.tree_format == "mjcf":
        from dataclasses import replace  # noqa: PLC0415

        from pardyn.description.formats.mjcf import mjcf_closures  # noqa: PLC0415
        from pardyn.description.mjcf import read_mjcf  # noqa: PLC0415

        description = replace(description, closures=mjcf_closures(read_mjcf(path, base=description.base)))
    model = build_model(description)
    closures = LoopClosures(model, description.closures)
    q = pin.neutral(model)
    names = list(model.names[1:])
    for name, value in (raw.get("home") or {}).get("joints", {}).items():
        if name in names:
            q[names.index(name)] = value
    try:
        q = assemble(closures.residual_and_jacobian, q)
    except Exception as error:  # noqa: BLE001 - any failure to close is the user's to see
        raise DescriptionError(f"{path}: the loops of its closing frames do not close from the file's pose: "
                               f"{error}") from error
    free = null_space(closures.jacobian(q), model.nv)
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    jacobian = pin.getFrameJacobian(model, data, model.getFrameId(frame), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    moved = jacobian @ free  # (6, mobility)
    mobility = free.shape[1]
    moving = [k for k in range(6) if np.linalg.norm(moved[k]) > 1e-9]
    if turns_about_a_centre(moved):  # an orientation mechanism: its turns, not the path of an off-centre point
        return [_COMPONENTS[k] for k in sorted(select_columns(moved, [3, 4, 5], mobility))], mobility
    translations = [k for k in moving if k < 3]
    spanned = numeric_rank(moved[translations]) if translations else 0
    chosen = select_columns(moved, translations, min(mobility, spanned))
    chosen += select_columns(moved, [k for k in moving if k >= 3], mobility - len(chosen), start=chosen)
    return [_COMPONENTS[k] for k in sorted(chosen)], mobility


def turns_about_a_centre(moved: np.ndarray) -> bool:
    """Whether the frame's free motions ``moved`` (6, m: velocity, angular velocity in world axes) are turns about
    one fixed point, each as many turns as degrees of freedom: ``v_k = w_k x r`` for one ``r`` (the frame's origin
    from that centre) and the ``w_k`` of rank m (a spherical mechanism's platform)."""
    from pardyn.kinematics.rank import numeric_rank  # noqa: PLC0415

    velocity, angular = moved[:3], moved[3:]
    mobility = moved.shape[1]
    if mobility == 0 or numeric_rank(angular) < mobility:
        return False
    skews = np.concatenate([np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
                            for w in angular.T])  # w x r = [w]x r, stacked over the motions
    stacked = velocity.T.reshape(-1)
    offset = np.linalg.lstsq(skews, stacked, rcond=None)[0]
    gap = np.abs(skews @ offset - stacked).max()
    return bool(gap <= 1e-9 * max(1.0, float(np.abs(moved).max())))


def starting_yaml(path: str | Path, yaml_path: str | Path) -> str:
    """The commented text of the starting YAML for tree file ``path``, to be written at ``yaml_path``."""
    import yaml  # noqa: PLC0415

    raw, comments = starting_description(Path(path).resolve())
    raw["urdf"] = os.path.relpath(Path(path).resolve(), Path(yaml_path).resolve().parent)
    header = [f"# pardyn robot YAML for {Path(path).name}, written by `pardyn robots --init` (edit freely;",
              "# the keys are described in pardyn.description.config). What was decided:"]
    header += [f"#   {comment}" for comment in comments]
    return "\n".join(header) + "\n" + yaml.safe_dump(raw, sort_keys=False, default_flow_style=None)
