"""Output error on the positions: what CLOE and maximum likelihood share.

The model with base parameters ``chi`` (n_b,), simulated in closed loop with the recorded controller
and reference (:mod:`pardyn.identification.model_simulation`), gives the actuated positions ``q_s(chi)``
(N, n_a) at the data's sample times. The output error is

    e(chi) = vec(q_m - q_s(chi)) (N n_a,)                                       # Leboutet et al. 2021, eq. (38)

and the estimate minimises ``e^T (I_N (x) Sigma^-1) e`` (``Sigma`` (n_a, n_a): the identity for CLOE,
the joints' noise covariance re-estimated at each step for maximum likelihood) by
Levenberg-Marquardt on the sensitivity ``S = d vec(q_s) / d chi`` (N n_a, n_b):

    (S^T V S + lambda diag(S^T V S)) delta = S^T V e,       V = I_N (x) Sigma^-1    # eq. (39)

``lambda`` is divided by 10 after a step that lowers the cost and multiplied by 10 (the step
retried) after one that does not, or whose model cannot be simulated (its reduced mass matrix
singular: cost infinite, one progress line). Covariance of the estimate ``(S^T V S)^-1`` scaled by the
weighted residual variance (Gauss-Newton's asymptotic covariance).

The sensitivity (``sensitivity`` option, :class:`OutputErrorOptions`):

* ``"linearised"`` (default): the closed loop differentiated along each run, in one simulation. In the task
  coordinates ``x`` (n,) of the closed loops (``qdot = W xdot``, ``J = W[actuated]``) the model is
  ``Y_x(q, qdot, qddot) chi = J^T tau`` with ``Y_x = W^T Y_t`` the regressor in base columns (the identification
  regressor's own, :meth:`pardyn.dynamics.regressor.Regressor.projected_tree`) and ``tau`` the recorded law,
  ``Kp (q_ref - q_a) - Kd (qdot_ref - v_a)`` with ``v_a`` its filtered velocity. Differentiating by ``chi`` with
  ``S_x = d x / d chi`` (n, n_b):

      M_x S_x'' + W^T F' W S_x' = J^T dtau - Y_x,     dtau = -Kp S_a - Kd S_v,     S_a = J S_x      (L1)

  (``M_x = W^T M W`` the reduced mass matrix, ``F'`` (nv, nv) diagonal the drives' friction slope
  ``fv + fs / w sech^2(qdot / w)``, ``S_v`` the velocity filter applied to ``S_a``, ``dtau = 0`` on a saturated
  joint, ``dtau`` held over the control period as the command is). The rest of the model's own derivatives in
  ``q`` and ``qdot`` (Coriolis, gravity stiffness, ``dM/dq``) are neglected: the stiff PD dominates them. The
  start is fixed and at rest (``S_x(0) = S_x'(0) = 0``); the sensitivity of the actuated positions is
  ``S_a`` at the sample times (:func:`pardyn.identification.model_simulation.position_sensitivity`:
  trapezoidal steps at the control rate, the friction term implicit). (L1) is derived here from the
  reduced dynamics (the DualV paper's eqs. 15-16, :mod:`pardyn.dynamics.forward`); no reference stating it was
  checked. The truth of noise-free data is a fixed point whatever ``S`` (below), so the neglected terms change
  the path, not the estimate. Measured: on the five-bar every base column within 0.39 % of forward differences
  of the full simulation (2.8 % without the friction slope); on the DualV (n_b = 28, 2 s of the benchmark's
  trajectory, nominal parameters) 0.21-0.89 % (median 0.40 %; 0.85-3.7 % without the friction slope: its
  Coulomb friction of 0.3 N m smoothed over 0.02 rad/s is 15 N m s/rad near rest); on the Delta (n_b = 43, 1 s,
  differences of relative step 1e-3: at 1e-6 the closures' 1e-12 projection tolerance is their noise) 40 columns
  within 0.18 %, the three ``zz`` of the bars, whose effect is 10^4 times below the largest, within 7.5 %. One
  CLOE fit of the DualV benchmark draw (``python bench/estimator_benchmark.py cost dualv cloe 3``, both CPU
  slots held): 33 s, 3 simulations (the start's and one per step; converged in 2 steps), base-parameter error
  0.97 %; ML 35 s, 3 simulations, 0.87 %; secant, same session: 247 s, 31 simulations, 0.99 %, also 2 steps
  (``... cost dualv cloe 3 secant``). Where the
  simulation gives no linearised loop (a plug-in's, a law without gains ``kp``, ``kd``) the secant sensitivity
  is taken, in one progress line.
* ``"differences"``: forward differences at every step, one closed-loop simulation per base parameter
  (``n_b + 2`` simulations a step at least);
* ``"secant"``: forward differences at the first step only, then Broyden's rank-one update
  after each accepted step ``delta`` (Broyden 1965; Dennis and Schnabel 1996, eq. 8.1.5):

      S+ = S + (Delta q_s - S delta) delta^T / (delta^T delta),    Delta q_s = vec(q_s(chi + delta) - q_s(chi))   (S1)

  with the fresh differences taken again whenever a step on the updated ``S`` lowers no cost. The
  simulation of the accepted candidate is the next step's base run, so a step costs one or two
  simulations instead of ``n_b + 2``. The truth of noise-free data is a fixed point whatever ``S``
  (``S^T V e = 0`` at ``e = 0``), so the estimate is the same; the updated ``S`` changes the path (and
  the reported covariance, from the last ``S``). Measured on the DualV benchmark draw (n_b = 28, one
  closed-loop simulation ~15 s): three steps cost 35 simulations instead of 96. With the cheaper simulation
  (:mod:`pardyn.identification.model_simulation`: positions alone, 8.9 s each) a CLOE fit of that draw takes
  276 s for 31 simulations, base-parameter error 0.99 %
  (``python bench/estimator_benchmark.py cost dualv cloe 3 secant``).

Reference: Q. Leboutet, J. Roux, A. Janot, J. R. Guadarrama-Olvera, G. Cheng, "Inertial parameter
identification in robotics: a survey", Applied Sciences 11(9) 4303, 2021 (CLOE and ML as in its
benchmark BIRDy, there for serial robots); I. D. Landau, A. Karimi, "Recursive algorithms for
identification in closed loop", Automatica 33(8), 1997 (closed-loop output error).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from pardyn.errors import InputError
from pardyn.identification.estimators.protocol import (
    EstimatorContext,
    EstimatorResult,
    IterationOptions,
    SimulatedSystem,
    finish,
    iterate,
)
from pardyn.identification.least_squares import LinearSystem
from pardyn.identification.model_simulation import ModelSimulationError
from pardyn.registry import option

__all__ = ["SENSITIVITIES", "OutputErrorOptions", "position_output_error"]

SENSITIVITIES = ("linearised", "secant", "differences")
"""How the output-error estimators take the sensitivity (module docstring)."""


@dataclass(frozen=True)
class OutputErrorOptions(IterationOptions):
    """The position output-error estimators' options: :class:`IterationOptions` and the sensitivity."""

    sensitivity: str = option(SENSITIVITIES[0], "sensitivity of the simulated positions: the linearised closed loop "
                              "integrated along each run (linearised; secant where the simulation gives none), "
                              "forward differences at the first step then Broyden updates (secant), or forward "
                              "differences at every step", choices=SENSITIVITIES)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sensitivity not in SENSITIVITIES:
            raise InputError(f"estimator_sensitivity must be one of {list(SENSITIVITIES)}, got {self.sensitivity!r}")

