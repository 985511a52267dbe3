"""MuJoCo plant: the robot simulated by an independent physics engine.

The MJCF model is generated from the pinocchio tree of the robot with the
plant's dynamic parameters applied (a copy of ``robot.model``,
:meth:`pardyn.dynamics.parameters.DynamicParameters.apply`), not from the URDF
nor the YAML, so whatever parameters the plant is given are the ones simulated:

* one MuJoCo body per pinocchio joint, placed at ``model.jointPlacements[j]``
  in its parent's body (body frame = pinocchio joint frame), carrying the
  joint: revolute -> ``hinge``, prismatic -> ``slide``, axis in the body frame;
* inertial: ``model.inertias[j]`` (mass, ``lever`` = centre of mass,
  rotational inertia about the centre of mass, joint axes);
* drives: ``model.armature`` -> joint ``armature`` (rotor inertia ``ia`` of eq. 2
  of the DualV paper), ``model.damping`` -> ``damping`` (viscous ``fv``),
  ``model.friction`` -> ``frictionloss`` (Coulomb ``fs``, eq. 5: MuJoCo's
  dry-friction constraint, with the equalities' stiff ``solref``/``solimp`` as
  ``solreffriction``/``solimpfriction``, so that it is ``fs sign(qdot)`` while
  sliding and holds up to ``fs`` at rest: stiction, which eq. (5) has not.
  On a PD-held DualV motion with velocity reversals, 0.5 s, it stays within
  2e-3 rad of eq. (5) with a 1e-3 rad/s ``tanh``; MuJoCo's default, softer
  friction was 1e-2 rad away), ``model.gravity`` -> ``option/gravity``;
* counterweights (the description's ``counterweights: [joint, ...]``, e.g. ``wu3r``):
  pardyn models a counterweight of mass ``m_c`` moving opposite to a prismatic
  joint ``q`` of the base as that joint's drive terms ``ia = m_c``,
  ``offset = -m_c g`` (``T = m_c qdot^2 / 2``, ``V = -m_c g q``). Here it is a real
  body instead: mass ``model.armature[q]`` on a ``slide`` joint
  ``<joint>_counterweight`` along the same world axis, held at ``q_c = -q`` by a
  ``joint`` equality (``polycoef = 0 -1 0 0 0``); the joint itself gets no
  armature, gravity acts on the body (so the offset is MuJoCo's physics, not
  copied from the YAML);
* one ``motor`` per actuated joint (``gear = 1``, no control limits: torque
  limits are the controller's job), in ``robot.actuated_names`` order;
* a ``site`` at every frame a closure uses (``model.frames``: parent joint and
  placement), and the closures as equality constraints between the sites:

  ================== ===================================================================
  closure            MuJoCo equality
  ================== ===================================================================
  ``2D``, ``3D``     ``connect site1 site2``: the sites' origins coincide
  ``planar``, ``6D`` ``weld site1 site2``: the sites' frames coincide (relative
                     pose = identity, the closure's definition)
  ``distance``       ``tendon``: a spatial tendon through the two sites, whose length
                     (= the distance) is held at ``length`` (polycoef ``length - L0``, L0
                     the tendon length at ``qpos0 = 0``). MuJoCo 3+ has no ``distance``
                     equality; the tendon is a massless rod with ball joints.
  ================== ===================================================================

  A closure that fixes only some rotations (custom ``components`` with one
  rotation) is welded whole: MuJoCo constrains at least what pardyn does.
  For the planar robots the extra rows (z, rx, ry) are identically satisfied
  (all axes along z), MuJoCo's regularized solver accepts these redundant rows.

**Stiff equalities.** Each equality is a soft constraint with reference
acceleration ``aref = -b v - k r`` (MuJoCo's ``solref = (timeconst, dampratio)``)
and impedance ``d`` (``solimp``); defaults ``timeconst = 2 * timestep`` (the
smallest MuJoCo allows), critical damping, ``solimp = (0.9999, 0.9999, 0.001,
0.5, 2)`` (``d`` = 0.9999, the maximum). With ``timestep = 1e-4`` s the closure
violation stays below 3e-10 m over 2 s of brisk motion (tests: bound 1e-8 m).
Being soft, the equalities meet the constraint *accelerations* only to ~1e-4
relative at any instant (``d``); the position feedback of ``aref`` corrects
the drift, so trajectories agree with pardyn's forward model to ~1e-8 rad
over 0.5 s (``test/plants/test_mujoco_plant.py`` lists the measured figures).

**Massless bodies.** pinocchio accepts massless bodies (the platform-joint
bodies ``leg{i}_link3``, the virtual chain ``platform_x``, ``platform_y``);
MuJoCo needs mass and inertia > 1e-15 on every moving body. They get
``virtual_mass`` (1e-10 kg) at the joint origin with the isotropic inertia
``virtual_inertia`` (1e-13 kg m^2). They move with the platform (welded to
it, or its virtual chain), so they add 1e-10 kg to a platform of 0.1-2 kg:
the closed-loop accelerations change by ~1e-10 relative (measured by
``test_virtual_masses_do_not_bias_the_dynamics`` with pardyn's forward model on
the inertias MuJoCo compiled). Larger values bias the motion measurably
(1e-6 kg: 1e-6 relative accelerations, 2e-5 rad over 0.5 s on rrr3).

**Physical inertias.** MuJoCo refuses inertias violating ``A + B >= C`` (the
planar robots' YAML gives e.g. the DualV platform ``xx = yy = 1e-4``,
``zz = 0.0206`` kg m^2, since only ``zz`` matters in the plane). For a planar
tree (every hinge axis parallel to ``n``) the inertia becomes
``I + delta (E - n n^T)``, which has the same ``I omega`` for every ``omega``
along ``n``, hence the same dynamics; on other trees (a maker's URDF with a non-physical link) the nearest
physical inertia is simulated, with one warning naming the body and the change
(:func:`pardyn.description.tree.nearest_physical_inertia`).

**Integration.** MuJoCo's ``RK4`` integrator, ``timestep = 1e-4`` s, Newton
constraint solver with tolerance 1e-12; contacts disabled (no collision geoms:
the capsules drawn for viewing have ``contype = conaffinity = 0``). RK4 costs
~3x the ``implicitfast`` integrator per step but keeps the kinetic energy of
free motion to 3e-8 over 1 s (``implicitfast``: 1e-4) and the trajectories
~100x closer to the forward model. :meth:`MujocoPlant.step` runs
``round(duration / timestep)`` ``mj_step`` with the torques held (zero-order
hold over the control period).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TYPE_CHECKING

import mujoco
import numpy as np
import pinocchio as pin

from pardyn.description.tree import joint_axis, link_names, physical_inertia, plane_normals
from pardyn.dynamics.forward import ForwardDynamics
from pardyn.errors import DescriptionError, InputError
from pardyn.plants import Plant, PlantState
from pardyn.plants.payload import Payload
from pardyn.plants.integrators import MUJOCO_INTEGRATORS

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["MujocoPlant", "build_mjcf", "counterweight_joints", "DEFAULT_SOLIMP"]

DEFAULT_SOLIMP: tuple[float, float, float, float, float] = (0.9999, 0.9999, 0.001, 0.5, 2.0)
"""``solimp`` of the closure equalities: impedance 0.9999 (MuJoCo's maximum) at any violation."""

_MUJOCO_JOINTS = {"revolute": "hinge", "prismatic": "slide"}


def _joint_kind(model: pin.Model, joint_id: int) -> tuple[str, np.ndarray]:
    """(``hinge`` | ``slide``, axis (3,) in the joint frame) of a one-dof pinocchio joint."""
    kind, axis = joint_axis(model, joint_id)
    return _MUJOCO_JOINTS[kind], axis


def _numbers(values: Sequence[float]) -> str:
    return " ".join(repr(float(v)) for v in values)


def _quaternion(rotation: np.ndarray) -> list[float]:
    """MuJoCo's ``w x y z`` quaternion of a rotation matrix."""
    x, y, z, w = pin.Quaternion(np.asarray(rotation)).normalized().coeffs()
    return [w, x, y, z]


def counterweight_joints(robot: Robot, model: pin.Model) -> list[int]:
    """Joint ids of the YAML ``counterweights`` (prismatic joints of the base, checked at load).

    Raises:
        InputError: ``model``'s parameters give one no drive ``ia`` (the counterweight mass, kg).
    """
    ids = [model.getJointId(name) for name in robot.description.counterweights]
    for joint_id in ids:
        if model.armature[model.joints[joint_id].idx_v] <= 0.0:
            raise InputError(f"{robot.name}: counterweights: {model.names[joint_id]!r} has no drive ia "
                             "(the counterweight mass, kg)")
    return ids


def build_mjcf(
    robot: Robot,
    params: DynamicParameters | None = None,
    *,
    timestep: float = 1e-4,
    integrator: str = "RK4",
    constraint_timeconst: float | None = None,
    solimp: Sequence[float] = DEFAULT_SOLIMP,
    virtual_mass: float = 1e-10,
    virtual_inertia: float = 1e-13,
    solver_tolerance: float = 1e-12,
) -> str:
    """The MJCF text of the robot (module docstring for the mapping).

    Args:
        robot: the robot (tree, closures, actuated joints).
        params: the dynamic parameters simulated (``robot.nominal_parameters`` by default;
            with a payload: :meth:`pardyn.plants.payload.Payload.added_to`).
        timestep: MuJoCo time step (s).
        integrator: MuJoCo integrator name (``Euler``, ``implicitfast``, ``implicit``, ``RK4``).
        constraint_timeconst: ``solref`` time constant of the closures (s), ``2 * timestep`` by default.
        solimp: ``solimp`` of the closures (5 numbers).
        virtual_mass: mass given to massless bodies (kg), >= 1e-15 (MuJoCo's mjMINVAL).
        virtual_inertia: isotropic inertia added to bodies whose inertia is not positive
            definite (kg m^2), > 1e-15.
        solver_tolerance: MuJoCo constraint solver tolerance.
    """
    params = robot.nominal_parameters if params is None else params
    model = params.apply(robot.model.copy())
    springs = {spring.joint: spring for spring in params.springs}  # stiffness, springref (qpos = q)
    timeconst = 2.0 * timestep if constraint_timeconst is None else float(constraint_timeconst)
    bodies = link_names(model)
    counterweights = counterweight_joints(robot, model)
    normals = plane_normals(model)

    root = ET.Element("mujoco", model=robot.name)
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
    option = ET.SubElement(
        root,
        "option",
        timestep=repr(float(timestep)),
        integrator=integrator,
        gravity=_numbers(model.gravity.linear),
        solver="Newton",
        tolerance=repr(float(solver_tolerance)),
        iterations="100",
    )
    ET.SubElement(option, "flag", contact="disable")
    default = ET.SubElement(root, "default")
    ET.SubElement(default, "geom", contype="0", conaffinity="0", group="1", rgba="0.5 0.5 0.8 1")
    ET.SubElement(default, "site", size="0.006", rgba="0.9 0.3 0.3 1")
    ET.SubElement(default, "equality", solref=f"{timeconst!r} 1.0", solimp=_numbers(solimp))
    ET.SubElement(default, "joint", solreffriction=f"{timeconst!r} 1.0", solimpfriction=_numbers(solimp))

    worldbody = ET.SubElement(root, "worldbody")
    elements: list[ET.Element] = [worldbody]
    for joint_id in range(1, model.njoints):
        placement = model.jointPlacements[joint_id]
        body = ET.SubElement(
            elements[model.parents[joint_id]],
            "body",
            name=bodies[joint_id],
            pos=_numbers(placement.translation),
            quat=_numbers(_quaternion(placement.rotation)),
        )
        elements.append(body)
        kind, axis = _joint_kind(model, joint_id)
        v = model.joints[joint_id].idx_v
        joint = ET.SubElement(
            body,
            "joint",
            name=model.names[joint_id],
            type=kind,
            axis=_numbers(axis),
            armature=repr(0.0 if joint_id in counterweights else float(model.armature[v])),
            damping=repr(float(model.damping[v])),
            frictionloss=repr(float(model.friction[v])),
        )
        spring = springs.get(model.names[joint_id])
        if spring is not None:
            joint.set("stiffness", repr(float(spring.stiffness)))
            joint.set("springref", repr(float(spring.reference)))
        inertia = model.inertias[joint_id]
        mass = float(inertia.mass)
        rotational = np.array(inertia.inertia)
        com = np.array(inertia.lever)
        smallest = float(np.linalg.eigvalsh(rotational).min())
        if mass < 0.0 or smallest < -1e-12 * max(1.0, float(np.abs(rotational).max())):
            raise DescriptionError(
                f"body {bodies[joint_id]!r} (joint {model.names[joint_id]!r}): mass {mass} kg, principal "
                f"inertias {np.linalg.eigvalsh(rotational).tolist()} kg m^2 are not a physical body; "
                "MuJoCo cannot simulate it (identified base parameters need physical consistency)"
            )
        if mass == 0.0:
            mass, com = virtual_mass, np.zeros(3)
        if smallest <= 0.0:
            rotational = rotational + virtual_inertia * np.eye(3)
        rotational = physical_inertia(rotational, normals[joint_id], bodies[joint_id], nearest=True)
        ET.SubElement(
            body,
            "inertial",
            pos=_numbers(com),
            mass=repr(mass),
            fullinertia=_numbers([rotational[i, j] for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))]),
        )
    for joint_id in counterweights:
        placement = model.jointPlacements[joint_id]
        name = f"{model.names[joint_id]}_counterweight"
        body = ET.SubElement(worldbody, "body", name=name, pos=_numbers(placement.translation),
                             quat=_numbers(_quaternion(placement.rotation)))
        ET.SubElement(body, "joint", name=name, type="slide", axis=_numbers(_joint_kind(model, joint_id)[1]))
        mass = float(model.armature[model.joints[joint_id].idx_v])
        ET.SubElement(body, "inertial", pos="0 0 0", mass=repr(mass), diaginertia=_numbers([mass * 1e-3] * 3))
    # Drawing only: a capsule from each body to each child body.
    for joint_id in range(1, model.njoints):
        start = np.zeros(3)
        end = np.asarray(model.jointPlacements[joint_id].translation)
        if np.linalg.norm(end) > 1e-9:
            ET.SubElement(
                elements[model.parents[joint_id]], "geom", type="capsule", size="0.005",
                fromto=_numbers(np.concatenate([start, end])),
            )

    frames = sorted({name for closure in robot.description.closures for name in closure.frames})
    for name in frames:
        frame = model.frames[model.getFrameId(name)]
        ET.SubElement(
            elements[frame.parentJoint],
            "site",
            name=name,
            pos=_numbers(frame.placement.translation),
            quat=_numbers(_quaternion(frame.placement.rotation)),
        )

    tendon = None
    equality = ET.SubElement(root, "equality")
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))  # MuJoCo's qpos0: every joint at 0
    for closure in robot.description.closures:
        if closure.type == "coupling":  # q_b = c0 + c1 q_a + ... + c4 q_a^4; the plant's qpos0 is q = 0
            ET.SubElement(equality, "joint", name=closure.name, joint1=closure.joints[1], joint2=closure.joints[0],
                          polycoef=_numbers([*closure.coefficients, 0.0, 0.0, 0.0, 0.0][:5]))
            continue
        site_a, site_b = closure.frames
        if closure.type == "distance":
            if tendon is None:
                tendon = ET.Element("tendon")
            rod = f"{closure.name}_rod"
            spatial = ET.SubElement(tendon, "spatial", name=rod, width="0.003")
            ET.SubElement(spatial, "site", site=site_a)
            ET.SubElement(spatial, "site", site=site_b)
            reference = float(
                np.linalg.norm(
                    data.oMf[model.getFrameId(site_b)].translation - data.oMf[model.getFrameId(site_a)].translation
                )
            )
            ET.SubElement(
                equality, "tendon", name=closure.name, tendon1=rod,
                polycoef=_numbers([float(closure.length) - reference, 0.0, 0.0, 0.0, 0.0]),
            )
        elif any(c >= 3 for c in closure.components):
            ET.SubElement(equality, "weld", name=closure.name, site1=site_a, site2=site_b)
        else:
            ET.SubElement(equality, "connect", name=closure.name, site1=site_a, site2=site_b)
    for joint_id in counterweights:
        ET.SubElement(equality, "joint", name=f"{model.names[joint_id]}_counterweight",
                      joint1=f"{model.names[joint_id]}_counterweight", joint2=model.names[joint_id],
                      polycoef="0 -1 0 0 0")
    if tendon is not None:
        root.insert(list(root).index(equality), tendon)

    actuator = ET.SubElement(root, "actuator")
    for name in robot.actuated_names:
        ET.SubElement(actuator, "motor", name=name, joint=name, gear="1")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


