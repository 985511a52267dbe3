"""What a robot description amounts to: closure rank, mobility, internal motions, chart.

Run once when a robot loads (:class:`pardyn.robot.Robot`):

1. build the tree (:func:`pardyn.description.model.build_model`) and close its
   loops from the home guess with every declared closure row
   (:func:`pardyn.kinematics.rank.assemble`);
2. *internal motions*: ``N_i = null([K; S_a])``, the motions left when the
   actuated joints are held, less those the task sees (an underactuated robot
   may name a passive joint in its task). Those carried by joints whose whole subtree has
   no inertia (Gepetto's coincident half-joints with placeholder links on a
   loop cut) are **locked**: the joints are removed from the tree
   (``pinocchio.buildReducedModel`` at the assembled configuration), which
   keeps the mass matrix regular and changes no motion of any body with mass.
   Those that carry inertia (a rod spinning about its own axis between two
   ball joints) are **kept** as free chart coordinates: the forward problem
   moves them as little as possible (minimum norm), the task maps hold them
   still, the forward dynamics lets them move;
3. *closure rank*: the independent closure rows, chosen at the assembled
   configuration and checked at four more (:func:`pardyn.kinematics.rank.independent_rows`);
   mobility = nv - rank;
4. the *chart*: ``n`` independent joints for the linear algebra (the task
   joints when the task is made of joints, else chosen among the actuated
   joints first), then the internal coordinates.

Errors name the description file and the key at fault: a task that does not
match the mobility, a task frame that does not move, actuated joints that do
not determine the configuration (a motion the motors and the task leave free
moves bodies with mass), a closure rank that changes inside the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from pardyn.description.config import Closure, RobotDescription
from pardyn.description.model import build_model, joint_names
from pardyn.errors import ConvergenceError, DescriptionError
from pardyn.kinematics.closure import LoopClosures
from pardyn.kinematics.rank import (
    RankChange,
    assemble,
    independent_rows,
    null_space,
    numeric_rank,
    select_columns,
)
from pardyn.kinematics.task import FrameTask

__all__ = ["SAMPLE_SPREAD", "Structure", "analyse_structure"]

SAMPLE_SPREAD = 0.05
"""Size (rad, m) of the random free motions from home at which the closure rank is checked."""


@dataclass(frozen=True)
class Structure:
    """The kinematic structure of a robot, as found numerically at load.

    Attributes:
        model: the tree, with locked joints removed.
        closures: the closures with their independent rows only (``components``).
        declared_rows: closure rows as declared, before the rank selection.
        rank: number of independent closure equations.
        mobility: ``nv - rank``.
        assembled: a closed configuration near the home guess (nv,).
        chart_indices: independent joints (task first, internal last) (n_c,).
        internal_indices: internal coordinates that carry inertia (kept) (k,).
        locked_joints: ``{joint: value}`` removed from the file's tree (the YAML's ``locked:``, then
            the massless internal motions).
        frame_task: the task frame map, if the task is read from a frame.
        notes: what was decided, for the log and ``pardyn robots --describe``.
        description: the description with its frame names resolved on the model
            (:mod:`pardyn.description.frames`: ``joint:ring1``, ``body:ring1``).
    """

    model: pin.Model
    closures: tuple[Closure, ...]
    declared_rows: int
    rank: int
    mobility: int
    assembled: np.ndarray
    chart_indices: np.ndarray
    internal_indices: np.ndarray
    locked_joints: dict[str, float]
    frame_task: FrameTask | None
    notes: tuple[str, ...]
    description: RobotDescription | None = None


def _fail(description: RobotDescription, key: str, message: str) -> DescriptionError:
    return DescriptionError(f"{description.source}: {key}: {message}")


def _guess(model: pin.Model, description: RobotDescription) -> np.ndarray:
    names = joint_names(model)
    q = pin.neutral(model)
    for name, value in description.home_joints.items():
        if name in names:
            q[names.index(name)] = value
    if description.task_frame is None:
        for name, value in zip(description.task_joints, description.home_task):
            q[names.index(name)] = value
    return q


def _assemble(model: pin.Model, description: RobotDescription, closures: LoopClosures, q0: np.ndarray) -> np.ndarray:
    names = joint_names(model)
    fixed, values = [], []
    if description.task_frame is None and description.home_task_given:
        fixed = [names.index(n) for n in description.task_joints]
        values = list(description.home_task)
    try:
        return assemble(closures.residual_and_jacobian, q0, fixed=fixed, values=values)
    except ConvergenceError as error:
        raise _fail(description, "home", f"cannot assemble the robot from the home guess: {error}") from error


def _carries_inertia(model: pin.Model, joint: int) -> bool:
    subtree = model.subtrees[joint]
    return any(
        model.inertias[j].mass > 0.0 or np.any(model.inertias[j].inertia != 0.0) for j in subtree
    ) or bool(np.any(model.armature[[model.joints[j].idx_v for j in subtree]] != 0.0))


def _internal_motions(model: pin.Model, closures: LoopClosures, q: np.ndarray, actuated: list[int]) -> np.ndarray:
    selection = np.zeros((len(actuated), model.nv))
    selection[np.arange(len(actuated)), actuated] = 1.0
    return null_space(np.vstack([closures.jacobian(q), selection]), model.nv)


def _lock_massless(
    model: pin.Model, description: RobotDescription, q: np.ndarray
) -> tuple[pin.Model, np.ndarray, dict[str, float], list[str]]:
    """Lock joints that carry no inertia and parametrize the internal motions that move no body with inertia."""
    names = joint_names(model)
    closures = LoopClosures(model, description.closures)
    actuated = [names.index(n) for n in description.actuated]
    selection = np.zeros((len(actuated), model.nv))
    selection[np.arange(len(actuated)), actuated] = 1.0
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    massive = [  # every body with inertia stays still; (6, nv): pinocchio gives a 1-D array when nv = 1
        pin.getJointJacobian(model, data, j, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).reshape(6, model.nv)
        for j in range(1, model.njoints)
        if model.inertias[j].mass > 0.0 or np.any(model.inertias[j].inertia != 0.0)
    ]
    weightless = null_space(np.vstack([closures.jacobian(q), selection, *massive]), model.nv)
    if weightless.shape[1] == 0:
        return model, q, {}, []
    massless = [i for i in range(model.nv) if i not in actuated and not _carries_inertia(model, i + 1)]
    lock = select_columns(weightless, massless, weightless.shape[1])
    if not lock:
        return model, q, {}, []
    locked = {names[i]: float(q[i]) for i in lock}
    named = sorted(set(locked) & set(description.task_joints + description.sensed))
    if named:
        raise DescriptionError(
            f"{description.source}: task/sensed joints {named} move no body with inertia with the actuators held "
            f"(an internal motion of massless links): check the tree of {description.urdf.name}"
        )
    reduced = pin.buildReducedModel(model, [i + 1 for i in lock], q)
    keep = [i for i in range(model.nv) if i not in lock]
    note = (
        f"locked {sorted(locked)} (internal motions carried by joints without inertia: the mass matrix "
        "would be singular; locking them changes no motion of a body with mass)"
    )
    return reduced, q[keep], locked, [note]


def _sample_configurations(closures: LoopClosures, q: np.ndarray, count: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    free = null_space(closures.jacobian(q), q.size)
    samples = [q]
    for _ in range(count):
        guess = q + free @ rng.uniform(-SAMPLE_SPREAD, SAMPLE_SPREAD, free.shape[1])
        try:
            samples.append(assemble(closures.residual_and_jacobian, guess))
        except ConvergenceError:
            continue
    return samples


def _select_rows(
    description: RobotDescription, closures: LoopClosures, samples: list[np.ndarray], describe
) -> tuple[tuple[Closure, ...], list[str]]:
    try:
        kept = independent_rows([closures.jacobian(x) for x in samples], lambda k: describe(samples[k]))
    except RankChange as error:
        raise _fail(description, "closures", f"the closure set's rank changes inside the workspace: {error}") from error
    selected, notes, start = [], [], 0
    for closure in description.closures:
        rows = [r - start for r in kept if start <= r < start + closure.size]
        start += closure.size
        if not rows:
            notes.append(f"closure {closure.name!r}: every row depends on the others (dropped)")
            continue
        if closure.type != "distance" and len(rows) < len(closure.components):
            components = tuple(closure.components[r] for r in rows)
            names = " ".join(("x", "y", "z", "rx", "ry", "rz")[c] for c in components)
            notes.append(
                f"closure {closure.name!r} ({closure.type}): {len(rows)} independent rows of "
                f"{len(closure.components)} ({names})"
            )
            closure = replace(closure, components=components)
        selected.append(closure)
    return tuple(selected), notes


def _centre_of_mass_velocities(model: pin.Model, q: np.ndarray, motions: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Per joint whose body has mass: its name and the velocity of its centre of mass under each of ``motions``
    (nv, k), shape (3, k)."""
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    velocities = []
    for joint in range(1, model.njoints):
        inertia = model.inertias[joint]
        if inertia.mass <= 0.0:
            continue
        jacobian = pin.getJointJacobian(model, data, joint, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).reshape(6, model.nv)
        lever = data.oMi[joint].rotation @ inertia.lever
        velocity = jacobian[:3] - np.cross(lever, jacobian[3:].T).T  # v_com = v - (R c) x w
        velocities.append((model.names[joint], velocity @ motions))
    return velocities


