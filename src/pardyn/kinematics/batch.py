"""Closed-loop kinematics of many samples at once: a whole recording in a few numpy passes.

The per-sample path (:class:`~pardyn.kinematics.closure.LoopClosures`,
:class:`~pardyn.kinematics.solver.ClosureSolver`,
:class:`~pardyn.kinematics.differential.DifferentialKinematics`) pays Python's
per-call overhead on every small array. Here pinocchio runs one kinematic pass
per sample (``computeJointJacobians`` or ``computeJointJacobiansTimeVariation``,
then ``updateFramePlacements``) and only copies out what the closures need:
the closure frames' placements ``p_f`` (F, 3), ``R_f`` (F, 3, 3) and the
world Jacobians ``J = [J_v; J_w]`` (6, nv), ``Jdot`` (6, nv). Everything else
is batched over the samples:

* frame Jacobians, world-aligned (the rows pinocchio's ``getFrameJacobian``
  gives with LOCAL_WORLD_ALIGNED), with ``M_f`` the support columns of the frame::

      J_f = M_f [J_v - [p_f]x J_w ; J_w]                                    # (6, nv)
      Jdot_f = M_f [Jdot_v - [pdot_f]x J_w - [p_f]x Jdot_w ; Jdot_w],  pdot_f = J_f[:3] qdot

* closure errors ``[p_b - p_a, log3(R_b R_a^T)]`` (:mod:`.closure`), ``K`` = rows of
  ``J_b - J_a``, drift ``Kdot qdot`` = rows of ``(Jdot_b - Jdot_a) qdot``;
* Newton's steps (square systems, or the KKT system of redundant readings, as
  :meth:`~pardyn.kinematics.solver.ClosureSolver.newton`) with stacked ``np.linalg.solve``;
* the velocity maps and measured-rate fits of
  :meth:`~pardyn.kinematics.differential.DifferentialKinematics.states_from` (eqs. 9-10, 21-24).

Supported: closures of position/rotation components (not ``distance``) and a
task made of tree joints leading the chart (virtual chains, e.g. the planar
robots); :func:`supports` says so, callers keep the per-sample path otherwise.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.errors import KinematicsError, SampleError
from pardyn.kinematics.closure import LoopClosures
from pardyn.kinematics.solver import FIT_STEP_TOLERANCE, GIVEN_TOLERANCE
from pardyn.progress import progress

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["BatchClosures", "forward_batch", "solve_series", "states_batch", "supports"]

CHUNK = 512
"""Samples per numpy pass (bounds the (chunk, F, 6, nv) temporaries to a few MB)."""

# p @ _SKEW = [p]x = [[0, -p_z, p_y], [p_z, 0, -p_x], [-p_y, p_x, 0]], flattened row-major (9,)
_SKEW = np.zeros((3, 9))
_SKEW[2, 1], _SKEW[1, 2] = -1.0, 1.0
_SKEW[2, 3], _SKEW[0, 5] = 1.0, -1.0
_SKEW[1, 6], _SKEW[0, 7] = -1.0, 1.0


def _skew(vectors: np.ndarray) -> np.ndarray:
    """``[v]x`` (..., 3, 3) of vectors (..., 3)."""
    return (vectors @ _SKEW).reshape(*vectors.shape[:-1], 3, 3)


def _log3(rotations: np.ndarray) -> np.ndarray:
    """``log3`` (..., 3) of rotation matrices (..., 3, 3), rad.

    ``theta = atan2(|s|, (tr R - 1) / 2)`` with ``s = vee(R - R^T) / 2 = sin(theta) u``; angles
    beyond 2.5 rad (where ``s`` loses precision) go through pinocchio's ``log3``.
    """
    s = 0.5 * np.stack([rotations[..., 2, 1] - rotations[..., 1, 2], rotations[..., 0, 2] - rotations[..., 2, 0],
                        rotations[..., 1, 0] - rotations[..., 0, 1]], axis=-1)
    cosine = 0.5 * (rotations[..., 0, 0] + rotations[..., 1, 1] + rotations[..., 2, 2] - 1.0)
    sine = np.sqrt((s * s).sum(axis=-1))
    theta = np.arctan2(sine, cosine)
    small = sine < 1e-8
    factor = np.where(small, 1.0 + theta**2 / 6.0, theta / np.where(small, 1.0, sine))
    out = factor[..., None] * s
    far = cosine < math.cos(2.5)
    if far.any():
        out[far] = [pin.log3(np.ascontiguousarray(r)) for r in rotations[far]]
    return out


def supports(robot: Robot) -> bool:
    """Whether the batch path covers this robot (closed loops, none of them a distance; task joints leading
    the chart; no internal motion)."""
    closures, differential = robot.closures, robot.differential
    return (
        closures.size > 0
        and all(c.type != "distance" for c in closures.closures)
        and not closures.couplings
        and differential._task_is_chart
        and differential.internal == 0
    )


class BatchClosures:
    """The closure equations of :class:`LoopClosures` evaluated on stacks of configurations.

    Args:
        closures: the robot's closure equations (no ``distance`` closure).
    """

    def __init__(self, closures: LoopClosures) -> None:
        if any(c.type == "distance" for c in closures.closures) or closures.couplings:
            raise ValueError("distance closures and joint couplings are not batched")
        model = closures.model
        self.closures = closures
        self.model = model
        self.data = model.createData()
        self.size = closures.size
        frames = sorted({f for pair in closures._frame_ids for f in pair})
        self._a = np.array([frames.index(a) for a, _ in closures._frame_ids], dtype=int)  # (C,)
        self._b = np.array([frames.index(b) for _, b in closures._frame_ids], dtype=int)
        self._picked = closures._picked  # flat indices into (C * 6)
        masks = np.zeros((len(frames), model.nv))  # (F, nv) support columns
        for k, frame in enumerate(frames):
            for joint in model.supports[model.frames[frame].parentJoint]:
                if joint > 0:
                    start = model.joints[joint].idx_v
                    masks[k, start : start + model.joints[joint].nv] = 1.0
        self._masks = masks
        self._frames = frames
        self._bind_views()

    def _bind_views(self) -> None:
        """Live views of the frames' placements in ``self.data`` (pinocchio writes them in place)."""
        placements = self.data.oMf.tolist()
        self._placements = placements  # owners of the live views below
        self._positions = [placements[f].translation for f in self._frames]
        self._rotations = [placements[f].rotation for f in self._frames]

    def __getstate__(self) -> dict:
        # views of this process's data: a copy would read stale placements (workers of pardyn.distributed)
        return {k: v for k, v in self.__dict__.items() if k not in ("_placements", "_positions", "_rotations")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_views()

    def _gather(self, q: np.ndarray, qdot: np.ndarray | None = None):
        """One pinocchio pass per sample: ``p`` (N, F, 3), ``R`` (N, F, 3, 3), ``J`` (N, 6, nv), ``Jdot`` or None."""
        model, data = self.model, self.data
        count, frames = len(q), len(self._frames)
        positions = np.empty((count, frames, 3))
        rotations = np.empty((count, frames, 3, 3))
        jacobians = np.empty((count, 6, model.nv))
        rates = None if qdot is None else np.empty((count, 6, model.nv))
        position_views, rotation_views = self._positions, self._rotations
        for i in range(count):
            if qdot is None:
                pin.computeJointJacobians(model, data, q[i])
            else:
                pin.computeJointJacobiansTimeVariation(model, data, q[i], qdot[i])
                rates[i] = data.dJ
            pin.updateFramePlacements(model, data)
            positions[i] = position_views
            rotations[i] = rotation_views
            jacobians[i] = data.J
        return positions, rotations, jacobians, rates

    def _frame_jacobians(self, positions: np.ndarray, jacobians: np.ndarray) -> np.ndarray:
        """World-aligned frame Jacobians (N, F, 6, nv) from ``p`` (N, F, 3) and ``J`` (N, 6, nv)."""
        angular = jacobians[:, None, 3:, :]  # (N, 1, 3, nv)
        out = np.empty((*positions.shape[:2], 6, self.model.nv))
        out[:, :, :3] = jacobians[:, None, :3, :] - _skew(positions) @ angular
        out[:, :, 3:] = angular
        out *= self._masks[None, :, None, :]
        return out

    def _rows(self, per_frame: np.ndarray) -> np.ndarray:
        """Closure rows (N, m, ...) of per-frame quantities (N, F, 6, ...): rows of ``b - a``."""
        relative = per_frame[:, self._b] - per_frame[:, self._a]  # (N, C, 6, ...)
        return relative.reshape(len(per_frame), -1, *per_frame.shape[3:])[:, self._picked]

    def residual_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``phi`` (N, m) and ``K`` (N, m, nv) of configurations ``q`` (N, nv)."""
        positions, rotations, jacobians, _ = self._gather(q)
        count = len(q)
        errors = np.empty((count, len(self._a), 6))
        errors[:, :, :3] = positions[:, self._b] - positions[:, self._a]
        errors[:, :, 3:] = _log3(rotations[:, self._b] @ rotations[:, self._a].transpose(0, 1, 3, 2))
        residual = errors.reshape(count, -1)[:, self._picked]
        return residual, self._rows(self._frame_jacobians(positions, jacobians))

    def jacobian_and_drift(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``K`` (N, m, nv) and the drift ``Kdot qdot`` (N, m) (:meth:`LoopClosures.drift`)."""
        positions, _, jacobians, rates = self._gather(q, qdot)
        frame_jacobians = self._frame_jacobians(positions, jacobians)  # (N, F, 6, nv)
        velocity = qdot[:, None, None, :]
        point_velocity = (frame_jacobians[:, :, :3] * velocity).sum(axis=-1)  # (N, F, 3), pdot_f
        angular, angular_rate = jacobians[:, None, 3:, :], rates[:, None, 3:, :]
        linear_rate = rates[:, None, :3, :] - _skew(point_velocity) @ angular - _skew(positions) @ angular_rate
        acceleration = np.empty(positions.shape[:2] + (6,))  # (N, F, 6): Jdot_f qdot
        acceleration[:, :, :3] = ((linear_rate * self._masks[None, :, None, :]) * velocity).sum(axis=-1)
        acceleration[:, :, 3:] = ((angular_rate * self._masks[None, :, None, :]) * velocity).sum(axis=-1)
        return self._rows(frame_jacobians), self._rows(acceleration[..., None])[..., 0]


def _chunks(count: int):
    for start in range(0, count, CHUNK):
        yield slice(start, min(start + CHUNK, count))


def forward_batch(
    robot: Robot, readings: np.ndarray, starts: np.ndarray, *, max_iterations: int = 8,
    batch: BatchClosures | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward problem of many samples: Newton from ``starts`` on all of them at once.

    Same equations and stopping rules as :meth:`~pardyn.kinematics.solver.ClosureSolver.newton`
    for the measured coordinates (actuated, then sensed): square Newton, or the KKT
    least-squares fit of redundant readings. No branch or conditioning check: the caller
    checks the samples it needs (a warm start near the answer keeps the branch).

    Args:
        robot: the robot (:func:`supports`).
        readings: measured coordinates (N, k), :attr:`pardyn.robot.Robot.measured_indices` order (rad, m).
        starts: starting configurations (N, nv), each near its answer.

    Returns:
        ``q`` (N, nv), wrapped like the per-sample solver's answers; ``K`` (N, m, nv) at ``q``;
        ``converged`` (N,) bool: the samples whose Newton did not stop within ``max_iterations``
        (their ``q``, ``K`` are meaningless) must be solved another way.
    """
    batch = batch or BatchClosures(robot.closures)
    solver = robot.solver
    indices = robot.measured_indices[: readings.shape[1]]
    dependent, kkt_template, wrap = solver._partition(indices)
    chart, legs = robot.differential.chart_indices, robot.differential.leg_indices
    count, nv, m = len(readings), robot.nv, robot.closures.size
    q = np.array(starts, dtype=float)
    jacobians = np.zeros((count, m, nv))
    converged = np.zeros(count, dtype=bool)
    active = np.arange(count)
    for iteration in range(max_iterations + 1):
        if active.size == 0:
            break
        residual = np.empty((active.size, m))
        jacobian = np.empty((active.size, m, nv))
        for part in _chunks(active.size):
            residual[part], jacobian[part] = batch.residual_and_jacobian(q[active[part]])
        offset = readings[active] - q[active][:, indices]
        wrapped = slice(None) if wrap is None else wrap
        offset[:, wrapped] = (offset[:, wrapped] + math.pi) % (2.0 * math.pi) - math.pi
        residual_norm = np.abs(residual).max(axis=1, initial=0.0)
        done = (residual_norm <= solver.tolerance) & (np.abs(offset).max(axis=1, initial=0.0) <= GIVEN_TOLERANCE)
        if iteration == max_iterations:
            done_rows = np.flatnonzero(done)
        elif kkt_template is None:
            rows = ~done
            rhs = -(residual[rows] + (jacobian[rows][:, :, indices] @ offset[rows][:, :, None])[:, :, 0])
            try:
                step = np.linalg.solve(jacobian[rows][:, :, dependent], rhs[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                step = np.full((int(rows.sum()), len(dependent)), np.nan)
            moving = active[rows]
            q[moving[:, None], indices] += offset[rows]
            q[moving[:, None], dependent] += step
            done_rows = np.flatnonzero(done)
        else:
            # Redundant readings: the KKT fit of the per-sample solver, min |dq_I - offset|^2 s.t.
            # K dq = -phi, solved on the chart: dq = a + W dq_C, a = [0; -K_D^-1 phi], W = [I; -K_D^-1 K_C].
            rows = ~done
            selected = jacobian[rows]
            right = np.concatenate([selected[:, :, chart], residual[rows][:, :, None]], axis=2)
            try:
                eliminated = -np.linalg.solve(selected[:, :, legs], right)  # (n, m, n_c + 1)
                expanded = np.zeros((len(selected), nv, len(chart) + 1))
                expanded[:, chart, np.arange(len(chart))] = 1.0
                expanded[:, legs] = eliminated
                velocity_map, base = expanded[:, indices, :-1], expanded[:, :, -1]  # W_I (n, k, n_c), a (n, nv)
                target = offset[rows] - base[:, indices]
                transposed = velocity_map.transpose(0, 2, 1)
                chart_step = np.linalg.solve(transposed @ velocity_map, transposed @ target[:, :, None])
                step = base + (expanded[:, :, :-1] @ chart_step)[:, :, 0]
            except np.linalg.LinAlgError:
                step = np.full((len(selected), nv), np.nan)
            fitted = (residual_norm[rows] <= solver.tolerance) & (np.abs(step).max(axis=1) <= FIT_STEP_TOLERANCE)
            done[np.flatnonzero(rows)[fitted]] = True
            q[active[rows][~fitted]] += step[~fitted]
            done_rows = np.flatnonzero(done)
        finished = active[done_rows]
        jacobians[finished] = jacobian[done_rows]
        converged[finished] = True
        active = active[~done]
        active = active[np.isfinite(q[active]).all(axis=1)]
    angles = solver.angles
    q[:, angles] = robot.home[angles] + (q[:, angles] - robot.home[angles] + math.pi) % (2.0 * math.pi) - math.pi
    return q, jacobians, converged


def _measured_maps(robot: Robot, jacobians: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Task velocity maps ``W`` (N, nv, n), eq. (9), and pseudo-inverses ``J_I^+`` (N, n, k) of their measured
    rows, eq. (22), from closure Jacobians ``K`` (N, m, nv) (:meth:`DifferentialKinematics.states_from`)."""
    differential = robot.differential
    chart, legs, n_task = differential.chart_indices, differential.leg_indices, differential.n_task
    velocity_map = np.zeros((len(jacobians), robot.nv, len(chart)))
    velocity_map[:, chart, np.arange(len(chart))] = 1.0
    velocity_map[:, legs] = -np.linalg.solve(jacobians[:, :, legs], jacobians[:, :, chart])
    velocity_map = velocity_map[:, :, :n_task]
    measured_map = velocity_map[:, indices]  # J_I (N, k, n)
    transposed = measured_map.transpose(0, 2, 1)
    return velocity_map, np.linalg.solve(transposed @ measured_map, transposed)


def states_batch(
    robot: Robot, q: np.ndarray, jacobians: np.ndarray, velocity: np.ndarray, acceleration: np.ndarray,
    *, batch: BatchClosures | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(qdot, qddot)`` (N, nv) from measured rates, as
    :meth:`~pardyn.kinematics.differential.DifferentialKinematics.states_from` sample by sample.

    Args:
        q: closed configurations (N, nv); jacobians: ``K`` there (N, m, nv).
        velocity, acceleration: measured ``qdot_I``, ``qddot_I`` (N, k), measured-indices order.
    """
    batch = batch or BatchClosures(robot.closures)
    count = len(q)
    indices = robot.measured_indices[: velocity.shape[1]]
    velocity_map, pseudo_inverse = _measured_maps(robot, jacobians, indices)
    qdot = (velocity_map @ (pseudo_inverse @ velocity[:, :, None]))[:, :, 0]  # eq. (21)
    drift = np.empty((count, robot.closures.size))
    for part in _chunks(count):
        _, drift[part] = batch.jacobian_and_drift(q[part], qdot[part])
    legs = robot.differential.leg_indices
    bias = np.zeros((count, robot.nv))
    bias[:, legs] = -np.linalg.solve(jacobians[:, :, legs], drift[:, :, None])[:, :, 0]  # eq. (10)
    task_acceleration = pseudo_inverse @ (acceleration - bias[:, indices])[:, :, None]  # eq. (24)
    return qdot, (velocity_map @ task_acceleration)[:, :, 0] + bias


DEVIATION_LIMIT = 0.05
"""Largest distance (rad, m) between a batched answer and its interpolated start; farther answers are re-solved
sample by sample from their neighbour (Newton may have left the basin of the robot's branch)."""


def _wrapped_difference(robot: Robot, later: np.ndarray, earlier: np.ndarray) -> np.ndarray:
    """``later - earlier`` (..., nv) with angle differences wrapped to (-pi, pi]."""
    difference = later - earlier
    angles = robot.solver.angles
    difference[..., angles] = (difference[..., angles] + math.pi) % (2.0 * math.pi) - math.pi
    return difference


PILOT_SPACING = 5
"""Every this many checked samples, one is solved in turn (a pilot); the checked samples between pilots are
solved at once from them, then checked one by one."""


def _batched_from(
    robot: Robot, batch: BatchClosures, readings: np.ndarray, targets: np.ndarray, known: np.ndarray,
    known_q: np.ndarray, *, limit: float = DEVIATION_LIMIT,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Answers at the samples ``targets`` (sorted) from answers ``known_q`` (K, nv) at the samples ``known``
    (sorted, ``known[0] <= targets[0]``): :func:`forward_batch` started from the blend of the two known
    neighbours' first-order predictions ``q_j + W_j J_I,j^+ (y - y_j)``.

    Returns ``q`` (T, nv), ``K`` (T, m, nv) and a mask (T,) of the answers to keep (converged, within
    ``limit`` of their start).
    """
    _, known_jacobians = batch.residual_and_jacobian(known_q)
    indices = robot.measured_indices[: readings.shape[1]]
    velocity_map, pseudo_inverse = _measured_maps(robot, known_jacobians, indices)
    moves = velocity_map @ pseudo_inverse  # (K, nv, k): dq per change of the readings
    segment = np.clip(np.searchsorted(known, targets, side="right") - 1, 0, len(known) - 1)
    following = np.minimum(segment + 1, len(known) - 1)
    span = np.maximum(known[following] - known[segment], 1)
    fraction = np.where(following == segment, 0.0, np.clip((targets - known[segment]) / span, 0.0, 1.0))[:, None]
    wrap = robot.solver.angles[indices]
    selected = readings[targets]

    def predicted(neighbour: np.ndarray) -> np.ndarray:
        change = selected - readings[known[neighbour]]
        change[:, wrap] = (change[:, wrap] + math.pi) % (2.0 * math.pi) - math.pi
        return known_q[neighbour] + (moves[neighbour] @ change[:, :, None])[:, :, 0]

    base = known_q[segment]
    starts = (1.0 - fraction) * predicted(segment) + fraction * (
        base + _wrapped_difference(robot, predicted(following), base))
    q, jacobians, converged = forward_batch(robot, selected, starts, batch=batch)
    converged &= np.abs(_wrapped_difference(robot, q, starts)).max(axis=1) <= limit
    return q, jacobians, converged


def solve_series(
    robot: Robot, readings: np.ndarray, start: np.ndarray, *, check_every: int = 10, show_progress: bool = False,
    label: str = "closed-loop states",
) -> tuple[np.ndarray, np.ndarray]:
    """Forward kinematics of a smooth series of readings, every ``check_every``-th sample's branch and
    conditioning checked, as a warm-started sample-by-sample solve would check them.

    Three passes: every ``PILOT_SPACING * check_every``-th sample solved in turn (warm-started from a linear
    prediction, checked); the other checked samples at once from them (:func:`_batched_from`), then checked
    one by one (``assembly_mode``, conditioning below ``max_condition``); every other sample at once from the
    checked ones. A sample that does not converge in its batch, fails its check or (unchecked samples) lands
    farther than :data:`DEVIATION_LIMIT` from its start is solved alone from its neighbour, with the solver's
    checks and errors.

    Args:
        readings: measured coordinates (N, k) (actuated, then sensed), rad or m.
        start: a configuration (nv,) near the first sample's answer.

    Returns:
        ``q`` (N, nv) and ``K`` (N, m, nv) there.

    Raises:
        SampleError: a sample has no acceptable answer (its index and the solver's error).
    """
    batch = BatchClosures(robot.closures)
    n_a = len(robot.actuated_names)
    count = len(readings)
    solver = robot.solver

    def solve_one(i: int, warm: np.ndarray, checks: bool) -> np.ndarray:
        reading = readings[i]
        try:
            return robot.solve_forward(reading[:n_a], sensed=reading[n_a:] if reading.size > n_a else None,
                                       start=warm, checks=checks).q
        except KinematicsError as error:
            raise SampleError(i, error) from error

    pilots = np.arange(0, count, check_every * PILOT_SPACING)
    pilot_q = np.empty((len(pilots), robot.nv))
    previous = start
    rows = progress(range(len(pilots)), total=len(pilots), label=label) if show_progress else range(len(pilots))
    for j in rows:
        if j >= 2:  # linear prediction from the two previous answers
            previous = pilot_q[j - 1] + _wrapped_difference(robot, pilot_q[j - 1], pilot_q[j - 2])
        pilot_q[j] = previous = solve_one(int(pilots[j]), previous, True)
    checked = np.arange(0, count, check_every)
    # their branch is checked below, so no distance limit
    checked_q, checked_jacobians, kept = _batched_from(robot, batch, readings, checked, pilots, pilot_q,
                                                       limit=math.inf)
    for j in range(len(checked)):
        q = checked_q[j]
        if kept[j] and not robot.assembly_mode_violations(q) and all(
            condition < solver.max_condition for condition in solver.conditioning(checked_jacobians[j], q).values()
        ):
            continue
        checked_q[j] = solve_one(int(checked[j]), checked_q[j - 1] if j else start, True)
    q, jacobians, kept = _batched_from(robot, batch, readings, np.arange(count), checked, checked_q)
    for i in np.flatnonzero(~kept):  # rare: alone, from the previous answer
        q[i] = solve_one(int(i), q[i - 1] if i else start, True)
        jacobians[i] = robot.closures.jacobian(q[i])
    return q, jacobians
