"""The ``controller`` node running PFC (config/controllers/h4_pfc.yaml) against the ``sim`` node on the H4.

Separate OS processes over DDS, lockstep at 1 kHz, torque noise off. Checks:

* every torque the sim applied over step ``k`` (the effort of state ``k + 1``) is the
  pure-core :class:`~pardyn.control.pfc.PredictiveFunctionalControl` fed the published
  states ``0..k`` in order, replayed here (the stateful law saw every step once, in order);
* the H4's ground truth reaches the setpoint 2 cm below home with its loops closed.
"""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
from sensor_msgs.msg import JointState

from pardyn import load_robot
from pardyn.control import JointReference
from pardyn.control.pfc import PredictiveFunctionalControl

REPO = Path(__file__).resolve().parents[2]
PERIOD_NS = 1_000_000
STEPS = 400  # 0.4 s of simulated time
SETPOINT_TASK = (0.0, 0.0, -0.34, 0.0)  # 2 cm below home (m, rad)


def stamp_ns(message) -> int:
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


def forearm_violation(robot, q) -> float:
    """Largest | |A_i B_i| - 0.6 m | and half-bar angle difference, from pinocchio's frame placements."""
    import pinocchio as pin

    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, np.asarray(q))
    frame = lambda name: data.oMf[model.getFrameId(name)]  # noqa: E731
    lengths = [np.linalg.norm(frame(f"nacelle_A{i}").translation - frame(f"arm{i}_B").translation) - 0.6
               for i in range(1, 5)]
    relative = frame("bar12").rotation.T @ frame("bar34").rotation
    return max(max(abs(v) for v in lengths), abs(float(np.arctan2(relative[1, 0], relative[0, 0]))))


def test_pfc_controller_against_the_sim(launch_node, ros_client, ros_namespace):
    namespace = f"{ros_namespace}/h4_pfc"
    sim = launch_node("sim", params_file=REPO / "config" / "sim.yaml", namespace=namespace, params={
        "robot": "h4", "torque_noise": 0.0, "torque_noise_floor": 0.0, "history_depth": 10_000,
    })
    states = ros_client.collect(JointState, f"{namespace}/joint_states", depth=10_000)
    truth = ros_client.collect(JointState, f"{namespace}/ground_truth/joint_states", depth=10_000)
    assert ros_client.spin_until(lambda: states and truth, 30.0), sim.output()
    controller = launch_node("controller", params_file=REPO / "config" / "controllers" / "h4_pfc.yaml",
                             namespace=namespace, params={
                                 "use_sim_time": "true",
                                 "setpoint_task": "[" + ", ".join(str(v) for v in SETPOINT_TASK) + "]"})
    done = ros_client.spin_until(lambda: truth and stamp_ns(truth[-1]) >= STEPS * PERIOD_NS
                                 and stamp_ns(states[-1]) >= STEPS * PERIOD_NS, 120.0)
    assert done, f"lockstep too slow or stuck\nsim:\n{sim.output()}\ncontroller:\n{controller.output()}"
    assert controller.stop(signal.SIGTERM) == 0, controller.output()
    assert "law pfc (PFC" in controller.output()

    robot = load_robot("h4")
    names = list(robot.actuated_names)
    by_step = {stamp_ns(m) // PERIOD_NS: m for m in states}
    law = PredictiveFunctionalControl(robot, points=(6, 12, 18), degree=1, error_window=20)
    setpoint = JointReference.hold(robot.solve_inverse(SETPOINT_TASK).q[robot.actuated_indices])
    for k in range(STEPS):
        message, following = by_step[k], by_step[k + 1]
        position = np.array([message.position[message.name.index(n)] for n in names])
        velocity = np.array([message.velocity[message.name.index(n)] for n in names])
        expected = law.torques(position, velocity, setpoint)
        applied = np.array([following.effort[following.name.index(n)] for n in names])
        np.testing.assert_allclose(applied, expected, rtol=1e-9, atol=1e-9, err_msg=f"step {k}")

    ground = {stamp_ns(m) // PERIOD_NS: m for m in truth}
    worst = max(forearm_violation(robot, ground[k].position) for k in range(0, STEPS + 1, 10))
    assert worst < 1e-6, f"closure violation {worst:.3g}"
    final = np.array(ground[STEPS].position)[robot.task_indices]
    start = np.array(ground[0].position)[robot.task_indices]
    assert abs(start[2] - SETPOINT_TASK[2]) > 0.019
    assert np.abs(final - SETPOINT_TASK).max() < 1e-4  # m, rad