def _moving_bodies(model: pin.Model, q: np.ndarray, motions: np.ndarray) -> list[str]:
    """Joints whose body (with mass) has its centre of mass moved by ``motions`` (nv, k)."""
    return [name for name, velocity in _centre_of_mass_velocities(model, q, motions) if np.abs(velocity).max() > 1e-7]


def _moving_count(model: pin.Model, q: np.ndarray, motions: np.ndarray) -> int:
    """How many independent combinations of ``motions`` (nv, k) move a centre of mass: ``k`` less the motions
    that move none (a rod spinning about its own axis between two ball joints, kept as an internal coordinate).
    So many joints must be locked for the rest to be internal motions."""
    velocities = _centre_of_mass_velocities(model, q, motions)
    if not velocities:
        return 0
    stacked = np.vstack([velocity for _, velocity in velocities])
    scale = max(1.0, float(np.abs(stacked).max()))
    singular = np.linalg.svd(stacked, compute_uv=False)
    return int(np.sum(singular > 1e-7 * scale))


def _frame_task(description: RobotDescription, model: pin.Model, q: np.ndarray, free: np.ndarray) -> FrameTask | None:
    """The task frame map, checked: the frame moves along its coordinates."""
    if description.task_frame is None:
        return None
    task = FrameTask(model, description.task_frame, description.task_names)
    jacobian = task.jacobian(q)
    rank = numeric_rank(jacobian @ free)
    if rank < task.size:
        raise _fail(
            description, "task",
            f"frame {description.task_frame!r} does not move along {list(description.task_names)} independently "
            f"at the assembled configuration (rank {rank} of {task.size}): choose coordinates in which it moves",
        )
    return task


