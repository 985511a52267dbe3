"""Problems of measured data, said in words for the report rather than hidden in the figures.

Real logs (the TIAGo's ``joint_states``) carry problems the fit error alone does
not explain: efforts a driver does not report (exactly 0 most of the time, or
all zero: a planned trajectory logged without torques), efforts in another unit
than the model's (a current instead of N or N m, a gear ratio), coarse
quantization, joints that hardly move, efforts stamped late, friction the model
does not have (Coulomb's ``fs sign(qdot)`` is wrong near zero speed: stiction,
Stribeck), identified values no body can have. Each check gives one sentence
naming the run, the joint and the measured figure, and what to do when the
command line can do it; none stops the identification.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["MIN_MOTION", "MIN_TRAVEL_M", "delay_note", "effort_delay_s", "effort_notes", "efforts_all_zero",
           "min_motion", "physical_notes", "scale_notes", "speed_notes"]

ZERO_FRACTION = 0.2
"""Efforts exactly 0 in more than this fraction of the samples: probably not reported."""

QUANTUM_FRACTION = 0.01
"""Effort resolution above this fraction of the effort's RMS is worth saying."""

SCALE_RANGE = (0.5, 2.0)
"""Measured efforts over the nominal model's torques (least-squares factor) outside this range: another unit?"""

MIN_MOTION = 0.05
"""A revolute joint moving less than this (rad, peak to peak) is hardly excited (its speed is filter noise)."""

MIN_TRAVEL_M = 1e-3
"""A prismatic joint moving less than this (m, peak to peak) is hardly excited: the same number of encoder steps
(about 1000) as :data:`MIN_MOTION` at 2**17 counts per turn (4.8e-5 rad a step), for a 1 um linear encoder
(:mod:`pardyn.plants.measurement`'s defaults). A Stewart platform's legs move about 1 cm for 10 deg of the platform:
0.05 m would call every leg of a well-excited hexapod run still."""


def min_motion(robot, names: Sequence[str]) -> np.ndarray:
    """The motion under which each joint of ``names`` hardly moves (n,): :data:`MIN_TRAVEL_M` (m) for a
    prismatic joint (pinocchio's PX, PY, PZ, PrismaticUnaligned), :data:`MIN_MOTION` (rad) otherwise."""
    model = robot.model
    kinds = [model.joints[model.getJointId(name)].shortname().removeprefix("JointModel") for name in names]
    return np.array([MIN_TRAVEL_M if kind.startswith("P") else MIN_MOTION for kind in kinds])


def effort_notes(label: str, names: Sequence[str], efforts: np.ndarray, positions: np.ndarray,
                 thresholds: Sequence[float] | None = None) -> list[str]:
    """Zero efforts, quantization and motion of each joint of one run.

    Args:
        label: the run (file or bag name).
        names: joints (n,); efforts: raw efforts (N, n) (N m, N); positions: (N, n) (rad, m).
        thresholds: motion under which each joint hardly moves (n,) (rad, m; :func:`min_motion`);
            :data:`MIN_MOTION` for every joint when not given.
    """
    limits = np.full(len(names), MIN_MOTION) if thresholds is None else np.asarray(thresholds, dtype=float)
    if efforts_all_zero(efforts):
        return [f"{label}: efforts all zero (a planned trajectory logged without torques?): run excluded"]
    notes = []
    for j, name in enumerate(names):
        column = efforts[:, j]
        zero = float(np.mean(column == 0.0))
        if np.ptp(column) == 0.0:
            notes.append(f"{label}: {name}: effort constant at {column[0]:.6g} in every sample (not measured?): "
                         "its equations are left out")
            continue
        if zero > ZERO_FRACTION:
            notes.append(f"{label}: {name}: effort exactly 0 in {100 * zero:.0f} % of the samples (not reported by "
                         "the driver?): its equations carry little information")
        rms = float(np.sqrt(np.mean(column**2)))
        levels = np.unique(column)
        if rms > 0 and levels.size > 1:
            quantum = float(np.min(np.diff(levels)))
            if quantum > QUANTUM_FRACTION * rms:
                notes.append(f"{label}: {name}: efforts quantized to {quantum:.3g} ({100 * quantum / rms:.1f} % of "
                             f"their RMS {rms:.3g}; {levels.size} distinct values)")
        motion = float(np.ptp(positions[:, j]))
        if motion < limits[j]:
            notes.append(f"{label}: {name}: moves {motion:.3g} (rad or m) peak to peak only: hardly excited")
    return notes


