"""Drive gains: efforts logged as motor currents, and the gains that make them joint torques.

A drive logs its current ``i_j`` (A); the joint torque is ``tau_j = g_j i_j`` with ``g_j`` the drive gain,
torque constant x gear ratio (N m/A; N/A for a prismatic joint). The gains are given (a YAML ``drives:
gain:``, the maker's values) or identified jointly with the dynamic parameters, following Gautier & Briot,
"Global identification of joint drive gains and dynamic parameters of robots" (ASME J. Dyn. Syst. Meas.
Control 136(5), 2014; the method of Gautier & Khalil's group; that paper is not among the project's
papers, so the equations are derived here and numbered G1-G3):

* Without payload the inverse dynamic model (Briot et al. 2015, eqs. 19 and 40) in currents reads
  ``W_a chi = V_a g`` where ``V_a`` (r_a, n_a) holds each equation's own joint current in its joint's
  column (block ``j`` of a run: ``i_j`` in column ``j``, zero elsewhere). It is homogeneous: ``(k chi, k g)``
  fits as well as ``(chi, g)`` for any ``k``, so these runs alone fix the gains only up to one scale.
* With a payload whose 10 standard parameters ``chi_L`` are known (mass, centre of mass, inertia: weighed and
  measured), its columns ``W_L`` (eq. 38: ``IDM_l``) move to the right-hand side:
  ``W_b chi + W_L chi_L = V_b g``. Stacked as eq. (49) stacks unloaded and loaded runs::

      [W_a  -V_a] [chi]   [    0       ]
      [W_b  -V_b] [ g ] = [-W_L chi_L  ]                                          (G1)

  the known payload torque ``W_L chi_L`` sets the scale.
* (G1) is solved as any identification system: base parameters by QR (eqs. 42-43; the gain columns first
  in the column order, so that a gain is kept wherever the data fix it), then weighted least squares
  (eq. 48) with each block's ``sigma_j`` from the global OLS residual on that block (the unloaded
  blocks' right-hand side is zero, so a block's own OLS is not defined; OLS alone where some blocks are
  fitted exactly, noise-free data); standard deviations from eq. (47) of the weighted system::

      g_hat, chi_hat = argmin || D^-1 ([W -V] [chi; g] - Y) ||,   D = diag(sigma_j)       (G2)

  The currents sit in ``W`` (errors in variables): their noise biases ``g_hat`` towards zero by about the
  ratio of the noise's to the currents' power after the decimation filter (eq. 40), ~1e-4 for 1 % white
  noise at 1 kHz decimated 20 times; Gautier & Briot's total least squares removes it, at the price of one
  more solve.
* The torques' fit: ``||V g_hat - W chi_hat - W_L chi_L|| / ||V g_hat||`` over every equation (G3).

A gain whose column (G1) leaves dependent (a joint the payload does not load in these runs) is named with
the reason; a nominal gain then stands in for it, or the identification stops with a one-line error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.errors import InputError
from pardyn.identification.base_parameters import base_parameters, symmetric_order
from pardyn.identification.diagnostics import MIN_MOTION, min_motion
from pardyn.identification.least_squares import EXACT_FIT, Estimate, LinearSystem, ols

__all__ = ["GAIN_PREFIX", "DriveGains", "gain_system", "gain_units", "given_gains", "solve_drive_gains"]

GAIN_PREFIX = "gain_"
"""The gain columns' names in (G1): ``gain_<joint>``."""


