"""The identified model in closed loop with the robot's controller: noise-free states for IV and DIDIM.

IDIM-IV (Janot, Vandanjon, Gautier 2014) and DIDIM (Gautier, Janot, Vandanjon
2013) need what the robot *would* have done if it were the model: the direct
dynamic model with the current parameter estimate, driven by the same
controller law and the same reference as on the recording, integrated from the
recording's first sample. Its states ``q_s, qdot_s, qddot_s`` carry no
measurement noise and no filter lag, so the observation matrix evaluated on them
is a valid instrument (IV) or the output-error Jacobian (DIDIM).

The model is pardyn's closed-loop forward dynamics
(:class:`pardyn.plants.pinocchio_plant.PinocchioPlant`: reduced form, RK4 and
projection on the closures, so the closed-loop robots are simulated as such) in
the loop of :func:`pardyn.simulation.runner.run_closed_loop` (the in-process
twin of the ``sim`` and ``controller`` nodes: the same law, velocity filter,
eq. 50 projection, saturation) with perfect encoders.

Cost (what CLOE and ML pay ~30 times a fit): one RK4 step and one projection per control period
(:func:`pardyn.dynamics.forward.held_step`: the command is held over the period, so the integrator runs
at the controller's rate, 4 evaluations of the reduced forward dynamics, the DualV paper's eqs. (9)-(10),
(15)-(16)); the eq. (50) projection of Briot et al. 2015, ``tau* = W (W^T W)^-1 W^T tau``, taken at the
plant's configuration (the encoders are exact: the forward problem on the readings would return it);
the reference evaluated at the control instants once per recording; and for the position output-error
estimators no accelerations afterwards (``run(..., accelerations=False)``). Measured on a 3 s DualV run
(``python bench/estimator_benchmark.py simulation dualv 3``, both CPU slots held): 1.38 ms per control period
before, 0.84 ms with the accelerations, 0.71 ms without.

CLOE and ML's sensitivity of the simulated positions to the base parameters comes from the same run
(:meth:`ModelSimulator.run_linearised`, :func:`position_sensitivity`): the closed loop linearised along it,
~0.1 s per simulated second on the DualV beside ~0.7 s for the run itself. Several estimators on the same
recordings (the benchmark's draws) simulate their common start once (:class:`SharedRuns`).

A model whose estimate gives a singular reduced mass matrix ``W^T M W`` or a diverging run raises
:class:`ModelSimulationError`; the pipeline then starts from the physically consistent WLS
(``estimator_start="physical"``). Bodies that are not physical (a negative mass: the Delta's poorly excited WLS
estimates) are simulated as they are: their mass matrix is :class:`pardyn.dynamics.inertia_terms.InertiaTerms`'s,
right where pinocchio's CRBA is not.

Base parameters are not a rigid-body model: the simulated model takes the
standard parameters closest to the nominal ones that have the estimated base
values,

    chi_st = chi_nom + K^+ (chi_b - K chi_nom)          # (n_st,), K (n_b, n_st) the regrouping

(min-norm correction; ``K chi_st = chi_b``, so the model's inverse dynamics is
exactly the base model's, and the nominal masses keep every body representable
in pinocchio).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.control import ControlLaw, JointReference
from pardyn.errors import InputError, PardynError
from pardyn.identification.base_parameters import BaseParameters

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pardyn.dynamics.forward import ForwardDynamics
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.dynamics.regressor import Regressor
    from pardyn.robot import Robot

__all__ = ["ClosedLoopSetup", "ModelSimulationError", "ModelSimulator", "SharedRuns", "SimulatedRun",
           "position_sensitivity", "standard_from_base"]


class ModelSimulationError(InputError):
    """The model with an estimate cannot be simulated in closed loop (its reduced mass matrix singular, the loops
    not closed, the run diverged): the closed-loop estimators reject that estimate (a Levenberg-Marquardt step) or
    stop at the previous one (an iteration after its first step)."""


@dataclass(frozen=True)
class ClosedLoopSetup:
    """The controller of one recording and the reference it tracked.

    Attributes:
        law: the control law as it ran (its own gains and model: the law is not identified).
        reference: ``reference(t)``: the law's reference at bag time ``t`` (s, the time
            base of the recording's samples).
        rate_hz: control rate (Hz).
        velocity_cutoff_hz: the controller's velocity filter (first-order, Hz).
        project_internal_stress: eq. (50) projection on actuation-redundant robots.
        coulomb_width: ``tanh`` smoothing of the simulated Coulomb friction (rad/s, m/s).
    """

    law: ControlLaw
    reference: Callable[[float], JointReference]
    rate_hz: float = 1000.0
    velocity_cutoff_hz: float = 50.0
    project_internal_stress: bool = True
    coulomb_width: float = 0.02


@dataclass(frozen=True)
class SimulatedRun:
    """The model's closed-loop run at the requested times.

    Attributes:
        t: times (N,) (s, bag time); q, qdot, qddot: tree states (N, nv); tau: actuator torques (N, n_a).
    """

    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    qddot: np.ndarray
    tau: np.ndarray


def standard_from_base(base: BaseParameters, chi_base: np.ndarray, nominal: np.ndarray) -> np.ndarray:
    """Standard parameters (n_st,) closest to ``nominal`` whose base parameters are ``chi_base`` (n_b,)."""
    regrouping = base.regrouping  # (n_b, n_st)
    nominal = np.asarray(nominal, dtype=float)
    correction = np.linalg.lstsq(regrouping, np.asarray(chi_base, dtype=float) - regrouping @ nominal, rcond=None)[0]
    return nominal + correction


class SharedRuns:
    """The model's closed-loop runs at chosen estimates, kept across identifications of the same recordings.

    The closed-loop estimators of one benchmark draw (IV, DIDIM, CLOE, ML: one
    :func:`pardyn.identification.pipeline.identify` call each) all start from the same estimate and would simulate
    the same run once each. Given to every call (``identify(..., shared_runs=...)``), the pipeline marks the start
    of its iteration (:meth:`keep`) and the model's run at a kept estimate is simulated once and handed to the
    others as it is (the same arrays: the figures do not change). Only the kept estimates' runs are held (each is
    the size of a recording); a run is told apart by what it depends on: the simulated standard parameters, the
    robot and the controller setup (the same objects), the start and the sample times.

    Attributes:
        hits: runs handed out again instead of simulated.
    """

    def __init__(self) -> None:
        self._kept: set[bytes] = set()
        self._runs: dict[tuple, tuple] = {}
        self.hits = 0

    def keep(self, chi_base: np.ndarray) -> None:
        """Hold the runs of the model at ``chi_base`` (n_b,) from now on."""
        self._kept.add(np.asarray(chi_base, dtype=float).tobytes())

    def get(self, key: tuple, robot: Robot, setup: ClosedLoopSetup) -> tuple | None:
        """The run held for ``key`` of these ``robot`` and ``setup`` objects, or None."""
        entry = self._runs.get(key)
        if entry is None or entry[0] is not robot or entry[1] is not setup:
            return None
        self.hits += 1
        return entry[2]

    def put(self, key: tuple, robot: Robot, setup: ClosedLoopSetup, chi_base: np.ndarray, run: tuple) -> None:
        """Hold ``run`` for ``key`` when ``chi_base`` is a kept estimate."""
        if np.asarray(chi_base, dtype=float).tobytes() in self._kept:
            self._runs[key] = (robot, setup, run)  # the objects themselves: their ids stay theirs while held


class ModelSimulator:
    """Closed-loop runs of the robot's model with given base parameters.

    Args:
        robot: the robot (its model is not modified: the simulation uses a copy).
        layout: the full parameter layout (nominal values), ``robot.nominal_parameters``.
        base: the base parameters of the identification system.
        shared: runs kept across identifications of the same recordings (:class:`SharedRuns`), or None.
    """

    def __init__(self, robot: Robot, layout: DynamicParameters, base: BaseParameters,
                 shared: SharedRuns | None = None) -> None:
        self.robot = robot
        self.layout = layout
        self.base = base
        self.shared = shared
        missing = [n for n in base.standard_names if n not in layout.names]
        if missing:
            raise InputError(f"base parameters of unknown standard parameters {missing}")
        self._columns = np.array([layout.names.index(n) for n in base.standard_names], dtype=int)
        self._references: dict[tuple, tuple] = {}  # the references at the control instants, per recording

    def parameters(self, chi_base: np.ndarray, *, payload: bool = False) -> DynamicParameters:
        """The standard parameters simulated for ``chi_base`` (payload columns zeroed unless ``payload``)."""
        vector = self.layout.vector().copy()
        vector[self._columns] = standard_from_base(self.base, chi_base, vector[self._columns])
        params = self.layout.with_vector(vector)
        if not payload:
            params = params.without_payload()
        return params

    def _reference(self, setup: ClosedLoopSetup, start_time: float, count: int) -> Callable[[float], JointReference]:
        """``setup.reference(t + start_time)`` at the control instants ``t = k / rate_hz`` (k < count), evaluated
        once per recording: every simulation of the iterations asks for the same instants."""
        key = (id(setup), float(start_time), int(count))
        if key not in self._references:
            period = 1.0 / setup.rate_hz
            self._references[key] = (setup, [setup.reference(k * period + start_time) for k in range(count)])
        samples, rate = self._references[key][1], setup.rate_hz

        def reference(t: float) -> JointReference:
            k = int(round(t * rate))
            return samples[k] if 0 <= k < len(samples) and abs(k - t * rate) < 1e-6 else setup.reference(t + start_time)

        return reference

    def _closed_loop(self, chi_base: np.ndarray, setup: ClosedLoopSetup, start_time: float, start: np.ndarray,
                     times: np.ndarray, payload: bool):
        """The model's closed-loop run over ``times`` (every control instant): the recording and the plant."""
        from pardyn.simulation.runner import run_closed_loop  # noqa: PLC0415 - the host loop
        from pardyn.plants.measurement import MeasurementModel  # noqa: PLC0415
        from pardyn.plants.pinocchio_plant import PinocchioPlant  # noqa: PLC0415

        params = self.parameters(chi_base, payload=payload)
        model_robot = self.robot
        shared = self.shared
        key: tuple = ()
        if shared is not None:
            key = (id(model_robot), id(setup), params.vector().tobytes(), np.asarray(params.gravity).tobytes(),
                   float(start_time), np.asarray(start, dtype=float).tobytes(), times.tobytes())
            found = shared.get(key, model_robot, setup)
            if found is not None:
                return found
        duration = float(times[-1] - start_time)
        period = 1.0 / setup.rate_hz
        try:
            plant = PinocchioPlant(model_robot, params, timestep=period, coulomb_width=setup.coulomb_width)
        except PardynError as error:
            raise ModelSimulationError(f"the model with the current estimate cannot be simulated: {error}") from error
        exact = MeasurementModel(model_robot, counts_per_revolution=2**48, length_resolution=1e-12,
                                 torque_noise=0.0, torque_noise_floor=0.0,
                                 joints=tuple(setup.law.joints) or None, seed=0)
        try:
            recording = run_closed_loop(
                model_robot, plant, setup.law, self._reference(setup, start_time, int(round(duration * setup.rate_hz)) + 1),
                duration_s=duration,
                start=start, measurement=exact, rate_hz=setup.rate_hz, velocity_cutoff_hz=setup.velocity_cutoff_hz,
                project_internal_stress=setup.project_internal_stress, exact_configuration=True,
            )
        except PardynError as error:
            raise ModelSimulationError(f"the model with the current estimate cannot be simulated in closed loop: "
                                       f"{error}") from error
        index = np.clip(np.round((times - start_time) / period).astype(int), 0, len(recording.t) - 1)
        if shared is not None:
            shared.put(key, model_robot, setup, chi_base, (recording, plant, index))
        return recording, plant, index

    def run(
        self, chi_base: np.ndarray, setup: ClosedLoopSetup, *, start_time: float, start: np.ndarray,
        times: np.ndarray, payload: bool = False, accelerations: bool = True,
    ) -> SimulatedRun:
        """Simulate from ``start`` (nv,) at rest at ``start_time`` (s) and sample the states at ``times`` (N,).

        ``accelerations=False``: the run's ``qddot`` is left empty (N, 0) (the position output-error estimators
        read the positions only: one forward-dynamics evaluation per sample saved).

        Raises:
            ModelSimulationError: the model with these parameters cannot be simulated (no inertia
                on some motion, the loops cannot be closed, divergence): one line.
        """
        times = np.asarray(times, dtype=float)
        recording, plant, index = self._closed_loop(chi_base, setup, start_time, start, times, payload)
        return self._sampled(recording, plant, index, times, accelerations)

    @staticmethod
    def _sampled(recording, plant, index: np.ndarray, times: np.ndarray, accelerations: bool) -> SimulatedRun:
        q, qdot = recording.q[index], recording.qdot[index]
        # the torque at t_k as the pipeline reads it from the efforts (half a period late, interpolated):
        # the mean of the commands held before and after t_k
        held = recording.command
        torque = 0.5 * (held[np.maximum(index - 1, 0)] + held[index])
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qdot)) and np.all(np.isfinite(torque))):
            raise ModelSimulationError("the model with the current estimate diverged in closed loop (non-finite "
                                       "states)")
        qddot = np.array([plant.dynamics.accelerations(a, b, c) for a, b, c in zip(q, qdot, torque)]) \
            if accelerations else np.empty((len(q), 0))
        return SimulatedRun(t=times, q=q, qdot=qdot, qddot=qddot, tau=torque)

    def run_linearised(
        self, chi_base: np.ndarray, setup: ClosedLoopSetup, regressor: Regressor, *, start_time: float,
        start: np.ndarray, times: np.ndarray, payload: bool = False,
    ) -> tuple[SimulatedRun, Callable[[], np.ndarray]]:
        """:meth:`run` without accelerations, and the sensitivity of its actuated positions to the base parameters
        from the same run: ``sensitivity() -> S`` (N, n_a, n_b), ``S[k] = d q_a(t_k) / d chi_b``, computed when
        called (a rejected Levenberg-Marquardt candidate never asks) by :func:`position_sensitivity`.

        Raises:
            ModelSimulationError: as :meth:`run`.
            InputError: the law has no gains ``kp``, ``kd`` (the linearised loop reads them).
        """
        gains = _law_gains(setup.law)
        times = np.asarray(times, dtype=float)
        recording, plant, index = self._closed_loop(chi_base, setup, start_time, start, times, payload)
        run = self._sampled(recording, plant, index, times, accelerations=False)
        columns = [regressor.names.index(n) if n in regressor.names else -1 for n in self.base.standard_names]
        if min(columns) < 0:
            raise InputError(f"base parameters of columns the regressor lacks "
                             f"{[n for n, c in zip(self.base.standard_names, columns) if c < 0]}")
        if not payload:  # an unloaded run: the payload's columns are zero
            try:
                carried = set(np.asarray(regressor.payload_columns()).tolist())
            except PardynError:  # no payload body
                carried = set()
            columns = [-1 if c in carried else c for c in columns]

        mapping = np.linalg.pinv(self.base.regrouping)  # d chi_st / d chi_b = K^+ (standard_from_base)

        def sensitivity() -> np.ndarray:
            return position_sensitivity(self.robot, plant.dynamics, regressor, recording.q, recording.qdot,
                                        recording.command, setup, gains, columns, mapping)[index]

        return run, sensitivity