def efforts_all_zero(efforts: np.ndarray) -> bool:
    """Every effort of a run (N, n) exactly 0: nothing recorded (a planned trajectory, a driver that sends none)."""
    return bool(efforts.size) and not np.any(efforts)


TOO_SMALL = 0.2
"""Recorded efforts whose RMS is below this fraction of the nominal model's: another unit, whatever their shape."""

SHAPE_CORRELATION = 0.9
"""The nominal model explains a joint's recorded effort *shape* when the cosine of the two signals (N-vectors,
gravity's offset included) exceeds this in magnitude."""


def scale_notes(label: str, names: Sequence[str], measured: np.ndarray, nominal: np.ndarray) -> list[str]:
    """Measured efforts against the nominal (CAD) model's torques on the same motion, per joint.

    Where the nominal torque has the recorded effort's shape (cosine above
    :data:`SHAPE_CORRELATION`: gravity and inertia dominate, which a CAD model
    gets right), the least-squares factor ``<measured, nominal> / <nominal, nominal>``
    far from 1 says the efforts are in another unit or scaled by a gear ratio:
    the identified parameters are then in that unit too. Joints the nominal
    model does not explain (friction it lacks, a wrist whose nominal torque is
    tiny) say nothing about units and are skipped, unless their efforts' RMS is
    below :data:`TOO_SMALL` times the nominal one: friction adds to the torque
    the masses need, it cannot remove it.

    Args:
        measured, nominal: (N, n) efforts and nominal-model torques on the same samples.
    """
    notes = []
    for j, name in enumerate(names):
        expected = float(np.sqrt(np.mean(nominal[:, j] ** 2)))
        seen = float(np.sqrt(np.mean(measured[:, j] ** 2)))
        if expected <= 0.0 or seen <= 0.0:
            continue
        cosine = float(measured[:, j] @ nominal[:, j]) / (len(measured) * seen * expected)
        if seen / expected < TOO_SMALL:
            ratio = seen / expected
        elif abs(cosine) >= SHAPE_CORRELATION:
            ratio = float(measured[:, j] @ nominal[:, j] / (nominal[:, j] @ nominal[:, j]))
        else:
            continue
        if not SCALE_RANGE[0] <= ratio <= SCALE_RANGE[1]:
            notes.append(f"{label}: {name}: recorded efforts are {ratio:.3g} x the nominal model's torques on the same "
                         f"motion (RMS {seen:.3g} against {expected:.3g} N m or N): another unit or a gear ratio? "
                         "The identified parameters are in the unit of the recorded efforts")
    return notes


LOW_SPEED_RATIO = 2.0
"""A joint's residual in the direction of motion at low speed (mean of ``r sign(qdot)``) this many times its
RMS at higher speeds: the friction model fails there."""


