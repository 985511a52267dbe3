"""A control law's answer to one joint state in one compiled call (the robot's kernels, ``laws.c``).

A 1 kHz host (the ``controller`` node) answers each state with

    tau = sat(law(q_j, qdot_j, reference))                 # (n_a,)
    tau = sat(J (J^T J)^-1 J^T tau)   on a redundant robot, eq. (50) of Briot et al. 2015

On the Python path that is ~150 Python/numpy calls (the law's input checks, the warm-started forward
problem, the projection; :func:`python_answer`). :func:`compile_law` gives, for the laws the kernels
write (:data:`COMPILED_LAWS`), the same answer as one foreign call with preallocated buffers:

* ``pd`` (:class:`pardyn.control.pd.JointPD`), with or without eq. (50): ``pd_step``;
* ``ctc`` in actuated space (:class:`pardyn.control.computed_torque.ComputedTorque`): the forward problem,
  eqs. (21), (24) and the minimum-norm inverse dynamics (19)/(26) of eq. (35): ``ctc_step``.

The same operations in the same order as the Python path, so the torques agree to rounding (tested to
1e-12). Whatever the C path does not end plainly on (a non-finite input, the forward problem's budget
spent or another branch, a singularity) is re-run on the Python path from the same warm start: it gives
the same answer or raises the same typed error. Other laws, and robots without kernels, stay on the
Python path; :func:`compile_law` says which, and why, in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pardyn.control import ControlLaw, JointReference, saturate

if TYPE_CHECKING:
    from pardyn.control.redundancy import InternalStressProjection
    from pardyn.robot import Robot

__all__ = ["COMPILED_LAWS", "CompiledLaw", "compile_law", "python_answer"]

COMPILED_LAWS = ("pd (+ eq. 50)", "ctc (actuated space)")


def python_answer(law: ControlLaw, projection: InternalStressProjection | None, position: np.ndarray,
                  velocity: np.ndarray, reference: JointReference, *, sensed: np.ndarray | None = None) -> np.ndarray:
    """The Python path: ``sat(law)``, then ``sat(eq. 50)`` when ``projection`` is given; (n_a,).

    ``sensed``: the sensed passive joints' positions for the projection's forward problem (None: the
    actuated joints alone; :mod:`pardyn.control.step` says why they belong in it).
    """
    tau = law.torques(position, velocity, reference)
    if projection is not None:
        tau = saturate(projection(position[: law.size], tau, sensed=sensed), law.limits)
    return tau


class CompiledLaw:
    """``law`` (+ ``projection``) as one call of ``robot.kernels`` per state (module docstring).

    Attributes:
        kind: ``"pd"`` or ``"ctc"``.
        fallbacks: calls re-run on the Python path.
    """

    def __init__(self, kind: str, law: ControlLaw, robot: Robot, projection: InternalStressProjection | None) -> None:
        self.kind, self.law, self.robot, self.projection = kind, law, robot, projection
        self.fallbacks = 0
        n_a = law.size
        self._n = n_a
        self._warm = projection if kind == "pd" else law  # whose ``q`` (nv,) is the forward problem's warm start
        self._inputs = np.zeros((5, n_a))  # q_a, qdot_a, q_ref, qdot_ref, qddot_ref
        self._gains = np.concatenate([law.kp, law.kd, law.limits])
        self._q = np.array(robot.home if self._warm is None else self._warm.q, dtype=float)
        self._tau = np.zeros(n_a)
        self._info, info_address = robot.kernels.new_info()
        rows = [self._inputs[i].ctypes.data for i in range(5)]
        gains, q, tau = self._gains.ctypes.data, self._q.ctypes.data, self._tau.ctypes.data
        if kind == "pd":
            function = robot.kernels.law_function("pd_step")
            self._arguments = (*rows[:4], gains, 0 if projection is None else 1, q, tau, info_address)
        else:
            self._params = np.ascontiguousarray(law.inverse._kernel_params)
            function = robot.kernels.law_function("ctc_step")
            self._arguments = (*rows, gains, self._params.ctypes.data, q, tau, info_address)
        self._function = function

    def __call__(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        """The saturated (and projected) torques (n_a,); inputs as :meth:`ControlLaw.torques`."""
        inputs = self._inputs
        try:
            inputs[0] = position
            inputs[1] = velocity
            inputs[2] = reference.position
            inputs[3] = reference.velocity
            if self.kind == "ctc":
                inputs[4] = reference.acceleration
        except (ValueError, TypeError):  # a wrong size: the Python path names it
            return self._python(position, velocity, reference)
        if self._function(*self._arguments):
            return self._python(position, velocity, reference)
        if self._warm is not None:
            self._warm.q = self._q.copy()  # the Python path's warm start stays the configuration just solved
        return self._tau.copy()

    def _python(self, position, velocity, reference) -> np.ndarray:
        """The Python path from the same warm start (same answer, or the typed error)."""
        self.fallbacks += 1
        tau = python_answer(self.law, self.projection, position, velocity, reference)
        if self._warm is not None:
            self._q[:] = self._warm.q
        return tau


def compile_law(law: ControlLaw, robot: Robot,
                projection: InternalStressProjection | None = None) -> tuple[CompiledLaw | None, str]:
    """``law`` with ``projection`` as one compiled call, or None; and one line saying which and why.

    ``projection``: the eq. (50) projection the host applies after the law (None: none).
    """
    from pardyn.control.computed_torque import ComputedTorque  # noqa: PLC0415 - laws import this package
    from pardyn.control.pd import JointPD  # noqa: PLC0415

    name = type(law).__name__
    kind = None
    if robot.kernels is None:
        reason = "the robot has no compiled kernels"
    elif type(law) is JointPD and tuple(law.joints) == tuple(robot.actuated_names):
        kind, reason = "pd", ""
        if projection is not None and projection.method != "newton":
            kind, reason = None, f"the projection's forward problem is {projection.method!r}, not the kernels' Newton"
    elif type(law) is ComputedTorque and law.space == "actuated" and projection is None \
            and getattr(law.inverse, "_kernels", None) is robot.kernels:
        kind, reason = "ctc", ""
    else:
        reason = f"{name} has no compiled form (compiled: {', '.join(COMPILED_LAWS)})"
    if kind is None:
        return None, f"control law {name} on the Python path: {reason}"
    what = "PD + eq. (50)" if kind == "pd" and projection is not None else {"pd": "PD", "ctc": "actuated CTC"}[kind]
    return CompiledLaw(kind, law, robot, projection), f"control law {name} compiled: {what} in one kernel call per state"
