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
            if not np.any(beta):
                reason = "no effect on these runs (its column of W is zero)"
            else:
                terms = np.argsort(-np.abs(beta))[:3]
                lumped = " + ".join(f"{beta[i]:.3g}*{names[data.independent[i]]}" for i in terms if beta[i])
                reason = f"collinear on this data: its column of W = {lumped}" + (" + ..." if np.count_nonzero(beta) > 3 else "")
        lost.append((name, reason))
    structural_relations = set(structural.relations)
    return Identifiability(structural=structural, lost=tuple(lost),
                           data_relations=tuple(r for r in data.relations if r not in structural_relations))


def random_states(robot, *, samples: int = 60, seed: int = 0,
                  columns: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random closed states around home: q (M, nv), qdot, qddot (M <= the draws: unsolvable draws skipped).

    Measured coordinates drawn within 0.05 (rad or m) of home, the loops closed by the forward problem,
    random measured rates and accelerations (the model's structure, independent of any record). ``samples``
    draws, or more when ``columns`` (the observation matrix's) needs them: twice as many equations as columns,
    one per actuated joint and draw (a one-motor gripper with 86 standard parameters: 172 draws, not 60).
    """
    from pardyn.errors import PardynError  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    n_a = len(robot.actuated_names)
    samples = max(samples, -(-2 * columns // max(n_a, 1)))
    home = robot.home[robot.measured_indices]
    states = []
    for _ in range(samples):
        readings = home + rng.uniform(-0.05, 0.05, home.shape)
        try:
            q = robot.solve_forward(readings[:n_a], sensed=readings[n_a:] if readings.size > n_a else None,
                                    start=robot.home).q
        except PardynError:
            continue
        qdot, qddot = robot.differential.states_from(q, robot.measured_indices, rng.standard_normal(home.size),
                                                     rng.standard_normal(home.size))
        states.append((q, qdot, qddot))
    q, qdot, qddot = (np.array([state[k] for state in states]) for k in range(3))
    return q, qdot, qddot


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
