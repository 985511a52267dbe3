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

A model whose estimate gives a singular reduced mass matrix ``W^T M W`` (bodies that are not physical: a
poorly excited WLS estimate, the Delta's) or a diverging run raises :class:`ModelSimulationError`; the
pipeline then starts from the physically consistent WLS (``estimator_start="physical"``).

Base parameters are not a rigid-body model: the simulated model takes the
standard parameters closest to the nominal ones that have the estimated base
values,

    chi_st = chi_nom + K^+ (chi_b - K chi_nom)          # (n_st,), K (n_b, n_st) the regrouping

(min-norm correction; ``K chi_st = chi_b``, so the model's inverse dynamics is
exactly the base model's, and the nominal masses keep every body representable
in pinocchio).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.control import ControlLaw, JointReference
from pardyn.errors import InputError, PardynError
from pardyn.identification.base_parameters import BaseParameters

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["ClosedLoopSetup", "ModelSimulationError", "ModelSimulator", "SimulatedRun", "standard_from_base"]


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


class ModelSimulator:
    """Closed-loop runs of the robot's model with given base parameters.

    Args:
        robot: the robot (its model is not modified: the simulation uses a copy).
        layout: the full parameter layout (nominal values), ``robot.nominal_parameters``.
        base: the base parameters of the identification system.
        columns: the standard names of the system's columns (``base.standard_names``), all in ``layout``.
    """

    def __init__(self, robot: Robot, layout: DynamicParameters, base: BaseParameters) -> None:
        self.robot = robot
        self.layout = layout
        self.base = base
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
        from pardyn.simulation.runner import run_closed_loop  # noqa: PLC0415 - the host loop
        from pardyn.plants.measurement import MeasurementModel  # noqa: PLC0415
        from pardyn.plants.pinocchio_plant import PinocchioPlant  # noqa: PLC0415

        params = self.parameters(chi_base, payload=payload)
        model_robot = self.robot
        times = np.asarray(times, dtype=float)
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


def simulated_states(
    simulator: ModelSimulator, chi_base: np.ndarray, setups: Sequence[ClosedLoopSetup],
    starts: Sequence[tuple[float, np.ndarray]], times: Sequence[np.ndarray], payloads: Sequence[bool],
) -> list[SimulatedRun]:
    """:meth:`ModelSimulator.run` for several recordings (one setup, start, times, payload flag each)."""
    return [simulator.run(chi_base, setup, start_time=t0, start=q0, times=t, payload=p)
            for setup, (t0, q0), t, p in zip(setups, starts, times, payloads)]