def _check_locked_mobility(description: RobotDescription, model: pin.Model, closures: LoopClosures,
                           guess: np.ndarray, locked: dict[str, float]) -> None:
    """The YAML's locked joints leave the task its degrees of freedom: a joint locked on a loop takes one from
    the mechanism (a planar leg's passive joint), which the home assembly would only report as loops that do not
    close. The closure rank at the (unassembled) guess is generic: a singular guess can only lower it, so this
    never refuses a mechanism that has the degrees of freedom."""
    n_task = len(description.task_names)
    rank = numeric_rank(closures.jacobian(guess))
    mobility = model.nv - rank
    if mobility < n_task:
        raise _fail(
            description, "locked",
            f"locking {sorted(locked)} leaves {mobility} degrees of freedom ({rank} independent closure equations "
            f"on {model.nv} joints) for {n_task} task coordinates {list(description.task_names)}: a joint locked on "
            "a loop freezes part of the mechanism; lock only joints outside the loops, or joints the mechanism "
            "has to spare (an adaptive finger's coupler at its limit)",
        )


def _check_mobility(
    description: RobotDescription, model: pin.Model, q: np.ndarray, internal: np.ndarray, rank: int, declared: int
) -> None:
    """Task coordinates + internal motions = mobility, and no remaining motion moves a body with mass."""
    n_task = len(description.task_names)
    mobility = model.nv - rank
    head = (
        f"{rank} independent closure equations (of {declared} declared) on {model.nv} joints leave "
        f"{mobility} degrees of freedom"
    )
    moving = _moving_bodies(model, q, internal) if internal.shape[1] else []
    if moving:
        count = _moving_count(model, q, internal)  # not internal.shape[1]: a spinning rod moves no centre of mass
        where = (f"add it to {description.source.name}" if description.description_format == "pardyn" else
                 f"write a pardyn YAML around {description.source.name} (urdf: {description.source.name}, actuated:, "
                 "task:)")
        raise _fail(
            description, "closures",
            f"{head} for {n_task} task coordinates {list(description.task_names)}: the actuated joints "
            f"{list(description.actuated)} do not determine the configuration (with them held, "
            f"{count} motion(s) remain that move the bodies of {moving}); an adaptive mechanism rests on joint "
            f"limits (a finger's coupler), a spring on its rest value: lock {count} of these joints there with "
            f"locked: {{<joint>: lower, upper or a value}}: {where}",
        )
    if n_task + internal.shape[1] != mobility:
        raise _fail(
            description, "closures",
            f"{head}, of which {internal.shape[1]} internal, but 'task' lists {n_task} coordinates "
            f"{list(description.task_names)}",
        )


