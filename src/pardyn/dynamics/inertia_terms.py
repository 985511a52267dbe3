"""The tree's terms built on composite inertias, ``M(q)`` and ``C(q, qdot)`` (nv, nv), right for any parameters.

pinocchio's CRBA (and ``computeCoriolisMatrix``) sums the bodies of each subtree into one composite inertia held as
mass, centre of mass and rotational inertia about it. Adding two inertias divides by the sum of their masses,
clamped at the machine epsilon (``Inertia::operator+=``: ``1 / max(m_a + m_b, eps)``; measured, pinocchio 4.1: 0.3
kg plus -0.5 kg gives a centre of mass at -2.3e14 m). Physical bodies never sum below zero; an estimate that is not
physically consistent does (a regrouped parameter given to a negative mass), and ``M`` loses every digit. Measured
on the Delta's IDIM-WLS estimate of a noisy benchmark draw (``high`` level, draw 8: a leg's bars at -1.25 kg each):
a diagonal entry of ``M`` was -6.3e90 where the inverse-dynamics regressor gives 1.09 (kg m^2), its reduced mass
matrix positive definite; the simulated model stood still, and IV, DIDIM, CLOE and ML failed on that draw. The
Coriolis matrix of one negative body: ``C qdot`` 6e12 away from RNEA's ``b - g`` of 0.55 N m.

Both are linear in the inertias, so with ``delta`` a point mass ``m_delta`` at the origin of every body's
frame (no first moment, no rotational inertia about that origin)

    M(pi) = M(pi + delta) - M(delta),    C(pi) = C(pi + delta) - C(delta)          # (nv, nv)

and with ``m_delta`` above every ``|m_j|`` each call sums positive masses only. :class:`InertiaTerms`
takes that route when some body's mass is negative (two calls instead of one) and pinocchio's own
otherwise. ``armature`` (the rotor inertias ``ia``) is counted once, in ``M(pi + delta)``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

__all__ = ["InertiaTerms"]


class InertiaTerms:
    """``M(q)`` and ``C(q, qdot)`` (nv, nv) of the pinocchio ``model`` as given (inertias, ``armature``).

    ``shifted`` is True when the model has a negative body mass and each term is taken as the difference of
    two of pinocchio's on positive masses (module docstring).
    """

    def __init__(self, model: pin.Model) -> None:
        self.model, self.data = model, model.createData()
        masses = np.array([model.inertias[j].mass for j in range(1, model.njoints)])
        self._shift: tuple[pin.Model, pin.Data, pin.Model, pin.Data] | None = None
        if masses.size and masses.min() < 0.0:
            point = pin.Inertia(1.0 + 2.0 * float(np.abs(masses).max()), np.zeros(3), np.zeros((3, 3)))
            loaded, alone = model.copy(), model.copy()
            alone.armature = np.zeros(model.nv)
            for j in range(1, model.njoints):
                loaded.inertias[j] = model.inertias[j] + point
                alone.inertias[j] = point
            self._shift = (loaded, loaded.createData(), alone, alone.createData())
        reference = self._crba(pin.neutral(model))
        # pinocchio 4 fills both triangles of M in crba; older versions only the upper one
        self._fill_lower = bool(np.any(np.triu(reference, 1)) and not np.any(np.tril(reference, -1)))

    @property
    def shifted(self) -> bool:
        """Whether each term is the difference of two of pinocchio's on positive masses (a negative body mass)."""
        return self._shift is not None

    def _crba(self, q: np.ndarray) -> np.ndarray:
        if self._shift is None:
            return pin.crba(self.model, self.data, q)
        loaded, loaded_data, alone, alone_data = self._shift
        return pin.crba(loaded, loaded_data, q) - pin.crba(alone, alone_data, q)

    def mass(self, q: np.ndarray) -> np.ndarray:
        """``M(q)`` (nv, nv), both triangles filled, at the joint positions ``q`` (nq,)."""
        mass = self._crba(q)
        if self._fill_lower:
            mass = np.triu(mass) + np.triu(mass, 1).T
        return mass

    def coriolis(self, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """``C(q, qdot)`` (nv, nv), ``C qdot`` the Coriolis and centrifugal efforts (a new array)."""
        if self._shift is None:
            return pin.computeCoriolisMatrix(self.model, self.data, q, qdot).copy()
        loaded, loaded_data, alone, alone_data = self._shift
        return pin.computeCoriolisMatrix(loaded, loaded_data, q, qdot) - pin.computeCoriolisMatrix(
            alone, alone_data, q, qdot)