def speed_notes(label: str, names: Sequence[str], speed: np.ndarray, residual: np.ndarray,
                bins: int = 10) -> tuple[list[str], np.ndarray]:
    """The identified model's residual against joint speed: Coulomb friction near zero speed.

    ``fs sign(qdot)`` is constant down to zero speed where a real drive sticks and
    slides (stiction, the Stribeck curve: more friction at low speed): the residual
    pushes in the direction of motion at low speed and the least squares trade it
    against every other parameter (biased friction and masses while the held-out
    error looks plausible). Per joint, the samples are split into ``bins`` equally
    populated speed bins; in each, the mean of ``residual sign(speed)`` (the friction
    the model misses, N m or N). The bins from zero speed up where it exceeds
    :data:`LOW_SPEED_RATIO` times the residual RMS of the faster half give the speed
    below which the joint's equations should be dropped (``--min-speed``,
    :mod:`pardyn.identification.selection`). A residual without that sign (the ringing
    of filtered steps, noise) says nothing about friction and is not reported.

    Args:
        label: the runs.
        names: joints (n,); speed: joint speeds (N, n) (rad/s, m/s); residual: measured
            minus identified-model efforts (N, n) (N m, N) on the same samples.

    Returns:
        The notes (one per joint concerned, and one with the whole ``--min-speed``
        suggestion) and the thresholds (n,) (0 where nothing is suggested).
    """
    thresholds = np.zeros(len(names))
    notes = []
    for j, name in enumerate(names):
        magnitude = np.abs(speed[:, j])
        groups = np.array_split(np.argsort(magnitude), bins)
        rms = np.array([np.sqrt(np.mean(residual[g, j] ** 2)) if g.size else 0.0 for g in groups])
        pushed = np.array([np.mean(residual[g, j] * np.sign(speed[g, j])) if g.size else 0.0 for g in groups])
        reference = float(np.median(rms[bins // 2:]))
        if reference <= 0.0:
            continue
        high = 0
        while high < bins and pushed[high] > LOW_SPEED_RATIO * reference:
            high += 1
        if high == 0:
            continue
        thresholds[j] = float(magnitude[groups[high - 1]].max())
        notes.append(f"{label}: {name}: {pushed[:high].mean():.3g} (N m or N) more friction than the model below "
                     f"{thresholds[j]:.3g} rad/s (m/s), residual RMS {reference:.3g} at higher speeds: Coulomb "
                     "friction near zero speed is not the model (stiction, Stribeck)")
    if notes:
        values = ",".join(f"{v:.2g}" for v in thresholds)
        notes.append(f"{label}: drop the equations near zero speed: --min-speed {values} (rad/s or m/s per actuated "
                     "joint, from the residuals above)")
    return notes, thresholds


def effort_delay_s(t: np.ndarray, measured: np.ndarray, observation: np.ndarray, *,
                   max_lag_s: float = 0.2) -> tuple[float, float]:
    """The age of the efforts that best aligns them with the model, by least squares over lags (s), and the gain.

    ``measured(t) = torque(t - d)``: for each lag ``d`` (whole samples up to ``max_lag_s``), the
    model's columns are fitted anew to the efforts shifted by ``d`` (on the samples every shift has); the lag
    of the smallest mean squared residual, refined between samples by a parabola through the minimum.
    Refitting at every lag matters: a model fitted once to late efforts absorbs part of the lag into
    its inertia and viscous terms, and its torques then correlate best with a smaller lag.
    Positive: efforts stamped late.

    Args:
        t: uniform times (N,) (s); measured: efforts (N, n); observation: the model's columns on the same
            samples (N, n, p) (``W``; or predicted torques (N, n, 1)).

    Returns:
        ``(d, gain)``: the lag (s) and ``1 - residual(d) / residual(0)`` (mean squares): how much the
        shift explains (a lag that explains little is no finding).
    """
    step = float(np.median(np.diff(t)))
    count, width = len(t), observation.shape[-1]
    lags = int(min(max(1, round(max_lag_s / step)), (count - 1) // 4))
    # the same rows of W for every shift (one QR): residual(lag) = |y_lag|^2 - |Q^T y_lag|^2
    q, _ = np.linalg.qr(observation[lags:count - lags].reshape(-1, width))
    errors = []
    for lag in range(-lags, lags + 1):  # measured[k + lag] against observation[k]
        y = measured[lags + lag:count - lags + lag].reshape(-1)
        errors.append(float((y @ y - np.sum((q.T @ y) ** 2)) / y.size))
    errors = np.array(errors)
    k = int(np.argmin(errors))
    offset = 0.0
    if 0 < k < len(errors) - 1:
        left, middle, right = errors[k - 1:k + 2]
        curvature = left - 2 * middle + right
        if curvature > 0:
            offset = 0.5 * (left - right) / curvature
    return (k - lags + offset) * step, 1.0 - errors[k] / errors[lags] if errors[lags] > 0 else 0.0


DELAY_GAIN = 0.1
"""A shift of the efforts is worth saying when it lowers the model's mean squared residual by this fraction."""


def delay_note(label: str, extra_s: float, gain: float, used_s: float, step_s: float) -> list[str]:
    """A note when the efforts, already shifted by ``used_s``, align best ``extra_s`` later (a fifth of a sample or
    more) and that explains enough (:data:`DELAY_GAIN`)."""
    if abs(extra_s) < 0.2 * step_s or gain < DELAY_GAIN:
        return []
    total = used_s + extra_s
    return [f"{label}: the efforts align best with the model {1000 * total:.3g} ms late (least squares over "
            f"shifts: {100 * gain:.0f} % less residual than with the {1000 * used_s:.3g} ms used): "
            f"--effort-delay {total:.3g}"]


IMPLAUSIBLE_FACTOR = 3.0
"""An identified mass this many times the nominal one (or less than its inverse) is implausible."""


def physical_notes(names: Sequence[str], values: np.ndarray, stds: np.ndarray, nominal: dict[str, float],
                   *, physical: dict[str, float] | None = None, reach: float | None = None,
                   effort_range: dict[str, float] | None = None) -> list[str]:
    """Identified base parameters no body or drive can have, beside the physically consistent estimate.

    A base parameter that is a standard one alone (not regrouped: its name has no ``R``
    suffix) is checked: a mass ``m_<body>`` negative, or beyond :data:`IMPLAUSIBLE_FACTOR`
    times its nominal value (or below its inverse) and more than 2 standard deviations from it; viscous or Coulomb
    friction (``fv_``, ``fs_``) negative by more than 3 standard deviations; a first moment ``mx_, my_, mz_<body>``
    beyond its body's nominal mass times ``reach`` (the robot's size, m) by more than 3 standard deviations (a
    0.124 kg link cannot have -1.91 kg m); an effort offset ``offset_<joint>`` beyond ``effort_range`` (the largest
    |effort| that joint logged).

    Args:
        names, values, stds: the base parameters (n_b,), their estimates and standard deviations.
        nominal: the nominal (CAD) standard parameters by name.
        physical: the physically consistent estimate's standard parameters by name, if computed.
    """
    notes = []
    for name, value, std in zip(names, values, stds):
        beside = "" if physical is None or name not in physical else f" (physically consistent: {physical[name]:.4g})"
        hint = beside or " (--physical gives the physically consistent estimate)"
        if name.startswith("m_"):
            reference = nominal.get(name, 0.0)
            if value < 0.0:
                notes.append(f"{name} = {value:.4g} +- {std:.2g} kg: a negative mass{hint}")
            elif reference > 0.0 and abs(value - reference) > 2 * std and not (
                    1 / IMPLAUSIBLE_FACTOR <= value / reference <= IMPLAUSIBLE_FACTOR):
                notes.append(f"{name} = {value:.4g} +- {std:.2g} kg, {value / reference:.2g} x the nominal "
                             f"{reference:.4g} kg: implausible; friction near zero speed (see the speed notes) or a "
                             f"unit error biases it{hint}")
        elif name.startswith(("fv_", "fs_")) and value < -3 * std:
            notes.append(f"{name} = {value:.4g} +- {std:.2g}: negative friction{hint}")
        elif name.startswith(("mx_", "my_", "mz_")) and reach is not None:
            mass = nominal.get("m_" + name[3:], 0.0)
            if mass > 0.0 and abs(value) - 3 * std > mass * reach:
                notes.append(f"{name} = {value:.4g} +- {std:.2g} kg m on a body of {mass:.4g} kg: beyond its mass x "
                             f"the robot's size ({mass * reach:.3g} kg m), implausible{hint}")
        elif name.startswith("offset_") and effort_range is not None:
            span = effort_range.get(name.removeprefix("offset_"))
            if span is not None and abs(value) - 3 * std > span:
                notes.append(f"{name} = {value:.4g} +- {std:.2g}: an effort offset beyond the efforts' range "
                             f"(+-{span:.3g}), implausible{hint}")
    return notes