def _chart(
    description: RobotDescription, names: tuple[str, ...], free: np.ndarray, actuated: list[int], internal: int
) -> tuple[np.ndarray, np.ndarray]:
    """Chart joints (task first, internal last) and the internal ones: rows of ``free`` (nv, mobility) that
    parametrize it (the task joints; for a frame task the actuated joints first)."""
    n_task = len(description.task_names)
    if description.task_frame is None:
        primary = [names.index(n) for n in description.task_joints]
    else:
        others = [i for i in range(len(names)) if i not in actuated]
        primary = select_columns(free, actuated, n_task)
        primary += select_columns(free, others, n_task - len(primary), start=primary)
    candidates = [i for i in range(len(names)) if i not in primary and i not in actuated]
    internal_chart = select_columns(free, candidates, internal, start=primary)
    return np.asarray(primary + internal_chart, dtype=int), np.asarray(internal_chart, dtype=int)


def analyse_structure(description: RobotDescription) -> Structure:
    """Build the tree and find its closure rank, internal motions and chart (module docstring)."""
    locked_by_yaml: dict[str, float] = {}
    resolved: list[RobotDescription] = []
    model = build_model(description, locked=locked_by_yaml, resolved=resolved)
    description = resolved[0]  # its frame names as the model's (a joint named like a link)
    notes = list(description.notes)
    declared = LoopClosures(model, description.closures)
    guess = _guess(model, description)
    if locked_by_yaml:
        _check_locked_mobility(description, model, declared, guess, locked_by_yaml)
    welded = {name: locked_by_yaml[name] for name in description.home_joints if name in locked_by_yaml}
    if welded:  # in the file's tree, but locked: takes it out of the model
        raise _fail(description, "home.joints", f"{sorted(welded)} locked (locked: {welded}): a locked joint is "
                    "welded at its value and is no joint of the model any more; remove it from home.joints")
    q = _assemble(model, description, declared, guess)
    model, q, locked, lock_notes = _lock_massless(model, description, q)
    locked = {**locked_by_yaml, **locked}  # the YAML's locked: values, then the massless internal motions'
    notes += lock_notes
    names = joint_names(model)
    declared = LoopClosures(model, description.closures)

    def describe(x: np.ndarray) -> str:
        return "{" + ", ".join(f"{n}: {v:.6g}" for n, v in zip(names, x)) + "}"

    samples = _sample_configurations(declared, q)
    closures, row_notes = _select_rows(description, declared, samples, describe)
    notes += row_notes
    selected = LoopClosures(model, closures)
    jacobian = selected.jacobian(q)
    rank = numeric_rank(jacobian)
    actuated = [names.index(n) for n in description.actuated]
    free = null_space(jacobian, model.nv)  # (nv, mobility)
    frame_task = _frame_task(description, model, q, free)
    # Motions left with the motors held are task coordinates where the task sees them (an underactuated
    # robot whose task names a passive joint), internal motions where it does not.
    held = _internal_motions(model, selected, q, actuated)
    if frame_task is not None:
        task_rows = frame_task.jacobian(q)
    else:
        task_rows = np.eye(model.nv)[[names.index(n) for n in description.task_joints]]
    internal = held @ null_space(task_rows @ held, held.shape[1]) if held.shape[1] else held
    _check_mobility(description, model, q, internal, rank, declared.size)
    chart, internal_chart = _chart(description, names, free, actuated, internal.shape[1])
    if internal.shape[1]:
        notes.append(
            f"{internal.shape[1]} internal motion(s) with inertia kept, coordinates "
            f"{[names[i] for i in internal_chart]} (held still by the task maps, minimum-norm in the forward problem)"
        )
    return Structure(
        model=model,
        closures=closures,
        declared_rows=declared.size,
        rank=rank,
        mobility=model.nv - rank,
        assembled=q,
        chart_indices=chart,
        internal_indices=internal_chart,
        locked_joints=locked,
        frame_task=frame_task,
        notes=tuple(notes),
        description=description,
    )
