"""Problems of measured data, said in words for the report rather than hidden in the figures.

Real logs (the TIAGo's ``joint_states``) carry problems the fit error alone does
not explain: efforts a driver does not report (exactly 0 most of the time),
efforts in another unit than the model's (a current instead of N or N m),
coarse quantization, joints that hardly move. Each check gives one sentence
naming the joint and the measured figure; none stops the identification.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["effort_notes", "scale_notes"]

ZERO_FRACTION = 0.2
"""Efforts exactly 0 in more than this fraction of the samples: probably not reported."""

QUANTUM_FRACTION = 0.01
"""Effort resolution above this fraction of the effort's RMS is worth saying."""

SCALE_RANGE = (0.2, 5.0)
"""RMS of the measured efforts over the nominal model's outside this range: another unit?"""

MIN_MOTION = 0.05
"""A joint moving less than this (rad or m, peak to peak) is hardly excited."""


def effort_notes(label: str, names: Sequence[str], efforts: np.ndarray, positions: np.ndarray) -> list[str]:
    """Zero efforts, quantization and motion of each joint of one run.

    Args:
        label: the run (file or bag name).
        names: joints (n,); efforts: raw efforts (N, n) (N m, N); positions: (N, n) (rad, m).
    """
    notes = []
    for j, name in enumerate(names):
        column = efforts[:, j]
        zero = float(np.mean(column == 0.0))
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
        if motion < MIN_MOTION:
            notes.append(f"{label}: {name}: moves {motion:.3g} (rad or m) peak to peak only: hardly excited")
    return notes


def scale_notes(label: str, names: Sequence[str], measured: np.ndarray, nominal: np.ndarray) -> list[str]:
    """Measured efforts against the nominal (CAD) model's torques on the same motion, per joint.

    A ratio of RMS far from 1 on a joint whose nominal torque is large (gravity)
    says the efforts are in another unit (or scaled by a gear ratio): the
    identified parameters are then in that unit too.

    Args:
        measured, nominal: (N, n) efforts and nominal-model torques on the same samples.
    """
    notes = []
    for j, name in enumerate(names):
        expected = float(np.sqrt(np.mean(nominal[:, j] ** 2)))
        seen = float(np.sqrt(np.mean(measured[:, j] ** 2)))
        if expected <= 0.0:
            continue
        ratio = seen / expected
        if not SCALE_RANGE[0] <= ratio <= SCALE_RANGE[1]:
            notes.append(f"{label}: {name}: recorded efforts are {ratio:.3g} x the nominal model's torques on the same "
                         f"motion (RMS {seen:.3g} against {expected:.3g} N m or N): another unit or a gear ratio? "
                         "The identified parameters are in the unit of the recorded efforts")
    return notes
