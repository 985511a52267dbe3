"""Gepetto's ``robot_delta``, loaded unedited, through the ROS nodes: bag -> identify -> validation.

The robot a user brings: ``../shared/datasets/gepetto_parallel_robots/robot_delta``
(Gepetto's format, three 6D loop closures, placeholder half-joints locked at
load). The bringup of ``config/bringup/identification.yaml`` runs in one
process (sim with the MuJoCo plant, PD controller, exciting trajectory,
rosbag2 recorder), the plant built with the robot *as built* (nominal
parameters perturbed, seeded: a density error per body), encoders quantized
and torques noisy. ``pardyn.identification.pipeline.identify`` then fits a
held-out run better than the nominal model and below 5 % relative torque error.

Gepetto's robot_delta closes its loops (from the file's neutral configuration)
next to a singular curve of its closure Jacobian (condition numbers above 1e4
around home, up to 1e6): the runs are centred 0.5 rad further on its second
motor, where they stay below 1e4. Its links weigh grams: PD gains for a 40 Hz
bandwidth (``pardyn.control.gains``) hold it there against gravity.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pardyn import load_robot
from pardyn.control.gains import pd_gains_from_bandwidth
from pardyn.dynamics.parameters import write_parameter_file
from pardyn.simulation.identification_runs import as_built_parameters
from pardyn.identification.pipeline import identify
from pardyn.nodes.bringup import load_bringup
from pardyn.nodes.identification_runs import record_run

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO.parent / "shared" / "datasets" / "gepetto_parallel_robots" / "robot_delta" / "robot.yaml"
START_S = 0.5


@pytest.mark.skipif(not SOURCE.is_file(), reason=f"shared datasets absent: {SOURCE} not found")
def test_robot_delta_bag_identify_validate_through_the_nodes(ros_domain, tmp_path):
    robot = load_robot(SOURCE)
    truth_path = tmp_path / "as_built.json"
    write_parameter_file(truth_path, as_built_parameters(robot.nominal_parameters, seed=7))
    center = robot.task_values(robot.home) + np.array([0.0, 0.5])  # rad: away from the singular curve
    kp, kd = pd_gains_from_bandwidth(robot, bandwidth_hz=40.0, damping=0.7, q=robot.solve_inverse(center).q)
    bringup = load_bringup(REPO / "config" / "bringup" / "identification.yaml")

    def record(name: str, seed: int, duration_s: float) -> tuple[Path, float]:
        bag = tmp_path / name
        figures = record_run(bringup, {
            "sim": {"robot": str(SOURCE), "parameters_file": str(truth_path), "seed": seed, "lockstep": True,
                    "initial_task": center.tolist(), "torque_noise_floor": 1e-5},
            "controller": {"robot": str(SOURCE), "kp": kp.tolist(), "kd": kd.tolist()},
            "trajectory": {"robot": str(SOURCE), "kind": "exciting", "seed": seed, "duration": duration_s,
                           "start_time": START_S, "start_task": center.tolist(), "amplitude": [0.3, 0.3],
                           "max_velocity": [6.0, 6.0], "max_acceleration": [60.0, 60.0], "base_frequency": 1.0,
                           "max_kinematic_condition": 1e4},
            "recorder": {"bag_path": str(bag), "autostart": True},
        }, bag, end_s=START_S + duration_s + 0.3, label=name)  # recorded again if the recorder fell behind
        return bag, figures["max_closure_violation"]

    identification, violation_a = record("identification", 1, 6.0)
    validation, violation_b = record("validation", 3, 3.0)
    assert max(violation_a, violation_b) < 1e-6  # m: MuJoCo's equality constraints held the loops

    result = identify(robot, [identification], validate_bags=[validation]).as_json()
    held_out = result["validation"]["relative_error_norm"]
    nominal = result["validation"]["nominal"]["relative_error_norm"]
    assert held_out < 0.05, result["validation"]
    assert held_out < nominal, result["validation"]
