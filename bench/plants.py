#!/usr/bin/env python3
"""Plant timings: cost of one 1 ms control period, next to MuJoCo's own step in the same run.

Run with ``make bench`` (or ``.venv/bin/python bench/plants.py``). For dualv and
rrr3 (YAML nominal dynamic parameters: rotor inertia and friction on the
DualV drives, gravity -y on the 3-RRR) it prints, along a PD-held motion
around home with sinusoidal torques:

* ``mujoco.mj_step`` on the plant's model, microseconds per substep (RK4,
  0.1 ms), the floor of the MuJoCo plant, and the same for ``implicitfast``;
* :meth:`MujocoPlant.step` over one 1 ms period (10 substeps + state mapping),
  with its real-time factor (1 ms / time per period) and its ratio to 10 ``mj_step``;
* :meth:`PinocchioPlant.step` over one 1 ms period (one RK4 step of pardyn's
  constrained forward dynamics + projection), real-time factor and ratio to
  the MuJoCo plant's period;
* for the DualV, each integrator and step (``plant_timestep``) the sim offers: the time of one 1 ms period
  (median), the largest joint deviation from the same run integrated with RK4 at 0.05 ms (the reference) and
  the largest closure violation, over 2 s of the estimator benchmark's exciting trajectory tracked by the
  identification runs' joint PD (kp 100, kd 6): what a free-running sim that must keep 1 kHz may trade
  (``bench/loop.py --plant-timestep`` then measures the chosen step in the DDS loop).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import mujoco
import numpy as np
import pinocchio as pin

import pardyn
from pardyn.plants import Plant
from pardyn.plants.mujoco_plant import MujocoPlant
from pardyn.plants.pinocchio_plant import PinocchioPlant

PERIOD = 1e-3  # s
PERIODS = 300  # control periods per timing round


def median_micros(function: Callable[[], int], rounds: int = 5) -> float:
    """Median over ``rounds`` of the time per unit of work (microseconds); ``function`` returns its unit count."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        units = function()
        samples.append((time.perf_counter() - start) / units * 1e6)
    return float(np.median(samples))


def hold_torques(robot: pardyn.Robot) -> np.ndarray:
    velocity_map = robot.differential.task_velocity_map(robot.home)
    gravity = pin.computeGeneralizedGravity(robot.model, robot.model.createData(), robot.home)
    return np.linalg.lstsq(velocity_map[robot.actuated_indices].T, velocity_map.T @ gravity, rcond=None)[0]


def control_loop(robot: pardyn.Robot, plant: Plant) -> Callable[[], int]:
    """PERIODS control periods of PD hold + sinusoids from home; returns the period count."""
    a = robot.actuated_indices
    hold = hold_torques(robot)
    frequencies = 1.0 + 0.37 * np.arange(len(a))

    def run() -> int:
        state = plant.reset(robot.home)
        for k in range(PERIODS):
            tau = (hold + 2.0 * np.sin(2 * np.pi * frequencies * k * PERIOD)
                   - 100.0 * (state.q[a] - robot.home[a]) - 4.0 * state.qdot[a])
            state = plant.step(tau, PERIOD)
        return PERIODS

    return run


def raw_steps(plant: MujocoPlant, robot: pardyn.Robot) -> Callable[[], int]:
    """10 * PERIODS bare ``mj_step`` calls (torques held at the gravity hold); returns the step count."""
    hold = hold_torques(robot)

    def run() -> int:
        plant.reset(robot.home)
        plant.data.ctrl[:] = hold
        for _ in range(10 * PERIODS):
            mujoco.mj_step(plant.model, plant.data)
        return 10 * PERIODS

    return run


