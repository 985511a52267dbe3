"""A model-based law whose model is replaced while it runs, without a torque jump.

The online ``identifier`` hands a new estimate to the controller; replacing a
computed-torque law's model at once would step the torque by
``(M_new - M_old) v + (h_new - h_old)``. :class:`ModelSwap` instead runs both
laws for ``blend_periods`` control periods and blends their outputs,

    tau_k = (1 - s_k) tau_old + s_k tau_new,     s_k = k / blend_periods,  k = 1 .. blend_periods

so that consecutive commands differ by at most ``|tau_new - tau_old| / blend_periods``
plus the laws' own change over one period. The swap is refused while another is
under way.
"""

from __future__ import annotations

import numpy as np

from pardyn.control import ControlLaw, JointReference
from pardyn.errors import InputError

__all__ = ["ModelSwap"]


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

    def swap(self, law: ControlLaw) -> None:
        """Start blending towards ``law`` (same joints and limits); :class:`InputError` if one is under way."""
        if self._next is not None:
            raise InputError("a model swap is already under way")
        if tuple(law.joints) != tuple(self.joints) or law.size != self.size:
            raise InputError(f"the new law reads {list(law.joints)}, the current one {list(self.joints)}")
        self._next, self._step = law, 0

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