class MujocoPlant(Plant):
    """The robot simulated by MuJoCo, loops closed by stiff equality constraints.

    Attributes:
        robot: the robot.
        payload: the payload on the platform (or ``None``).
        model, data: MuJoCo ``MjModel`` / ``MjData``.
        qpos_addresses: MuJoCo ``qpos`` index of each pardyn coordinate (nv,)
            (``qvel`` shares it: hinge and slide joints only).

    Args:
        robot: the robot.
        params: the simulated robot's dynamic parameters (e.g. its as-built values while
            a controller of the same robot uses the nominal ones); ``robot.nominal_parameters``
            by default. MuJoCo has no drive offsets: counterweights are bodies, other
            offsets are not simulated.
        payload: a :class:`Payload` fixed to the platform (first moments ``mass * com``
            and inertia in the platform frame, SI units), in addition to whatever the
            model already carries (the 3-RRR's YAML puts a 0.5 kg load on its platform).
        timestep: MuJoCo time step (s), 0.1 ms by default.
        integrator, constraint_timeconst, solimp, virtual_mass, virtual_inertia, solver_tolerance: see
            :func:`build_mjcf`.
    """

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        payload: Payload | None = None,
        timestep: float = 1e-4,
        integrator: str = "RK4",
        constraint_timeconst: float | None = None,
        solimp: Sequence[float] = DEFAULT_SOLIMP,
        virtual_mass: float = 1e-10,
        virtual_inertia: float = 1e-13,
        solver_tolerance: float = 1e-12,
    ) -> None:
        if not (math.isfinite(timestep) and timestep > 0.0):
            raise InputError(f"timestep must be a positive time (s), got {timestep}")
        if integrator not in MUJOCO_INTEGRATORS:
            raise InputError(f"integrator must be one of {MUJOCO_INTEGRATORS}, got {integrator!r}")
        if not (virtual_mass > 0.0 and virtual_inertia > 0.0):
            raise InputError(
                f"virtual_mass and virtual_inertia must be > 0 (kg, kg m^2), got {virtual_mass}, {virtual_inertia}"
            )
        self.robot = robot
        self.params = robot.nominal_parameters if params is None else params
        self._options = dict(
            timestep=float(timestep),
            integrator=integrator,
            constraint_timeconst=constraint_timeconst,
            solimp=tuple(float(v) for v in solimp),
            virtual_mass=float(virtual_mass),
            virtual_inertia=float(virtual_inertia),
            solver_tolerance=float(solver_tolerance),
        )
        self._n_a = len(robot.actuated_names)
        self._projector = ForwardDynamics(robot)  # for its projection onto the closures only
        self._build(payload)
        self.reset(robot.home)

    # ------------------------------------------------------------------ model
    def _build(self, payload: Payload | None) -> None:
        self.payload = payload
        simulated = self.params if payload is None else payload.added_to(self.params, self.robot.model)
        self._mjcf = build_mjcf(self.robot, simulated, **self._options)
        try:
            self.model = mujoco.MjModel.from_xml_string(self._mjcf)
        except ValueError as error:  # MuJoCo reports compile errors as ValueError
            raise DescriptionError(f"{self.robot.name}: MuJoCo rejects the generated MJCF: {error}") from error
        self.data = mujoco.MjData(self.model)
        self.timestep = float(self.model.opt.timestep)
        addresses = []
        for name in self.robot.joint_names:
            joint_id = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)
            addresses.append(int(self.model.jnt_qposadr[joint_id]))
            if self.model.jnt_dofadr[joint_id] != addresses[-1]:
                raise DescriptionError(f"{self.robot.name}: joint {name!r}: MuJoCo qpos and qvel addresses differ")
        self.qpos_addresses = np.array(addresses, dtype=int)
        self._counterweights = []  # (MuJoCo qpos address of the counterweight, pardyn index of its joint)
        for name in self.robot.description.counterweights:
            joint_id = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, f"{name}_counterweight")
            self._counterweights.append((int(self.model.jnt_qposadr[joint_id]), self.robot.joint_names.index(name)))
        actuators = [mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(self.model.nu)]
        if actuators != list(self.robot.actuated_names):
            raise DescriptionError(
                f"{self.robot.name}: MuJoCo actuators {actuators} != actuated joints {list(self.robot.actuated_names)}"
            )

    def mjcf(self) -> str:
        """The MJCF text of the simulated model (for debugging, ``python -m mujoco.viewer``)."""
        return self._mjcf

    def set_payload(self, payload: Payload | None) -> PlantState:
        """Rebuild the MuJoCo model with ``payload`` (``None`` removes it), keeping the state."""
        state = self.state()
        self._build(payload)
        self._set_state(state.q, state.qdot, state.time)
        self._tau = state.tau
        return self.state()

    # ------------------------------------------------------------------ state
    def _vector(self, value: np.ndarray, size: int, what: str) -> np.ndarray:
        array = np.asarray(value, dtype=float)
        if array.shape != (size,) or not np.all(np.isfinite(array)):
            raise InputError(
                f"{self.robot.name}: {what} must be {size} finite values, got {np.asarray(value).tolist()}"
            )
        return array

    def _set_state(self, q: np.ndarray, qdot: np.ndarray, time: float) -> None:
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.qpos_addresses] = q
        self.data.qvel[self.qpos_addresses] = qdot
        for address, index in self._counterweights:  # q_c = -q
            self.data.qpos[address], self.data.qvel[address] = -q[index], -qdot[index]
        self.data.time = time
        mujoco.mj_forward(self.model, self.data)

    def reset(self, q: np.ndarray, qdot: np.ndarray | None = None) -> PlantState:
        """Start at time 0 from ``q`` (nv,) with velocities ``qdot`` (nv,) (zero by default), zero torques.

        The state is first projected onto the closures, as :class:`~pardyn.plants.pinocchio_plant.PinocchioPlant`
        does (:meth:`pardyn.dynamics.forward.ForwardDynamics.project`: ``phi(q) = 0`` to
        ``robot.solver.tolerance``, ``qdot`` into ``null(K)``), so the stiff equalities
        do not snap an open linkage shut with an impulse.

        Raises:
            InputError: wrong shapes, non-finite values.
            ConvergenceError: ``q`` is too far from any closed configuration.
        """
        nv = self.robot.nv
        q = self._vector(q, nv, "q")
        qdot = np.zeros(nv) if qdot is None else self._vector(qdot, nv, "qdot")
        q, qdot = self._projector.project(q, qdot)
        self._set_state(q, qdot, 0.0)
        self._tau = np.zeros(self._n_a)
        return self.state()

    def step(self, tau: np.ndarray, duration: float) -> PlantState:
        """Hold ``tau`` (n_a,) (N m, N) for ``round(duration / timestep)`` MuJoCo steps (at least one)."""
        tau = self._vector(tau, self._n_a, "tau").copy()
        if not (math.isfinite(duration) and duration > 0.0):
            raise InputError(f"duration must be a positive time (s), got {duration}")
        steps = max(1, round(duration / self.timestep))
        self.data.ctrl[:] = tau
        mujoco.mj_step(self.model, self.data, nstep=steps)
        self._tau = tau
        return self.state()

    def state(self) -> PlantState:
        return PlantState(
            time=float(self.data.time),
            q=self.data.qpos[self.qpos_addresses].copy(),
            qdot=self.data.qvel[self.qpos_addresses].copy(),
            tau=self._tau.copy(),
        )