RELATIVE_STEP = 1e-6
"""Forward-difference step of the sensitivities, relative to ``max(|chi_i|, scale)``."""
LAMBDA_START = 1e-3
LAMBDA_TRIES = 6
"""Levenberg-Marquardt: the damping to start with, and how many damped retries a step may take."""

Covariance = Callable[[np.ndarray], np.ndarray]
"""``covariance(residuals (N, n_a)) -> Sigma (n_a, n_a)``: the weighting of the joints' errors."""


def _positions(context: EstimatorContext, chi: np.ndarray) -> np.ndarray:
    if context.simulate_positions is not None:
        return np.asarray(context.simulate_positions(chi), dtype=float)
    simulated = context.simulate(chi)
    positions = simulated.positions if isinstance(simulated, SimulatedSystem) else None
    if positions is None:
        raise InputError("the closed-loop simulation gives no positions: the position output-error estimators "
                         "need the simulated actuated positions")
    return np.asarray(positions, dtype=float)


def _cost(residual: np.ndarray, root: np.ndarray) -> float:
    """``e^T (I (x) Sigma^-1) e`` with ``root`` = ``Sigma^-1/2`` (n_a, n_a)."""
    return float(np.sum((residual @ root) ** 2))


def _mode(name: str, context: EstimatorContext, options: OutputErrorOptions) -> str:
    """The sensitivity rule to use: the option's, secant where the simulation gives no linearised loop."""
    mode = getattr(options, "sensitivity", "differences")
    if mode == "linearised" and context.simulate_linearised is None:  # a plug-in's simulation, a law without gains
        mode = "secant"
        if context.progress:
            context.progress(f"{name}: the simulation gives no linearised closed loop: secant sensitivity")
    return mode


