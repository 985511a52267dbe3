"""A model-based law whose model is replaced while it runs, without a torque jump.

The online ``identifier`` hands a new estimate to the controller; replacing a
computed-torque law's model at once would step the torque by
``(M_new - M_old) v + (h_new - h_old)``. :class:`ModelSwap` instead runs both
laws for ``blend_periods`` control periods and blends their outputs,

    tau_k = (1 - s_k) tau_old + s_k tau_new,     s_k = k / blend_periods,  k = 1 .. blend_periods

so that consecutive commands differ by at most ``|tau_new - tau_old| / blend_periods``
plus the laws' own change over one period. The swap is refused while another is
under way. :func:`swap_model` is the controller's request: it wraps the law in use
the first time and starts the blend, or refuses without building anything.
"""

from __future__ import annotations

import numpy as np

from collections.abc import Callable

from pardyn.control import ControlLaw, JointReference
from pardyn.errors import InputError

__all__ = ["ModelSwap", "swap_model"]


class ModelSwap(ControlLaw):
    """Wraps a law; :meth:`swap` starts a blend towards another law of the same robot.

    Args:
        law: the law in use; blend_periods: length of a blend (control periods, >= 1).
    """

    def __init__(self, law: ControlLaw, *, blend_periods: int = 200) -> None:
        if blend_periods < 1:
            raise InputError(f"blend_periods must be >= 1, got {blend_periods}")
        self.law = law
        self.limits = law.limits
        self.joints = law.joints
        self.minimum_norm = law.minimum_norm
        self.blend_periods = int(blend_periods)
        self._next: ControlLaw | None = None
        self._step = 0
        self.swaps = 0

    @property
    def blending(self) -> bool:
        """True while a swap is under way."""
        return self._next is not None

    @property
    def progress(self) -> tuple[int, int]:
        """``(periods done, blend_periods)`` of the swap under way (``(0, blend_periods)`` if none)."""
        return self._step, self.blend_periods

    def swap(self, law: ControlLaw) -> None:
        """Start blending towards ``law`` (same joints and limits); :class:`InputError` if one is under way."""
        if self._next is not None:
            raise InputError("a model swap is already under way")
        if tuple(law.joints) != tuple(self.joints) or law.size != self.size:
            raise InputError(f"the new law reads {list(law.joints)}, the current one {list(self.joints)}")
        self._next, self._step = law, 0

    def describe(self) -> str:
        return self.law.describe()

    def unsaturated(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        current = self.law.unsaturated(position, velocity, reference)
        if self._next is None:
            return current
        self._step += 1
        share = self._step / self.blend_periods
        target = self._next.unsaturated(position, velocity, reference)
        if self._step >= self.blend_periods:
            self.law, self._next = self._next, None
            self.minimum_norm = self.law.minimum_norm
            self.swaps += 1
            return target
        return (1.0 - share) * current + share * target


def swap_model(law: ControlLaw, build: Callable[[], ControlLaw], *, blend_periods: int = 200) -> ModelSwap:
    """Start replacing ``law``'s model by ``build()``'s, blended over ``blend_periods`` periods.

    ``law`` is the law in use: a :class:`ModelSwap` (its blend length stays) or a plain law, then
    wrapped in one. Returns the law to use from now on.

    Raises:
        InputError: a swap is under way (``build`` is not called, the law is unchanged), or the new
            law does not read the same joints; ``build``'s own errors pass through (law unchanged).
    """
    if isinstance(law, ModelSwap) and law.blending:
        done, total = law.progress
        raise InputError(f"a model swap is already under way ({done} of {total} periods blended)")
    new = build()
    swapping = law if isinstance(law, ModelSwap) else ModelSwap(law, blend_periods=blend_periods)
    swapping.swap(new)
    return swapping