@dataclass(frozen=True)
class DriveGains:
    """Each actuated joint's drive gain and where it comes from.

    Attributes:
        joints: actuated joints (n_a,).
        gains: ``g_j`` (n_a,), N m/A (N/A for a prismatic joint; ``units``).
        std: their standard deviations (n_a,), eq. (47) of (G2); ``nan`` for given gains.
        units: ``"N m/A"`` or ``"N/A"`` per joint (n_a,).
        source: ``"given"`` or ``"identified"``.
        nominal: the given (maker's) gains an identification is compared with (n_a,), or ``None``.
        torque_fit_error: (G3), identified gains only.
        not_identified: ``((joint, reason), ...)``: gains (G1) leaves dependent (the nominal one used).
        payload_mass_kg: the known payload's mass (identified gains).
    """

    joints: tuple[str, ...]
    gains: np.ndarray
    std: np.ndarray
    units: tuple[str, ...]
    source: str
    nominal: np.ndarray | None = None
    torque_fit_error: float | None = None
    not_identified: tuple[tuple[str, str], ...] = ()
    payload_mass_kg: float | None = None

    def as_dict(self) -> dict:
        """RESULT.json's ``drive_gains``: the efforts' unit, and per joint the gain, its std and unit."""
        rows = {}
        for k, joint in enumerate(self.joints):
            row = {"gain": float(self.gains[k]), "unit": self.units[k],
                   "std": None if not np.isfinite(self.std[k]) else float(self.std[k])}
            if self.nominal is not None:
                row["nominal"] = float(self.nominal[k])
            rows[joint] = row
        return {"efforts_unit": "A", "source": self.source, "joints": rows,
                "torque_fit_error": self.torque_fit_error, "payload_mass_kg": self.payload_mass_kg,
                "not_identified": [{"joint": joint, "reason": reason} for joint, reason in self.not_identified]}

    def lines(self) -> list[str]:
        """One line per joint for the report and the terminal: gain, std, against the nominal gain."""
        out = []
        for k, joint in enumerate(self.joints):
            line = f"{joint}: {self.gains[k]:.5g} {self.units[k]}"
            if np.isfinite(self.std[k]):
                line += f" +- {self.std[k]:.2g} ({100 * self.std[k] / abs(self.gains[k]):.2g} %)"
            if self.nominal is not None:
                line += f", nominal {self.nominal[k]:.5g} ({100 * (self.gains[k] / self.nominal[k] - 1):+.2f} %)"
            out.append(line)
        out += [f"{joint}: not identified ({reason}); the nominal gain is used" for joint, reason in self.not_identified]
        return out

    def summary(self) -> str:
        """One sentence: the efforts' unit and where the gains come from."""
        if self.source == "given":
            return "efforts logged in A, times the given drive gains"
        fit = "" if self.torque_fit_error is None else f", torque fit {100 * self.torque_fit_error:.2f} %"
        return (f"efforts logged in A, times drive gains identified with the dynamic parameters from runs with a "
                f"known {self.payload_mass_kg:g} kg payload (Gautier & Briot 2014; eq. G1 of "
                f"pardyn.identification.drive_gains){fit}")


def gain_units(robot, joints: Sequence[str]) -> list[str]:
    """``"N m/A"`` per revolute joint of ``joints``, ``"N/A"`` per prismatic one."""
    return ["N/A" if travel < MIN_MOTION else "N m/A" for travel in min_motion(robot, joints)]  # MIN_TRAVEL_M: m


def given_gains(robot, gains: Mapping[str, float]) -> DriveGains:
    """The gains of a YAML or of ``--drive-gains`` (every actuated joint's) as a :class:`DriveGains`."""
    joints = tuple(robot.actuated_names)
    values = np.array([gains[joint] for joint in joints], dtype=float)
    return DriveGains(joints, values, np.full(len(values), np.nan), tuple(gain_units(robot, joints)), "given")


def gain_system(unloaded: LinearSystem, loaded: LinearSystem, *, payload: Sequence[int], payload_values: np.ndarray,
                joints: Sequence[str]) -> LinearSystem:
    """(G1) from the runs' systems in currents: the robot's columns, then one ``gain_<joint>`` column per joint.

    Args:
        unloaded, loaded: the decimated systems (eq. 40) of the runs without and with the payload, ``Y`` the
            currents (A), blocks one per run and joint in ``joints`` order (the standard model), the same
            columns in both (the payload's among them).
        payload: the payload's 10 columns (eq. 38) in those systems.
        payload_values: its known standard parameters ``chi_L`` (10,), eq. (2) order.
        joints: the actuated joints, the rows of each run (n_a,).
    """
    n = len(joints)
    if len(unloaded.block_sizes) % n or len(loaded.block_sizes) % n:
        raise InputError(f"the systems' blocks are not one per run and joint ({n} joints)")
    robot_columns = [k for k in range(unloaded.n_parameters) if k not in set(payload)]
    W = np.vstack([unloaded.W[:, robot_columns], loaded.W[:, robot_columns]])
    Y = np.concatenate([np.zeros(unloaded.rows), -loaded.W[:, list(payload)] @ np.asarray(payload_values, float)])
    currents = np.concatenate([unloaded.Y, loaded.Y])
    V = np.zeros((len(currents), n))
    edges = np.concatenate([[0], np.cumsum([*unloaded.block_sizes, *loaded.block_sizes])])
    for block, (start, stop) in enumerate(zip(edges[:-1], edges[1:])):
        V[start:stop, block % n] = currents[start:stop]
    names = [unloaded.parameter_names[k] for k in robot_columns] + [f"{GAIN_PREFIX}{joint}" for joint in joints]
    return LinearSystem(np.hstack([W, -V]), Y, (*unloaded.block_sizes, *loaded.block_sizes), names)


