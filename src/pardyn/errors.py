"""Error hierarchy of pardyn.

Every error raised on purpose by pardyn derives from :class:`PardynError`, so a
caller (a CLI, a ROS node) can catch one type and report the message, which
always names the file, field, joint or configuration at fault.
"""

from __future__ import annotations

__all__ = [
    "PardynError",
    "DescriptionError",
    "KinematicsError",
    "ConvergenceError",
    "SingularityError",
    "WorkingModeError",
    "SampleError",
    "InputError",
]


class PardynError(Exception):
    """Base class of every pardyn error."""


class DescriptionError(PardynError):
    """A robot description (URDF or YAML) is missing, malformed or inconsistent."""


class InputError(PardynError, ValueError):
    """A value given at run time (joint names, sizes, NaN) is not acceptable."""


class KinematicsError(PardynError):
    """A closed-loop kinematic problem has no acceptable answer."""


class ConvergenceError(KinematicsError):
    """Newton's method did not close the loops (unreachable pose, inconsistent inputs)."""


class SingularityError(KinematicsError):
    """The configuration is (close to) a serial or parallel singularity.

    Attributes:
        kind: ``"serial"`` (inverse-kinematic, a leg loses mobility) or
            ``"parallel"`` (forward-kinematic, the platform gains mobility).
        condition: condition number of the closure Jacobian block concerned.
    """

    def __init__(self, message: str, *, kind: str, condition: float) -> None:
        super().__init__(message)
        self.kind = kind
        self.condition = condition

    def __reduce__(self):
        # keyword-only arguments: pickle (worker processes) needs to be told how to rebuild it
        return _rebuild_singularity_error, (self.args[0], self.kind, self.condition)


def _rebuild_singularity_error(message: str, kind: str, condition: float) -> SingularityError:
    return SingularityError(message, kind=kind, condition=condition)


class WorkingModeError(KinematicsError):
    """The solution found lies in another working or assembly mode than the robot's."""


class SampleError(KinematicsError):
    """One sample of a series has no acceptable closed-loop answer.

    Attributes:
        index: position of the sample in the series.
        cause: the error of that sample's solve (a :class:`KinematicsError`).
    """

    def __init__(self, index: int, cause: KinematicsError) -> None:
        super().__init__(f"sample {index}: {cause}")
        self.index = index
        self.cause = cause

    def __reduce__(self):
        return SampleError, (self.index, self.cause)