class _Runs:
    """The model's last closed-loop runs by ``chi`` (the accepted candidate is the next step's base run), with their
    (L1) sensitivity when ``mode`` is ``"linearised"`` (computed when asked: a rejected candidate never is)."""

    def __init__(self, context: EstimatorContext, mode: str) -> None:
        self.context, self.mode = context, mode
        self.simulated: dict[bytes, tuple] = {}

    def _run(self, chi: np.ndarray) -> tuple:
        key = chi.tobytes()
        if key not in self.simulated:
            if len(self.simulated) > 4:
                self.simulated.clear()
            if self.mode == "linearised":
                out, sensitivity = self.context.simulate_linearised(chi)
                self.simulated[key] = (np.asarray(out, dtype=float), sensitivity)
            else:
                self.simulated[key] = (_positions(self.context, chi), None)
        return self.simulated[key]

    def positions(self, chi: np.ndarray) -> np.ndarray:
        """The simulated actuated positions (N, n_a)."""
        return self._run(chi)[0]

    def linearised(self, chi: np.ndarray) -> np.ndarray:
        """(L1) on the run of ``chi`` (N, n_a, n_b)."""
        return np.asarray(self._run(chi)[1](), dtype=float)


def position_output_error(name: str, system: LinearSystem, context: EstimatorContext, options: OutputErrorOptions,
                          covariance: Covariance) -> EstimatorResult:
    """The output-error estimate of the base parameters on the positions (module docstring).

    Args:
        name: the estimator's registered name (progress lines, the result).
        system: the data system (torque side, base columns): the fit figures and the stopping rule
            (``||W delta|| / ||Y||``, as the other closed-loop estimators).
        context: ``simulate`` (a :class:`SimulatedSystem` with positions), ``positions`` (N, n_a) measured,
            ``start`` (n_b,).
        options: the stopping rule.
        covariance: the joints' error covariance from the current residuals (N, n_a).
    """
    if context.positions is None:
        raise InputError(f"the {name} estimator fits the measured positions: the data gives none")
    measured = np.asarray(context.positions, dtype=float)
    scale = np.maximum(np.abs(np.asarray(context.start, dtype=float)), 1e-3)
    state = {"lambda": LAMBDA_START}
    last: dict[str, np.ndarray | float] = {}

    def weighting(residual: np.ndarray) -> np.ndarray:
        sigma = covariance(residual)
        try:
            return np.linalg.cholesky(np.linalg.inv(sigma))  # L L^T = Sigma^-1: ||e L||^2 = e^T Sigma^-1 e
        except np.linalg.LinAlgError as error:
            raise InputError(f"the {name} estimator's error covariance is singular ({error}): a joint's simulated "
                             "and measured positions agree exactly") from error

    mode = _mode(name, context, options)
    secant = mode == "secant"
    runs = _Runs(context, mode)
    positions = runs.positions

    def afresh(chi: np.ndarray, base: np.ndarray) -> np.ndarray:
        """``d vec(q_s) / d chi`` (N n_a, n_b) afresh: (L1) on the run of ``chi``, or forward differences."""
        if mode == "linearised":
            return runs.linearised(chi).reshape(base.size, chi.size)
        return differences(chi, base)

    def differences(chi: np.ndarray, base: np.ndarray) -> np.ndarray:
        """Forward differences ``d vec(q_s) / d chi`` (N n_a, n_b), one simulation per parameter."""
        steps = RELATIVE_STEP * np.maximum(np.abs(chi), scale)
        out = np.empty((base.size, chi.size))
        for i, h in enumerate(steps):
            shifted = chi.copy()
            shifted[i] += h
            out[:, i] = ((_positions(context, shifted) - base) / h).ravel()
        return out

    def step(chi: np.ndarray) -> tuple[np.ndarray, float, str]:
        base = positions(chi)
        if base.shape != measured.shape:
            raise InputError(f"simulated positions {base.shape} do not match the measured {measured.shape}")
        residual = measured - base
        root = weighting(residual)
        cost = _cost(residual, root)
        fresh = not secant or "sensitivity" not in last
        if fresh:
            last["sensitivity"] = afresh(chi, base)
        new, new_cost = chi, cost
        while True:
            raw = np.asarray(last["sensitivity"])  # d vec(q_s) / d chi (N n_a, n_b), unweighted
            sensitivity = np.einsum("tan,ab->tbn", raw.reshape(*base.shape, chi.size), root).reshape(raw.shape)
            gradient_system = sensitivity.T @ sensitivity
            right = sensitivity.T @ (residual @ root).ravel()
            for _ in range(LAMBDA_TRIES):
                damped = gradient_system + state["lambda"] * np.diag(np.diag(gradient_system))
                candidate = chi + linalg.solve(damped, right, assume_a="pos")
                try:
                    candidate_cost = _cost(measured - positions(candidate), root)
                except ModelSimulationError as error:  # a model without inertia on some motion: step refused
                    candidate_cost = np.inf
                    if context.progress:
                        context.progress(f"{name}: step rejected (lambda {state['lambda']:.3g}): {error}")
                if candidate_cost <= cost:
                    new, new_cost = candidate, candidate_cost
                    state["lambda"] = max(state["lambda"] / 10.0, 1e-12)
                    break
                state["lambda"] *= 10.0
            if new is not chi or fresh:
                break
            fresh = True  # no step lowered the cost on the updated sensitivity: take it afresh, once
            state["lambda"] = LAMBDA_START
            last["sensitivity"] = differences(chi, base)
        if secant and new is not chi:  # (S1)
            delta = new - chi
            last["sensitivity"] = raw + np.outer((positions(new) - base).ravel() - raw @ delta, delta) / (delta @ delta)
        rows = residual.size
        variance = new_cost / max(rows - chi.size, 1)
        last.update(covariance=variance * np.linalg.inv(gradient_system), sigma=float(np.sqrt(variance)),
                    condition=float(np.linalg.cond(sensitivity)))
        motion = max(float(np.linalg.norm(measured - measured.mean(axis=0))), 1e-300)
        error = float(np.linalg.norm(residual)) / motion
        return new, error, f"position error {100 * error:.3g} % of the motion"

    chi, changes, errors = iterate(name, system, context, options, step)
    estimate = finish(system, chi, last["covariance"], last["sigma"], name, context.block_sigmas, last["condition"])
    return EstimatorResult.of_iteration(estimate, name, changes, errors, options)


def identity_covariance(residual: np.ndarray) -> np.ndarray:
    """CLOE's weighting: every joint alike (n_a, n_a)."""
    return np.eye(residual.shape[1])


def estimated_covariance(residual: np.ndarray) -> np.ndarray:
    """Maximum likelihood's weighting: the residuals' covariance ``E^T E / N`` (n_a, n_a), floored at
    1e-12 of its largest variance so that a joint the model matches exactly does not take all the weight."""
    sigma = residual.T @ residual / max(residual.shape[0], 1)
    largest = float(np.max(np.diag(sigma)))
    if not largest > 1e-30:  # the model reproduces the data: no noise to weigh by
        return np.eye(residual.shape[1])
    return sigma + 1e-12 * largest * np.eye(residual.shape[1])
