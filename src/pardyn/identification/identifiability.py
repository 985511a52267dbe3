"""Which parameters the runs identify: the data's base parameters beside the model's structural ones.

The model's structure fixes which combinations of standard parameters can ever be
identified (the structural base parameters: QR of eq. 42 on random states of the
model, :func:`pardyn.identification.online.structural_base`). The runs decide which
of those they identify: a joint that hardly moves, a joint whose efforts are zero in
every run, or a motion on which two columns happen to be collinear make more columns
of the data's observation matrix dependent (the same QR on the runs' own ``W``, the
base parameters the pipeline estimates). Each structural base parameter the data do
not identify on its own is named with the reason, one line each; the rest is
identified (the data's regrouping relations say what the lost ones are lumped with).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.diagnostics import MIN_MOTION

__all__ = ["MIN_MOTION", "Identifiability", "compare_bases", "exact_blocks", "random_states", "structural_base"]

@dataclass(frozen=True)
class Identifiability:
    """The data's base parameters against the model's structural ones.

    Attributes:
        structural: base parameters of the model (random states).
        lost: ``((standard parameter, reason), ...)``: structural base parameters the runs do not
            identify on their own.
        data_relations: the data's regrouping relations that the structure does not have.
    """

    structural: BaseParameters
    lost: tuple[tuple[str, str], ...]
    data_relations: tuple[str, ...]

    def notes(self) -> list[str]:
        """One line per parameter the runs cannot identify, and a summary line."""
        if not self.lost:
            return []
        lines = [f"not identifiable from these runs: {name}: {reason}" for name, reason in self.lost]
        lines.append(f"{len(self.lost)} of the model's {self.structural.n_base} structural base parameters are not "
                     "identified on their own by these runs (above); the others are")
        return lines


def _owner(name: str, body_joints: Mapping[str, str], joints: Sequence[str]) -> str | None:
    """The joint a standard parameter belongs to: a drive's own joint, or the joint carrying the body."""
    _, _, rest = name.partition("_")
    if rest in joints:
        return rest
    return body_joints.get(rest)


def compare_bases(structural: BaseParameters, data: BaseParameters, *, motion: Mapping[str, float],
                  silent: Sequence[str] = (), body_joints: Mapping[str, str] | None = None,
                  min_motion: Mapping[str, float] | None = None) -> Identifiability:
    """Name each structural base parameter that is dependent on the data, and why.

    Args:
        structural: the model's base parameters; data: the runs' (same standard names and order).
        motion: peak-to-peak motion of each joint over the runs (rad or m), tree joints included.
        silent: actuated joints whose efforts are zero (or constant) in every run.
        body_joints: body name -> the joint that carries it (for the body's parameters).
        min_motion: joint -> the motion under which it hardly moves (rad or m,
            :func:`pardyn.identification.diagnostics.min_motion`); :data:`MIN_MOTION` for joints not given.

    The reason is the first that applies: the parameter's joint hardly moves
    (``min_motion``), its efforts are zero in every run, it has no effect on the
    data (a zero column), or it is collinear on this data with the columns named
    (the largest terms of its data relation ``W_c = W_b beta``).
    """
    body_joints = dict(body_joints or {})
    limits = dict(min_motion or {})
    joints = tuple(motion)
    names = structural.standard_names
    data_independent = set(data.independent.tolist())
    dependent_index = {int(c): j for j, c in enumerate(data.dependent)}
    lost = []
    for column in structural.independent:
        column = int(column)
        if column in data_independent:
            continue
        name = names[column]
        joint = _owner(name, body_joints, joints)
        if joint is not None and motion.get(joint, np.inf) < limits.get(joint, MIN_MOTION):
            reason = f"joint {joint} hardly moves ({motion[joint]:.3g} rad or m peak to peak)"
        elif joint is not None and joint in silent:
            reason = f"the efforts of joint {joint} are zero in every run"
        else:
            beta = data.beta[:, dependent_index[column]]
            if not np.any(beta) and data.diagonal[column] == 0.0:
                reason = "no effect on these runs (its column of W is zero)"
            elif not np.any(beta):
                reason = (f"too small an effect on these runs: its column of the weighted W is "
                          f"{data.diagonal[column]:.2g} of the largest, under the rank threshold (eq. 42)")
            else:
                terms = np.argsort(-np.abs(beta))[:3]
                lumped = " + ".join(f"{beta[i]:.3g}*{names[data.independent[i]]}" for i in terms if beta[i])
                reason = f"collinear on this data: its column of W = {lumped}" + (" + ..." if np.count_nonzero(beta) > 3 else "")
        lost.append((name, reason))
    structural_relations = set(structural.relations)
    return Identifiability(structural=structural, lost=tuple(lost),
                           data_relations=tuple(r for r in data.relations if r not in structural_relations))


SPAN_STEPS = 5
"""A closed loop's structural states are reached by continuation: each random target of the excitation box
in this many steps from the previous state (each solve starts from the last)."""


