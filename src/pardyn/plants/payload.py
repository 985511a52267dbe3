"""A payload: a rigid body fixed to a frame of the tree (the platform by default), shared by every plant.

The identification runs (eq. 49's loaded runs), the ``sim`` node's ``payload_*`` parameters and the
studies put one on the platform; :meth:`Payload.added_to` makes it one more body of the dynamic
parameters (what the model-based plants integrate), :meth:`Payload.joint_inertia` gives what the
MuJoCo plant adds to the body of its frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pinocchio as pin

from pardyn.dynamics.parameters import Body, DynamicParameters, standard_from_inertia
from pardyn.errors import InputError

__all__ = ["Payload"]


@dataclass(frozen=True)
class Payload:
    """A rigid body fixed to a frame of the tree (a load carried by the platform).

    Attributes:
        mass: kg, >= 0.
        com: centre of mass in the axes and from the origin of ``frame``, shape (3,), m
            (its first moments are ``mass * com``, kg m, in the same frame).
        inertia: inertia matrix about the centre of mass in ``frame`` axes, shape (3, 3), kg m^2
            (symmetric positive semi-definite; zeros for a point mass).
        frame: name of the pinocchio frame the payload is fixed to (``"platform"``).
    """

    mass: float
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    frame: str = "platform"

    def __post_init__(self) -> None:
        mass = float(self.mass)
        com = np.array(self.com, dtype=float)
        inertia = np.array(self.inertia, dtype=float)
        if not (math.isfinite(mass) and mass >= 0.0):
            raise InputError(f"payload: mass must be a finite mass >= 0 (kg), got {self.mass}")
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise InputError(f"payload: com must be 3 finite coordinates (m), got {np.asarray(self.com).tolist()}")
        if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
            raise InputError(f"payload: inertia must be a finite (3, 3) matrix (kg m^2), got shape {inertia.shape}")
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * max(1.0, float(np.abs(inertia).max()))):
            raise InputError(f"payload: inertia must be symmetric, got {inertia.tolist()}")
        if np.linalg.eigvalsh(inertia).min() < -1e-12 * max(1.0, float(np.abs(inertia).max())):
            raise InputError(f"payload: inertia must be positive semi-definite, got {inertia.tolist()}")
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia", inertia)

    @classmethod
    def from_inertia(cls, inertia: pin.Inertia, *, frame: str = "platform") -> Payload:
        """The payload of a pinocchio inertia expressed in ``frame`` (e.g. from
        :func:`pardyn.dynamics.parameters.inertia_from_standard` of the 10 standard parameters)."""
        return cls(float(inertia.mass), np.array(inertia.lever), np.array(inertia.inertia), frame)

    def added_to(self, params: DynamicParameters, model: pin.Model) -> DynamicParameters:
        """``params`` with the payload as one more body, ``payload_on_<frame>``, on its frame's joint of ``model``."""
        joint, inertia = self.joint_inertia(model)
        body = Body(name=f"payload_on_{self.frame}", joint=joint, placement=pin.SE3.Identity(),
                    standard=standard_from_inertia(inertia))
        return replace(params, bodies=(*params.bodies, body))

    def joint_inertia(self, model: pin.Model) -> tuple[int, pin.Inertia]:
        """The joint that carries the payload and the payload's inertia in that joint's frame.

        Raises:
            InputError: ``frame`` is not a frame of ``model``.
        """
        if not model.existFrame(self.frame):
            raise InputError(f"payload: unknown frame {self.frame!r}; frames: {sorted(f.name for f in model.frames)}")
        frame = model.frames[model.getFrameId(self.frame)]
        local = pin.Inertia(self.mass, self.com, self.inertia)
        return int(frame.parentJoint), frame.placement.act(local)
