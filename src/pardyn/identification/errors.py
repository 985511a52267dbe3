"""Errors of the identification pipeline (all :class:`pardyn.errors.InputError`, CLI exit status 2)."""

from __future__ import annotations

from pardyn.errors import InputError

__all__ = ["FitCollapsedError", "MissingRecordingError"]


class FitCollapsedError(InputError):
    """The model to be written out does not fit its own data: nothing is written.

    Attributes:
        fit_error: its relative error norm; base_fit_error: the base model's.
    """

    def __init__(self, message: str, *, fit_error: float, base_fit_error: float) -> None:
        super().__init__(message)
        self.fit_error = fit_error
        self.base_fit_error = base_fit_error

    def __reduce__(self):
        return _rebuild_fit_collapsed, (self.args[0], self.fit_error, self.base_fit_error)


def _rebuild_fit_collapsed(message: str, fit_error: float, base_fit_error: float) -> FitCollapsedError:
    return FitCollapsedError(message, fit_error=fit_error, base_fit_error=base_fit_error)


class MissingRecordingError(InputError):
    """A bag lacks what a simulation-based estimator (IV, DIDIM) needs: the reference or the controller."""