def exciting_run(robot: pardyn.Robot, reference, start: np.ndarray, integrator: str, timestep: float,
                 periods: int) -> tuple[np.ndarray, float, float]:
    """The joint positions after each 1 ms period (periods, nv) of ``reference`` tracked by joint PD, the median
    period's time (s) and the largest closure violation (sampled every 10 periods)."""
    from pardyn.control import JointReference, actuator_limits  # noqa: PLC0415
    from pardyn.control.pd import JointPD  # noqa: PLC0415

    plant = MujocoPlant(robot, None, timestep=timestep, integrator=integrator)
    law = JointPD(100.0, 6.0, limits=actuator_limits(robot))
    a = robot.actuated_indices
    state = plant.reset(start)
    positions, times, violation = [], [], 0.0
    for k in range(periods):
        i = min(k // 10, len(reference.times) - 1)  # the 100 Hz reference held over 10 periods
        tau = law.torques(state.q[a], state.qdot[a],
                          JointReference(reference.position[i], reference.velocity[i], reference.acceleration[i]))
        begin = time.perf_counter()
        state = plant.step(tau, PERIOD)
        times.append(time.perf_counter() - begin)
        positions.append(state.q.copy())
        if k % 10 == 0:
            violation = max(violation, plant.closure_violation())
    return np.array(positions), float(np.median(times)), violation


def integrators_and_steps(name: str = "dualv", seconds: float = 2.0) -> None:
    """The cost and the deviation of each integrator and step (module docstring)."""
    from pardyn.experiments.estimator_benchmark import _design  # noqa: PLC0415 - its exciting trajectory

    robot = pardyn.load_robot(name)
    reference, start = _design(name, seconds, 1)
    periods = round(seconds / PERIOD)
    truth, truth_time, truth_violation = exciting_run(robot, reference, start, "RK4", 5e-5, periods)
    print(f"\n{name}: {seconds:g} s of an exciting trajectory under joint PD, 1 ms periods (motion amplitude "
          f"{np.max(np.abs(truth - truth[0])):.3f} rad); reference RK4 at 0.05 ms: {truth_time * 1e6:.0f} us a "
          f"period, closure violation {truth_violation:.1e}")
    print(f"  {'integrator':12s} {'step (ms)':>9s} {'us a period':>11s} {'max |q - q_ref| (rad)':>22s} "
          f"{'closure violation':>18s}")
    for integrator in ("RK4", "implicitfast"):
        for timestep in (1e-4, 2e-4, 5e-4, 1e-3):
            positions, period_time, violation = exciting_run(robot, reference, start, integrator, timestep, periods)
            default = "  (the default)" if (integrator, timestep) == ("RK4", 1e-4) else ""
            print(f"  {integrator:12s} {timestep * 1e3:9.1f} {period_time * 1e6:11.0f} "
                  f"{np.max(np.abs(positions - truth)):22.2e} {violation:18.1e}{default}")


def main() -> None:
    print(f"{'robot':6s} {'operation':44s} {'us':>9s} {'RTF':>7s} {'ratio':>22s}")
    for name in ("dualv", "rrr3"):
        robot = pardyn.load_robot(name)
        mujoco_plant = MujocoPlant(robot)
        fast_plant = MujocoPlant(robot, integrator="implicitfast")
        pinocchio_plant = PinocchioPlant(robot)
        substep = median_micros(raw_steps(mujoco_plant, robot))
        fast_substep = median_micros(raw_steps(fast_plant, robot))
        mujoco_period = median_micros(control_loop(robot, mujoco_plant))
        fast_period = median_micros(control_loop(robot, fast_plant))
        pinocchio_period = median_micros(control_loop(robot, pinocchio_plant), rounds=3)
        rows = [
            ("mujoco.mj_step, RK4 (per 0.1 ms substep)", substep, None, ""),
            ("mujoco.mj_step, implicitfast (per substep)", fast_substep, None,
             f"{fast_substep / substep:6.2f} x RK4 step"),
            ("MujocoPlant.step, RK4 (per 1 ms period)", mujoco_period, 1e3 / mujoco_period,
             f"{mujoco_period / (10 * substep):6.2f} x 10 mj_step"),
            ("MujocoPlant.step, implicitfast (per period)", fast_period, 1e3 / fast_period,
             f"{fast_period / (10 * fast_substep):6.2f} x 10 mj_step"),
            ("PinocchioPlant.step, RK4 1 ms (per period)", pinocchio_period, 1e3 / pinocchio_period,
             f"{pinocchio_period / mujoco_period:6.2f} x MujocoPlant"),
        ]
        for label, micros, rtf, ratio in rows:
            rtf_text = "" if rtf is None else f"{rtf:7.1f}"
            print(f"{name:6s} {label:44s} {micros:9.1f} {rtf_text:>7s} {ratio:>22s}")
    integrators_and_steps()


if __name__ == "__main__":
    main()
