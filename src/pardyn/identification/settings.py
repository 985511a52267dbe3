"""The identification pipeline's settings, in five small frozen groups; the defaults are the papers' recipe.

Each step of :mod:`pardyn.identification.pipeline` takes only the group it needs:

* :class:`DataSettings`: what the recordings are (topic, names, units, rotor compensation), read by
  :func:`pardyn.identification.preparation.read_recording`;
* :class:`FilterSettings`: derivative and decimation filters, trimming, slow samples dropped
  (:func:`~pardyn.identification.preparation.filter_recording`, eqs. 39-40);
* :class:`ModelSettings`: which model's equations (standard / case 1 / case 2, exact or simplified,
  coupled motors) and how the closed-loop states are solved;
* :class:`FitSettings`: base parameters, essential parameters, the refusal of a collapsed fit, the
  physically consistent estimate;
* :class:`EstimatorSettings`: the estimator (:mod:`pardyn.identification.estimators`) and its iteration.

:class:`IdentificationSettings` holds the five. It is built from the groups or, as the CLI and the
studies do, from the flat keywords of :data:`FLAT` (``IdentificationSettings(model="case2",
estimator="iv", decimation=10)``); :meth:`IdentificationSettings.replace` takes the same keywords.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from dataclasses import replace as _replace
from typing import TYPE_CHECKING, Any

from pardyn.bags.resample import DEFAULT_MAX_GAP
from pardyn.dynamics.rotor import RotorModel
from pardyn.dynamics.transmission import Transmission
from pardyn.errors import InputError
from pardyn.identification.least_squares import DEFAULT_FIT_TOLERANCE
from pardyn.identification.rotor_compensation import MOTOR_TOPIC

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = [
    "FLAT",
    "MODELS",
    "DataSettings",
    "EstimatorSettings",
    "FilterSettings",
    "FitSettings",
    "IdentificationSettings",
    "ModelSettings",
]

MODELS = {"standard": "standard", "case1": "platform", "case2": "actuators"}
"""Identification models: CLI name -> :class:`pardyn.dynamics.regressor.Regressor` projection."""


@dataclass(frozen=True)
class DataSettings:
    """What the recordings are.

    Attributes:
        topic: the JointState topic of the bags.
        joint_map: ``((name in the data, robot joint or motor name), ...)``: renames the data's joints.
        max_gap: longest interval between stamps that is resampled, in median intervals
            (:func:`pardyn.bags.resample.resample_uniform`).
        effort_delay_s: age of the effort samples (s): an effort stamped ``t`` is the torque at
            ``t - effort_delay_s``. ``None``: half a sampling period, the convention of pardyn's ``sim``
            node and of drives that report the torque held over the control period ending at the stamp;
            0 for drives that report the instantaneous current.
        rotor_model: rotor dynamics compensation (UR5e paper, sections 2-3.1): the efforts become
            ``K_tau i - B thetaddot - tau_f`` from the motor encoders of ``motor_topic``
            (:mod:`pardyn.identification.rotor_compensation`); ``None``: efforts used as recorded.
        motor_topic: JointState topic of the motor-side encoders (rotor positions reflected).
        workers: bags prepared in parallel (:mod:`pardyn.distributed`: worker processes, or the enclosing
            engine); ``None`` or 1: in this process.
    """

    topic: str = "joint_states"
    joint_map: tuple[tuple[str, str], ...] | None = None
    max_gap: float = DEFAULT_MAX_GAP
    effort_delay_s: float | None = None
    rotor_model: RotorModel | None = None
    motor_topic: str = MOTOR_TOPIC
    workers: int | None = None


REST_SPEED = 0.005
"""A revolute joint slower than this (rad/s, after filtering and decimation) is at rest: held by dry friction, its
Coulomb term ``fs sign(qdot)`` flips on encoder noise and cannot give the stiction torque. Measured on a 2R arm with
MuJoCo ``frictionloss`` and a flickering 2**16-count encoder (test_rests.py): 0.002-0.05 rad/s all bring the held-out
error to within a point of the true parameters'. Rests also carry static (gravity) equations: on the TIAGo's real
data the held-out error grows with it (30.0 % kept, 31.3 % at 0.001, 32.4 % at 0.005, 34.9 % at 0.02 rad/s)."""

REVERSAL_WINDOW_S = 0.1
"""With :data:`REST_SPEED`, the time (s) either side of a reversal of a joint with dry friction whose equations are
left out too (the demo's, for a robot with dry friction on passive joints). Measured on the four-bar finger with
MuJoCo ``frictionloss`` on every joint (test_vendor_friction.py; 20 s demo runs recorded in process, seed 7): the
true parameters' held-out error is 7.80 % with rests only, 1.96 % at 0.05 s, 0.42 % at 0.1 s, 0.36 % at 0.15 s,
0.39 % with ``frictionloss`` removed from the file (its noise level); the identified model's 8.10, 2.75, 0.94,
1.01 %. The joint sticks at each reversal until the torque crosses the friction band, and the filters spread that
torque. The price is data: 78 % of that finger's held-out samples at 0.1 s (it reverses every 0.23 s)."""


@dataclass(frozen=True)
class FilterSettings:
    """Derivative estimation, parallel filtering and decimation (eqs. 39-40).

    Attributes:
        cutoff_hz: derivative low-pass cut-off (Hz); ``None``: ``bandwidth_factor`` x bandwidth.
        bandwidth_hz: dynamics bandwidth (Hz); ``None``: from the recorded positions.
        bandwidth_factor: cut-off / bandwidth (5, UR5e paper section 4.1).
        filter_order: Butterworth order of every low-pass.
        decimation: total decimation factor n_d (eq. 40; 20 in the UR5e paper).
        model_rate_hz: rate at which the model is evaluated before the last decimation stage.
        trim_s: time dropped at both ends of each bag (s); ``None``: ``1.5 / cutoff``, at most a tenth of
            a run longer than twice that (:data:`pardyn.identification.preparation.MAX_TRIM_FRACTION`).
        min_speed: per actuated joint, the speed (rad/s, m/s) below which its equations are dropped
            after decimation (:mod:`pardyn.identification.selection`); ``None``: all kept.
        rest_speed: when ``min_speed`` is not given, the speed (rad/s) under which a joint with a Coulomb column
            counts as at rest: the equations it enters there are left out (:data:`REST_SPEED` is the value
            measured to work; off by default: TIAGo's real held-out error rose from 30.00 to 32.44 % with it,
            a dry-friction arm's fell from 7.64 to 5.74 %, floor 6.42 %); a prismatic joint's is scaled as
            :func:`~pardyn.identification.diagnostics.min_motion`; ``None``: rests kept.
        reversal_window_s: with ``rest_speed``, a joint within this time (s) of a reversal of its speed counts as
            at rest too (:func:`~pardyn.identification.selection.near_reversals`): dry friction sticks there, and
            the filters spread the stick torque; 0: only the speed decides.
    """

    cutoff_hz: float | None = None
    bandwidth_hz: float | None = None
    bandwidth_factor: float = 5.0
    filter_order: int = 4
    decimation: int = 20
    model_rate_hz: float = 100.0
    trim_s: float | None = None
    min_speed: tuple[float, ...] | None = None
    rest_speed: float | None = None
    reversal_window_s: float = 0.0

    def stages(self, sample_rate_hz: float) -> tuple[int, int]:
        """``(n_1, n_2)``: the largest divisor n_1 of n_d keeping ``f_m / n_1 >= model_rate_hz``; 1 when the
        data come slower than the model rate (a 100 Hz log whose jittered stamps give 99.99 Hz)."""
        total = self.decimation
        if total < 1:
            raise InputError(f"decimation must be a positive integer, got {total}")
        first = max(d for d in range(1, total + 1)
                    if total % d == 0 and (d == 1 or sample_rate_hz / d >= self.model_rate_hz - 1e-9))
        return first, total // first


@dataclass(frozen=True)
class ModelSettings:
    """The identification model whose equations are written.

    Attributes:
        name: ``"standard"`` (eq. 19), ``"case1"`` (eq. 30), ``"case2"`` (eq. 36) or ``"auto"``
            (standard for non-redundant robots, case 1 for redundant ones, the paper's preference).
        projected: case 2: actuated joints projected on the others (default: the last n - r).
        dynamic_model: ``"exact"`` (every body of the tree) or ``"simplified"`` (the robot YAML's two-end
            bars split between their ends, Codourey 1998: their columns are dropped,
            :mod:`pardyn.dynamics.lumped`).
        transmission: motor-side data -> joint side, and the coupled motors' own regressor columns
            (:mod:`pardyn.dynamics.transmission`); ``None``: the data are on the joint side.
        batch_kinematics: solve a bag's closed-loop states in numpy passes over its samples
            (:mod:`pardyn.kinematics.batch`) where that applies; ``False``: sample by sample, the
            reference path (same equations and stopping rules, answers equal to the solver's tolerance).
    """

    name: str = "auto"
    projected: tuple[str, ...] | None = None
    dynamic_model: str = "exact"
    transmission: Transmission | None = None
    batch_kinematics: bool = True

    def projection(self, robot: Robot) -> str:
        """The :class:`~pardyn.dynamics.regressor.Regressor` projection of this model on ``robot``."""
        redundant = len(robot.actuated_names) > len(robot.task_names)
        model = ("case1" if redundant else "standard") if self.name == "auto" else self.name
        if model not in MODELS:
            raise InputError(f"model must be one of {['auto', *MODELS]}, got {self.name!r}")
        return MODELS[model]

    def model_name(self, robot: Robot) -> str:
        """``standard``, ``case1`` or ``case2`` (``auto`` resolved on ``robot``)."""
        projection = self.projection(robot)
        return next(name for name, value in MODELS.items() if value == projection)


@dataclass(frozen=True)
class FitSettings:
    """Base parameters, essential parameters and what is written.

    Attributes:
        rank_eps: QR rank threshold of eq. (42), relative to the largest |R_jj|.
        r_sigma: stop ratio of the essential-parameter loop.
        essential_tolerance: the essential model's relative error norm may exceed the base
            model's by this fraction at most (0.05: 5 %; the loop stops before it would).
        max_fit_error: a written model (base or essential) whose relative error norm on its
            own data exceeds this (0.5: half the measured torque unexplained) is refused.
        parameters: the model written out and validated: ``"essential"`` (the paper's
            simplified model) or ``"base"`` (every base parameter).
        physical: also estimate physically consistent standard parameters (every body's
            pseudo-inertia positive definite, friction >= 0 unless the data settings' ``rotor_model``
            compensates; :mod:`pardyn.identification.physical`) and report them beside the
            unconstrained estimate.
    """

    rank_eps: float = 1e-8
    r_sigma: float = 10.0
    essential_tolerance: float = DEFAULT_FIT_TOLERANCE
    max_fit_error: float = 0.5
    parameters: str = "base"
    physical: bool = False


@dataclass(frozen=True)
class EstimatorSettings:
    """The estimator of the base parameters (:mod:`pardyn.identification.estimators`) and its options.

    Attributes:
        name: a registered estimator (``pardyn identify --estimator``): ``wls`` (IDIM-WLS, the
            default), ``ols``, ``iv`` (IDIM-IV), ``didim`` (DIDIM); the closed-loop ones simulate
            the model with the controller: ``identify(..., closed_loop=...)``.
        options: the estimators' options by parameter name, ``(("estimator_iterations", 1), ...)``
            (flat keywords ``estimator_<option>``: the closed-loop ones' ``estimator_start``,
            ``estimator_tolerance``, ``estimator_iterations``); the chosen estimator reads its own
            (:func:`pardyn.identification.estimators.estimator_options`), the others' are kept for a
            change of estimator.
    """

    name: str = "wls"
    options: tuple[tuple[str, Any], ...] = ()

    def values(self) -> dict[str, Any]:
        """:attr:`options` as a dict."""
        return dict(self.options)


GROUPS = {"data": DataSettings, "filter": FilterSettings, "model": ModelSettings, "fit": FitSettings,
          "estimator": EstimatorSettings}
"""Group attribute of :class:`IdentificationSettings` -> its class."""


def _flat() -> dict[str, tuple[str, str]]:
    renamed = {("model", "name"): "model", ("estimator", "name"): "estimator"}
    return {renamed.get((group, f.name), f.name): (group, f.name) for group, kind in GROUPS.items() for f in fields(kind)
            if (group, f.name) != ("estimator", "options")}


FLAT: dict[str, tuple[str, str]] = _flat()
"""Flat keyword (the CLI's and the studies' names) -> (group, field): ``model`` is ``model.name``,
``estimator`` is ``estimator.name``, ``decimation`` is ``filter.decimation``... Beside these, an
estimator option's parameter name (``estimator_iterations``) goes to ``estimator.options``."""


def _estimator_option_names() -> tuple[str, ...]:
    from pardyn.identification.estimators import options_of_estimators  # noqa: PLC0415 - estimators import settings' layer

    return tuple(spec.parameter for spec, _ in options_of_estimators())


@dataclass(frozen=True, init=False)
class IdentificationSettings:
    """Every setting of the pipeline, in its group (module docstring).

    ``IdentificationSettings(data=DataSettings(...), fit=FitSettings(...))`` or, flat,
    ``IdentificationSettings(topic="joint_states", physical=True)``; ``model`` and ``estimator``
    take either their group or, flat, the model's or estimator's name. Change settings with
    :meth:`replace` (``settings.replace(estimator="iv")`` keeps the other estimator fields);
    ``dataclasses.replace`` with a flat ``model=``/``estimator=`` name would reset that group's others.
    """

    data: DataSettings = field(default_factory=DataSettings)
    filter: FilterSettings = field(default_factory=FilterSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    fit: FitSettings = field(default_factory=FitSettings)
    estimator: EstimatorSettings = field(default_factory=EstimatorSettings)

    def __init__(self, **given: Any) -> None:
        self._set({name: kind() for name, kind in GROUPS.items()}, given)

    def _set(self, groups: dict[str, Any], given: dict[str, Any]) -> None:
        groups = dict(groups)
        flat: dict[str, dict[str, Any]] = {name: {} for name in GROUPS}
        estimator_options: dict[str, Any] = {}
        for key, value in given.items():
            if key in GROUPS and isinstance(value, GROUPS[key]):
                groups[key] = value
            elif key in FLAT:
                group, name = FLAT[key]
                flat[group][name] = value
            elif key in (options := _estimator_option_names()):
                estimator_options[key] = value
            else:
                raise InputError(f"unknown identification setting {key!r}, expected one of "
                                 f"{[*GROUPS, *FLAT, *options]}")
        if estimator_options:
            flat["estimator"]["options"] = tuple({**groups["estimator"].values(), **estimator_options}.items())
        for name, group in groups.items():
            object.__setattr__(self, name, _replace(group, **flat[name]) if flat[name] else group)

    def replace(self, **given: Any) -> IdentificationSettings:
        """A copy with the groups or flat fields ``given`` changed (the others kept)."""
        copy = object.__new__(IdentificationSettings)
        copy._set({name: getattr(self, name) for name in GROUPS}, given)
        return copy
