"""One control step: a law's saturated torques, projected on actuation-redundant robots (eq. 50).

Both hosts of a control law, the ``controller`` node (:mod:`pardyn.nodes.controller`) and the
in-process loop (:func:`pardyn.simulation.runner.run_closed_loop`), answer a measured state with

    tau = sat(law(q_j, qdot_j, reference))                                   # (n_a,)
    tau = sat(tau - P tau),  P = I - J (J^T J)^-1 J^T at q(q_a, q_s)         # eq. (50), redundant robots

(Briot et al. 2015, eq. 50; ``q_j`` the joints the law reads, ``law.joints``), the projection left out
for laws whose torques are already minimum-norm (``law.minimum_norm``). :class:`ControlStep` is that
answer, once for both: the compiled kernels' one call per state when they write the law
(:func:`pardyn.control.compiled.compile_law`), else the Python path.

The configuration at which eq. (50) projects is the forward problem's fit to *every* joint reading the
robot has: the actuated positions ``q_a`` and, when the robot has sensed passive joints, their
positions ``q_s`` too (:meth:`pardyn.robot.Robot.solve_forward` with ``sensed=``). ``J`` is a
function of the configuration only; with more readings than degrees of freedom the least-squares fit's
covariance can only shrink as readings are added (Gauss-Markov), which is why extra passive sensors
improve the configuration estimate (Marquet et al. 2002, as cited by Zubizarreta et al. 2010, sec. 1)
and, here, how closely the projected torques keep the law's platform wrench ``J^T tau``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pardyn.control import ControlLaw, JointReference, saturate
from pardyn.control.compiled import compile_law, python_answer
from pardyn.control.redundancy import InternalStressProjection

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["ControlStep"]


class ControlStep:
    """``law`` (+ eq. 50 on a redundant robot) as one answer per measured state (module docstring).

    Args:
        robot: the robot the law belongs to.
        law: the control law; it reads ``law.joints`` (the actuated joints when empty).
        project_internal_stress: apply eq. (50) on actuation-redundant robots (never to a law with
            ``minimum_norm``: its torques have no internal stress).

    Attributes:
        joints: the joints the law reads (n_j,): actuated first.
        projection: the eq. (50) projection, or None (not redundant, not asked, minimum-norm law).
        compiled: the compiled law (:class:`pardyn.control.compiled.CompiledLaw`), or None.
        note: one line saying whether the law runs compiled, and why not.
        reads_sensed: True when the projection fits the sensed passive joints too: pass ``sensed=``.
    """

    def __init__(self, robot: Robot, law: ControlLaw, *, project_internal_stress: bool = True) -> None:
        self.robot = robot
        actuated = tuple(robot.actuated_names)
        self.joints = tuple(law.joints) if law.joints else actuated
        redundant = len(actuated) > len(robot.task_names)
        use = project_internal_stress and redundant and not law.minimum_norm
        self.reads_sensed = use and len(robot.sensed_names) > 0
        # the closed forms of the redundant robots read the actuated joints only: Newton fits every reading
        self.projection = InternalStressProjection(robot, method="newton" if self.reads_sensed else None) if use \
            else None
        self.replace_law(law)

    def replace_law(self, law: ControlLaw) -> None:
        """Answer with ``law`` from now on (a model swap's blend): the projection and its warm start stay."""
        self.law = law
        if self.reads_sensed:
            self.compiled, self.note = None, (
                f"control law {type(law).__name__} on the Python path: eq. (50) fits the sensed passive joints "
                f"{list(self.robot.sensed_names)} too (the kernels' forward problem reads the actuated joints only)")
        else:
            self.compiled, self.note = compile_law(law, self.robot, self.projection)

    def __call__(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference, *,
                 sensed: Sequence[float] | np.ndarray | None = None,
                 configuration: np.ndarray | None = None) -> np.ndarray:
        """The saturated (and projected) torques (n_a,), ``robot.actuated_names`` order (N m, N).

        Args:
            position, velocity: the law's joints ``joints`` (n_j,) (rad, m; rad/s, m/s).
            reference: over ``joints`` (:meth:`ControlLaw.torques`).
            sensed: the sensed passive joints' positions (``robot.sensed_names`` order) for the
                projection's forward problem; None when the robot has none or they are not read.
            configuration: the closed configuration (nv,) the readings come from, when known exactly (a
                model simulated with exact encoders): eq. (50) projects there, without the forward problem.

        Raises:
            PardynError: the law or the projection cannot answer (the forward problem fails, a singularity).
        """
        if configuration is not None and self.projection is not None:
            tau = self.law.torques(position, velocity, reference)  # as python_answer: the law saturates
            return saturate(self.projection.project_at(configuration, tau), self.law.limits)
        if self.compiled is not None:  # one kernel call: the same torques as the Python path (to 1e-12)
            return self.compiled(position, velocity, reference)
        return python_answer(self.law, self.projection, position, velocity, reference,
                             sensed=sensed if self.reads_sensed else None)
