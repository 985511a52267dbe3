"""PD and CTC through the ``controller`` and ``sim`` nodes on the Delta and the hexapod.

The two nodes run in this process (:func:`pardyn.nodes.bringup.run_nodes`, lockstep at
1 kHz over DDS in a private domain) with ``config/controller.yaml`` +
``config/controllers/<law>.yaml``; the controller holds a task setpoint away from home.
Independent references: the limits read here from the robot YAML's ``limits: effort:``
(every command the controller publishes stays within them; the PD's step saturates them),
and the MuJoCo plant's true platform pose at the end against the setpoint written here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from rclpy.serialization import deserialize_message
from std_msgs.msg import Float64MultiArray

from pardyn.control.gains import pd_gains_from_bandwidth
from pardyn.nodes.bringup import Bringup, NodeSpec, run_nodes
from pardyn.robot import load_robot

REPO = Path(__file__).resolve().parents[2]
SIMULATED_S = 0.8
OFFSET = {  # task setpoint - home: a step the PD saturates on (m; rad)
    "delta": (0.05, -0.03, 0.05),
    "hexapod": (0.01, -0.01, 0.035, 0.05, -0.05, 0.05),
}
# measured: PD 0.6 mm (Delta, gravity against 15 Hz gains), 0.35 mm / mrad (hexapod); CTC 0.15 mm (dry
# friction of the plant holding against the vanishing error term), 0.03 mm / mrad
TOLERANCE = {"pd": {"delta": 2e-3, "hexapod": 1e-3}, "ctc": {"delta": 5e-4, "hexapod": 2e-4}}  # m, rad


@pytest.mark.parametrize(("name", "law", "model"), [
    ("delta", "pd", "exact"), ("delta", "ctc", "simplified"), ("hexapod", "pd", "exact"), ("hexapod", "ctc", "exact")])
def test_law_through_the_nodes_tracks_within_the_yaml_limits(name, law, model, ros_domain):
    """The Delta's CTC runs Codourey's simplified model (``dynamic_model``) against the exact plant."""
    robot = load_robot(name)
    limits_yaml = yaml.safe_load((REPO / "config" / "robots" / f"{name}.yaml").read_text())["limits"]["effort"]
    limits = np.array([limits_yaml[joint] for joint in robot.actuated_names])  # N m, N
    setpoint = robot.task_values(robot.home) + np.array(OFFSET[name])
    controller = {"robot": name, "use_sim_time": True, "setpoint_task": setpoint.tolist(), "dynamic_model": model}
    if law == "pd":  # the identification runs' PD: 15 Hz, damping 0.7
        kp, kd = pd_gains_from_bandwidth(robot, bandwidth_hz=15.0, damping=0.7)
        controller.update(kp=kp.tolist(), kd=kd.tolist())
    bringup = Bringup(source=Path(f"test_{name}_{law}"), nodes=(
        NodeSpec("sim", parameters=(REPO / "config" / "sim.yaml",
                                    {"robot": name, "lockstep": True, "command_sources": ["controller"]})),
        NodeSpec("controller", parameters=(REPO / "config" / "controller.yaml",
                                           REPO / "config" / "controllers" / f"{law}.yaml", controller)),
    ))
    commands: list[np.ndarray] = []

    def finished(nodes: dict) -> bool:
        node = nodes["controller"]
        if not hasattr(node, "_spied"):  # record every command the controller publishes
            publish = node._publisher.publish
            node._publisher.publish = lambda data: (
                commands.append(np.array(deserialize_message(data, Float64MultiArray).data)), publish(data))
            node._spied = True
        sim = nodes["sim"]
        return sim.step * sim.period_s >= SIMULATED_S

    nodes = run_nodes(bringup, until=finished, duration_s=300.0)
    sim = nodes["sim"]
    if model == "simplified":  # the controller's model: no bar bodies, their mass at the ends
        values = nodes["controller"].law.inverse.params.as_dict()
        assert values["m_leg1_bar1"] == 0.0 and values["m_platform"] > robot.nominal_parameters.as_dict()["m_platform"]
    assert sim.step * sim.period_s >= SIMULATED_S and sum(sim.rejected.values()) == 0
    sent = np.array(commands)
    assert len(sent) >= sim.step
    assert np.all(np.abs(sent) <= limits * (1 + 1e-12))
    if law == "pd":
        assert np.any(np.isclose(np.abs(sent), limits, rtol=1e-12)), "the step should saturate an actuator"
    state = sim.plant.state()
    reached = state.q[list(robot.task_indices)]
    np.testing.assert_allclose(reached, setpoint, atol=TOLERANCE[law][name])
    assert np.abs(state.qdot).max() < 0.05  # at rest