def solve_drive_gains(system: LinearSystem, *, joints: Sequence[str], units: Sequence[str],
                      payload_mass_kg: float, nominal: Mapping[str, float] | None = None,
                      rank_eps: float) -> DriveGains:
    """(G2) on the system of :func:`gain_system`: the gains, their deviations and (G3).

    Raises:
        InputError: a gain the runs do not fix and no nominal gain stands in for it (the message names
            the joints and what to record).
    """
    gains_at = [system.names.index(f"{GAIN_PREFIX}{joint}") for joint in joints]
    others = [k for k in range(system.n_parameters) if k not in set(gains_at)]
    robot_order = np.asarray(others)[symmetric_order([system.names[k] for k in others])]
    base = base_parameters(system.W, names=system.names, order=[*gains_at, *robot_order.tolist()], eps=rank_eps)
    reduced = base.reduce_system(system)
    kept = {base.standard_names[k]: name for k, name in zip(base.independent, base.names)}  # standard -> base name
    fitted = _weighted(reduced, [reduced.names.index(kept[system.names[k]]) for k in gains_at
                                 if system.names[k] in kept], rank_eps * 1e-4)
    fit = dict(zip(fitted.names, zip(fitted.chi, fitted.std)))
    column = {joint: f"{GAIN_PREFIX}{joint}" for joint in joints}
    lost = [joint for joint in joints if kept.get(column[joint]) != column[joint]]  # dependent, or regrouped
    missing = [joint for joint in lost if nominal is None or joint not in nominal]
    if missing:
        raise InputError(f"drive gains of {missing}: the runs with the known payload do not fix them (the payload's "
                         "torque on these joints is too small or they hardly move): record runs that move them "
                         "with the payload on, or give their nominal gains (--drive-gains)")
    gains = np.array([nominal[j] if j in lost else fit[column[j]][0] for j in joints])  # type: ignore[index]
    std = np.array([np.nan if j in lost else fit[column[j]][1] for j in joints])
    torques = -system.W[:, gains_at] @ gains  # V g
    dynamics = sum((reduced.W[:, k] * value for k, (name, value) in enumerate(zip(fitted.names, fitted.chi))
                    if not name.startswith(GAIN_PREFIX)), np.zeros(system.rows))
    error = float(np.linalg.norm(torques - dynamics + system.Y) / max(np.linalg.norm(torques), 1e-300))
    reason = "its column is dependent on the others in these runs: the payload hardly loads this joint"
    return DriveGains(tuple(joints), gains, std, tuple(units), "identified",
                      nominal=None if nominal is None else np.array([nominal.get(j, np.nan) for j in joints]),
                      torque_fit_error=error, not_identified=tuple((j, reason) for j in lost),
                      payload_mass_kg=float(payload_mass_kg))


def _weighted(system: LinearSystem, gains: Sequence[int], rank_eps: float) -> Estimate:
    """(G2): OLS, then each block weighted by ``1 / sigma_j``, its OLS residual's deviation (``r_j - n_b r_j / r``
    degrees of freedom), and solved again; OLS when a block is fitted to round-off of its torques ``V g``."""
    first = ols(system.W, system.Y, names=system.names, block_sizes=system.block_sizes, rank_eps=rank_eps)
    residual = system.Y - first.prediction
    torques = -system.W[:, list(gains)] @ first.chi[list(gains)]
    sigmas = np.empty(len(system.block_sizes))
    exact = False
    for j, part in enumerate(system.block_slices()):
        rows = part.stop - part.start
        dof = rows - system.n_parameters * rows / system.rows
        sigmas[j] = np.linalg.norm(residual[part]) / np.sqrt(max(dof, 1.0))
        exact |= bool(sigmas[j] <= EXACT_FIT * max(np.linalg.norm(torques[part]) / np.sqrt(rows), 1e-300))
    if exact:
        return first
    weights = np.repeat(1.0 / sigmas, system.block_sizes)
    return ols(system.W * weights[:, None], system.Y * weights, names=system.names,
               block_sizes=system.block_sizes, rank_eps=rank_eps)
