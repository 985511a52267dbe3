"""Dynamics of closed-loop robots: parameters, inverse dynamics, reduced model, identification models.

* :mod:`pardyn.dynamics.parameters`: standard dynamic parameters (DualV paper
  eq. 2), the nominal ones of the YAML (``robot.nominal_parameters``), result
  files; every model below takes them explicitly (its own copy of the tree);
* :mod:`pardyn.dynamics.inverse`: closed-loop inverse dynamics (eqs. 19, 26, 30);
* :mod:`pardyn.dynamics.closed_loop`: inertia, Coriolis, gravity terms in task
  and joint coordinates (3-RRR paper eqs. 26, 58) for computed torque control;
* :mod:`pardyn.dynamics.regressor`: identification models (eqs. 19, 30, 36, 38);
* :mod:`pardyn.dynamics.forward`: constrained forward dynamics and simulation;
* :mod:`pardyn.dynamics.rotor`: the drive side of flexible joints (rotor inertia, nonlinear
  rotor friction, rotor dynamics compensation; UR5e paper sections 2, 3.1).

>>> import pardyn
>>> from pardyn.dynamics import InverseDynamics
>>> robot = pardyn.load_robot("dualv")
>>> params = robot.nominal_parameters.with_values({"m_payload": 0.5})   # kg
>>> inverse = InverseDynamics(robot, params)
>>> inverse.torques_from_task(robot.home, [0.1, 0.0, 0.0], [0.0, 0.0, 0.0])   # N m
"""

from pardyn.dynamics.closed_loop import (
    ClosedLoopModel,
    JointSpaceModel,
    TaskSpaceModel,
    velocity_map_derivative,
)
from pardyn.dynamics.inverse import (
    InverseDynamics,
    minimum_norm_torques,
    null_space_projector,
    task_trajectory_states,
)
from pardyn.dynamics.parameters import (
    DRIVE_NAMES,
    INERTIAL_NAMES,
    Body,
    Drive,
    DynamicParameters,
    body_to_joint_matrix,
    inertia_from_standard,
    parameters_from_model,
    read_parameter_file,
    standard_from_inertia,
    write_parameter_file,
)
from pardyn.dynamics.regressor import PROJECTIONS, Regressor
from pardyn.dynamics.rotor import RotorFriction, RotorModel, load_rotor_model

__all__ = [
    "DRIVE_NAMES",
    "INERTIAL_NAMES",
    "PROJECTIONS",
    "Body",
    "ClosedLoopModel",
    "Drive",
    "DynamicParameters",
    "InverseDynamics",
    "JointSpaceModel",
    "Regressor",
    "RotorFriction",
    "RotorModel",
    "TaskSpaceModel",
    "body_to_joint_matrix",
    "inertia_from_standard",
    "load_rotor_model",
    "minimum_norm_torques",
    "parameters_from_model",
    "null_space_projector",
    "read_parameter_file",
    "standard_from_inertia",
    "task_trajectory_states",
    "velocity_map_derivative",
    "write_parameter_file",
]