def random_states(robot, *, samples: int = 60, seed: int = 0,
                  columns: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random closed states spanning the workspace: q (M, nv), qdot, qddot (M <= the draws: unreached draws skipped).

    The model's structure, independent of any record, must not be judged near one pose: around a singular
    home (a 7-joint arm straight up) columns regroup that regroup nowhere else. A chain without loops:
    the measured joints drawn over their ranges (a continuous joint's over a turn). A closed loop: the task
    coordinates drawn in the excitation box around home (the YAML's ``excitation: amplitude``, else the
    derived one, :func:`pardyn.excitation.bounds.excitation_settings`), each reached from the previous
    state by continuation (:data:`SPAN_STEPS`), so that the loops stay on home's branch. Random measured
    rates and accelerations. ``samples`` draws, or more when ``columns`` (the observation matrix's) needs
    them: twice as many equations as columns, one per actuated joint and draw.
    """
    rng = np.random.default_rng(seed)
    n_a = len(robot.actuated_names)
    samples = max(samples, -(-2 * columns // max(n_a, 1)))
    draw = _serial_draws if robot.closures.size == 0 else _closed_draws
    states = []
    for q in draw(robot, rng, samples):
        measured = len(robot.measured_indices)
        qdot, qddot = robot.differential.states_from(q, robot.measured_indices, rng.standard_normal(measured),
                                                     rng.standard_normal(measured))
        states.append((q, qdot, qddot))
    q, qdot, qddot = (np.array([state[k] for state in states]) for k in range(3))
    return q, qdot, qddot


def _serial_draws(robot, rng: np.random.Generator, samples: int):
    """A chain's states: every measured joint uniform over its limits (+-pi when continuous, home +-0.5 m for
    an unlimited prismatic joint)."""
    from pardyn.errors import PardynError  # noqa: PLC0415

    indices = robot.measured_indices
    lower = np.array(robot.model.lowerPositionLimit[indices], dtype=float)
    upper = np.array(robot.model.upperPositionLimit[indices], dtype=float)
    home = robot.home[indices]
    prismatic = np.array([robot.model.joints[robot.model.getJointId(name)].shortname().startswith("JointModelP")
                          for name in robot.measured_names])
    unlimited = ~(np.isfinite(lower) & np.isfinite(upper) & (upper > lower) & (upper - lower < 1e6))
    reach = np.where(prismatic, 0.5, np.pi)
    lower = np.where(unlimited, home - reach, lower)
    upper = np.where(unlimited, home + reach, upper)
    n_a = len(robot.actuated_names)
    for _ in range(samples):
        readings = rng.uniform(lower, upper)
        try:
            yield robot.solve_forward(readings[:n_a], sensed=readings[n_a:] if readings.size > n_a else None,
                                      start=robot.home, checks=False).q
        except PardynError:
            continue


def _closed_draws(robot, rng: np.random.Generator, samples: int):
    """A closed loop's states: task targets uniform in the excitation box, each reached by continuation."""
    from pardyn.errors import PardynError  # noqa: PLC0415
    from pardyn.excitation.bounds import excitation_settings  # noqa: PLC0415

    home_task = robot.task_values(robot.home)
    box = np.asarray(excitation_settings(robot).amplitude, dtype=float)
    q, task = robot.home.copy(), home_task.copy()
    for _ in range(samples):
        target = home_task + rng.uniform(-box, box)
        state = q
        try:
            for step in range(1, SPAN_STEPS + 1):
                state = robot.solve_inverse(task + (target - task) * step / SPAN_STEPS, start=state).q
        except PardynError:
            continue  # out of reach or singular on the way: the next target starts from the last state
        q, task = state, target
        yield q


def structural_base(robot, regressor, names: Sequence[str], *, samples: int = 60, seed: int = 0,
                    eps: float = 1e-8) -> BaseParameters:
    """The model's base parameters on the identification system's columns ``names`` (:func:`random_states`).

    A column of ``names`` the regressor does not have (a coupled motor's) is zero here: it is then never
    a structural base parameter, so never reported lost.
    """
    own = regressor.matrix(*random_states(robot, samples=samples, seed=seed, columns=len(names)))  # (M, rows, n_st)
    index = {name: k for k, name in enumerate(regressor.names)}
    columns = np.zeros((*own.shape[:2], len(names)))
    for k, name in enumerate(names):
        if name in index:
            columns[:, :, k] = own[:, :, index[name]]
    return base_parameters(columns.reshape(-1, len(names)), names=list(names), order=symmetric_order(names), eps=eps)


def exact_blocks(system, *, rank_eps: float = 1e-8) -> list[int]:
    """The blocks fitted exactly by their own least squares (error deviation at round-off level, as eq. 48's
    weights see it: :data:`pardyn.identification.least_squares.EXACT_FIT`), when the others are not."""
    from pardyn.identification.least_squares import EXACT_FIT  # noqa: PLC0415

    exact = []
    for k, part in enumerate(system.block_slices()):
        a, b = system.W[part], system.Y[part]
        solution = np.linalg.lstsq(a, b, rcond=rank_eps)[0]
        scale = float(np.linalg.norm(b) / np.sqrt(max(len(b), 1)))
        if np.linalg.norm(a @ solution - b) / np.sqrt(max(len(b), 1)) <= EXACT_FIT * scale:
            exact.append(k)
    return exact if len(exact) < len(system.block_sizes) else []
