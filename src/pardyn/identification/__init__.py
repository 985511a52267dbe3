"""Identification of dynamic parameters (Briot, Krut, Gautier 2015, Sect. 4; UR5e paper Sects. 3-5).

Pure numerical core, arrays in and arrays out:

* :mod:`.filtering`: band-pass derivative estimation of measured positions,
  parallel filtering and decimation of ``Y`` and ``W`` (eqs. 39-40);
* :mod:`.base_parameters`: base parameters by QR (eqs. 42-43) with the
  symmetric column order of parallel robots, regrouping relations;
* :mod:`.least_squares`: OLS, WLS, standard deviations, essential parameters,
  payload systems (eqs. 44-49);
* :mod:`.metrics`: relative error norms, NMSE, RMS errors.
* :mod:`.physical`: physically consistent standard parameters (pseudo-inertia
  LMIs, semidefinite program; imported on its own: it needs the parameter
  layout of :mod:`pardyn.dynamics.parameters` and cvxpy).

From recordings to RESULT.json (:func:`pardyn.identification.pipeline.identify`, the story):
:mod:`.settings` (five frozen groups), :mod:`.preparation` (read / derivatives / states /
equations of one bag), :mod:`.estimators` (one module per estimator, one registry),
:mod:`.validation`, :mod:`.result` (the result and its JSON).

A typical composition::

    d = estimate_derivatives(t, q, cutoff_hz=cutoff_from_bandwidth(bw))
    # observation matrices W_st (samples, rows, n_st) and inputs Y (samples, rows), e.g.
    # pardyn.dynamics.regressor.Regressor.equations(q, qdot, qddot, torques)
    system = decimate(Y, W_st, factor=20, names=names)
    base = base_parameters(system.W, names=names, order=symmetric_order(names))
    reduced = base.reduce_system(system)
    result = essential_parameters(reduced.W, reduced.Y, names=reduced.names,
                                  block_sizes=reduced.block_sizes)
"""

from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.least_squares import (
    EssentialParameters,
    Estimate,
    LinearSystem,
    Removal,
    condition_number,
    essential_parameters,
    ols,
    payload_system,
    stack_systems,
    wls,
)
from pardyn.identification.filtering import (
    Derivatives,
    check_uniform_sampling,
    cutoff_from_bandwidth,
    decimate,
    decimation_cutoff_hz,
    estimate_derivatives,
    stack_equations,
    zero_phase_lowpass,
)
from pardyn.identification.metrics import (
    ModelQuality,
    columns_from_blocks,
    model_quality,
    nmse,
    nmse_per_joint,
    relative_error_norm,
    relative_error_norms,
    rms_error,
)

__all__ = [
    "BaseParameters",
    "base_parameters",
    "symmetric_order",
    "EssentialParameters",
    "Estimate",
    "LinearSystem",
    "Removal",
    "condition_number",
    "essential_parameters",
    "ols",
    "payload_system",
    "stack_systems",
    "wls",
    "Derivatives",
    "check_uniform_sampling",
    "cutoff_from_bandwidth",
    "decimate",
    "decimation_cutoff_hz",
    "estimate_derivatives",
    "stack_equations",
    "zero_phase_lowpass",
    "ModelQuality",
    "columns_from_blocks",
    "model_quality",
    "nmse",
    "nmse_per_joint",
    "relative_error_norm",
    "relative_error_norms",
    "rms_error",
]