def _law_gains(law: ControlLaw) -> tuple[np.ndarray, np.ndarray]:
    """The law's proportional and derivative gains (n_a,) each."""
    kp, kd = getattr(law, "kp", None), getattr(law, "kd", None)
    if kp is None or kd is None:
        raise InputError(f"the linearised closed loop reads the law's gains kp, kd: {type(law).__name__} has none")
    return np.asarray(kp, dtype=float), np.asarray(kd, dtype=float)


def position_sensitivity(
    robot: Robot, dynamics: ForwardDynamics, regressor: Regressor, q: np.ndarray, qdot: np.ndarray,
    command: np.ndarray, setup: ClosedLoopSetup, gains: tuple[np.ndarray, np.ndarray], columns: Sequence[int],
    mapping: np.ndarray,
) -> np.ndarray:
    """Sensitivity of the actuated positions to the base parameters along a closed-loop run: eq. (L1) of
    :mod:`pardyn.identification.estimators._output_error` (the law's gains, its velocity filter and saturation, the
    drives' friction slope; the model's other derivatives in ``q``, ``qdot`` neglected), trapezoidal steps at the
    control rate with the command's sensitivity held over each period and the friction term implicit.

    Args:
        robot: the robot; dynamics: the model's forward dynamics (its mass matrix).
        regressor: the identification regressor (its tree observation ``W^T Y_t`` in task coordinates).
        q, qdot: the run's states at every control instant (K, nv); command: the torque held after each (K, n_a).
        setup: the controller (rate, velocity filter, limits); gains: its ``kp``, ``kd`` (n_a,).
        columns: each standard column of the base parameters in the regressor's columns (-1: zero, a payload
            column of an unloaded run); mapping: ``d chi_st / d chi_b`` (n_st, n_b) of the simulated model, ``K^+``.

    Returns:
        ``S`` (K, n_a, n_b): ``d q_a(t_k) / d chi_b`` (rad, m per unit of each base parameter).
    """
    period = 1.0 / setup.rate_hz
    count = len(q)
    maps = regressor.velocity_maps(q)  # W (K, nv, n)
    qddot = np.gradient(qdot, period, axis=0)
    tree = regressor.projected_tree(maps, q, qdot, qddot)  # W^T Y_t (K, n, n_st)
    if dynamics.coulomb_width > 0.0:  # the model's Coulomb friction is smoothed: tanh(qdot_j / width), not sign
        for drive in regressor.params.drives:
            name = f"fs_{drive.joint}"
            if name in regressor.names:
                tree[:, :, regressor.names.index(name)] = maps[:, drive.index, :] * np.tanh(
                    qdot[:, drive.index, None] / dynamics.coulomb_width)
    standard = np.where(np.asarray(columns)[None, None, :] >= 0, tree[:, :, np.maximum(columns, 0)], 0.0)
    observation = standard @ mapping  # (K, n, n_b): W^T Y_t K^+ (the base columns where the regrouping is exact)
    mass = np.array([dynamics.terms.mass(q_k) for q_k in q])  # M (K, nv, nv)
    reduced = np.swapaxes(maps, 1, 2) @ mass @ maps  # W^T M W (K, n, n)
    jacobian = maps[:, np.asarray(robot.actuated_indices), :]  # J = W[a] (K, n_a, n)
    # the drives' friction slope d f / d qdot (K, nv): fv + fs / width sech^2(qdot / width), the model's own
    slope = np.broadcast_to(dynamics.model.damping, qdot.shape).copy()
    if dynamics.coulomb_width > 0.0:
        slope += dynamics.model.friction / dynamics.coulomb_width / np.cosh(qdot / dynamics.coulomb_width) ** 2
    try:
        forcing = -np.linalg.solve(reduced, observation)  # -M_x^-1 Y_x (K, n, n_b)
        actuation = np.linalg.solve(reduced, np.swapaxes(jacobian, 1, 2))  # M_x^-1 J^T (K, n, n_a)
        damping = np.linalg.solve(reduced, np.swapaxes(maps, 1, 2) @ (slope[:, :, None] * maps))  # M_x^-1 W^T F' W
    except np.linalg.LinAlgError as error:
        raise ModelSimulationError(f"the reduced mass matrix W^T M W is singular on the run ({error})") from error
    kp, kd = gains
    limits = np.asarray(setup.law.limits, dtype=float)
    active = np.abs(command) < limits * (1.0 - 1e-9)  # a saturated joint's torque does not move with the state
    smoothing = math.exp(-2.0 * math.pi * setup.velocity_cutoff_hz * period)
    n_b = observation.shape[2]
    out = np.zeros((count, jacobian.shape[1], n_b))
    position = np.zeros((jacobian.shape[2], n_b))  # S_x, S_xdot (n, n_b): the start is fixed, at rest
    velocity = np.zeros_like(position)
    identity = np.eye(jacobian.shape[2])
    filtered = np.zeros((jacobian.shape[1], n_b))  # the controller's velocity estimate's sensitivity
    previous = None
    for k in range(count - 1):
        actuated = jacobian[k] @ position
        out[k] = actuated
        if previous is not None:
            filtered = smoothing * filtered + (1.0 - smoothing) / period * (actuated - previous)
        previous = actuated
        torque = -(active[k] * kp)[:, None] * actuated - (active[k] * kd)[:, None] * filtered  # held (n_a, n_b)
        now = actuation[k] @ torque + forcing[k] - damping[k] @ velocity
        after = actuation[k + 1] @ torque + forcing[k + 1]  # the friction term implicit (trapezoid): stiff near rest
        following = np.linalg.solve(identity + 0.5 * period * damping[k + 1], velocity + 0.5 * period * (now + after))
        after = after - damping[k + 1] @ following
        position = position + period * velocity + period**2 / 6.0 * (2.0 * now + after)
        velocity = following
    out[count - 1] = jacobian[count - 1] @ position
    return out


def simulated_states(
    simulator: ModelSimulator, chi_base: np.ndarray, setups: Sequence[ClosedLoopSetup],
    starts: Sequence[tuple[float, np.ndarray]], times: Sequence[np.ndarray], payloads: Sequence[bool],
) -> list[SimulatedRun]:
    """:meth:`ModelSimulator.run` for several recordings (one setup, start, times, payload flag each)."""
    return [simulator.run(chi_base, setup, start_time=t0, start=q0, times=t, payload=p)
            for setup, (t0, q0), t, p in zip(setups, starts, times, payloads)]
