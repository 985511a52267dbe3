#!/usr/bin/env python3
"""Peers side by side: MuJoCo's own system identification (``mujoco.sysid``) and pardyn on the same bags.

Data: the DualV and the Delta recorded from the MuJoCo plant as built
(:mod:`pardyn.simulation.identification_runs`: every body scaled by up to 15 %,
drive terms by up to 30 %; 1 kHz, 2**17 counts/rev, 1 % torque noise): a run
without payload, one with the robot's reference load (:data:`PAYLOADS`) and a
held-out run, recorded once into ``out/bench/peers/<robot>`` and reused.

pardyn: ``identify`` (IDIM-WLS on the base parameters, eq. 49 for the payload).

``mujoco.sysid`` (mujoco 4, ``pip install 'mujoco[sysid]'``): rollout-based; the
model is the plant's MJCF (``MujocoPlant(robot).mjcf()``, nominal parameters, 1 ms
implicitfast steps, loops closed by its equality constraints) with joint-position
sensors on the actuated joints. The recorded torques drive open-loop rollouts of
0.5 s windows (one every second of each run, started from the measured state: the
tree coordinates pardyn's closed-loop solver gives) and MuJoCo's least squares
fits the simulated to the measured positions. Its parameters are what its
``Parameter`` modifiers can set on an ``MjSpec`` and the truth's structure: one
scale per body (mass and inertia, as the as-built draw scales them), armature,
damping and frictionloss per actuated joint, and the payload's mass and centre of
mass (a body welded to the platform in the loaded runs' model). Starting point:
the nominal model and half the payload's bounds.

Both are judged the same way on the held-out run: the actuator torques of the
identified parameters (pardyn's inverse dynamics on the measured states, minimum
norm on the redundant DualV) against the measured ones, relative error norm; the
as-built truth's own error is printed as the floor; the payload mass against the
known one. Times are wall-clock times of the identification alone (both single
process; sysid's rollouts on its own threads, ``n_threads`` = cores).
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import time
from pathlib import Path

import numpy as np

import pardyn
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.regressor import Regressor
from pardyn.simulation.identification_runs import PAYLOADS, Run, record_runs
from pardyn.identification.pipeline import IdentificationSettings, identify, prepare_bag
from pardyn.plants.mujoco_plant import MujocoPlant

DATA = Path(__file__).resolve().parents[1] / "out" / "bench" / "peers"
ROBOTS = ("dualv", "delta")
DURATION_S, VALIDATION_S = 20.0, 10.0
WINDOW_S, EVERY_S = 0.5, 1.0
MAX_ITERATIONS = 30  # sysid's least squares (its objective stops changing after about 10 on the DualV)


def recorded(name: str) -> tuple[dict[str, Path], object]:
    """The three bags of ``name`` (recorded once) and the as-built truth."""
    folder = DATA / name
    runs = [Run("unloaded", 1, DURATION_S), Run("loaded", 2, DURATION_S, PAYLOADS[name]),
            Run("validation", 3, VALIDATION_S)]
    if not (folder / "truth.json").is_file():
        print(f"recording the {name} runs into {folder} (once) ...", file=sys.stderr)
        recording = record_runs(name, runs, folder, show_progress=False)
        return recording.bags, recording.truth
    from pardyn.simulation.identification_runs import as_built_parameters  # noqa: PLC0415

    robot = pardyn.load_robot(name)
    return {run.name: folder / run.name for run in runs}, as_built_parameters(robot.nominal_parameters, seed=7)


def held_out_error(robot, parameters, validation) -> float:
    """Relative error norm of the actuator torques of ``parameters`` on the held-out run's measured states."""
    predicted = InverseDynamics(robot, parameters).torques_batch(validation.q, validation.qdot, validation.qddot)
    return float(np.linalg.norm(predicted - validation.torque) / np.linalg.norm(validation.torque))


def run_pardyn(robot, bags) -> tuple[float, object, float]:
    start = time.perf_counter()
    result = identify(robot, [bags["unloaded"]], loaded_bags=[bags["loaded"]], show_progress=False)
    return time.perf_counter() - start, result.parameters.without_payload(), float(result.payload["mass"])


def run_sysid(robot, prepared: dict, payload) -> tuple[float, object, float, int]:
    """``mujoco.sysid`` on windows of the unloaded and loaded runs: (time, parameters, payload mass, iterations)."""
    import mujoco  # noqa: PLC0415
    from mujoco import sysid  # noqa: PLC0415

    logging.getLogger().setLevel(logging.WARNING)
    plant = MujocoPlant(robot, timestep=1e-3, integrator="implicitfast")
    nominal = robot.nominal_parameters
    bodies = [b.name for b in nominal.bodies if b.standard[9] > 0.0]  # massless bodies: nothing to scale
    params = sysid.ParameterDict()

    def body_scale(name, mass, inertia):
        def modify(spec, parameter):
            body = spec.body(name)
            body.mass = mass * parameter.value[0]
            body.fullinertia = inertia * parameter.value[0]
        return modify

    def joint_term(name, attribute):
        def modify(spec, parameter):
            joint = spec.joint(name)
            if attribute == "damping":
                joint.damping = [parameter.value[0], 0.0, 0.0]
            else:
                setattr(joint, attribute, parameter.value[0])
        return modify

    def load(spec, parameter):
        body = spec.body("identified_payload")
        if body is not None:  # the loaded runs' model only
            body.mass = parameter.value[0]
            body.ipos = parameter.value[1:4]

    reference = mujoco.MjSpec.from_string(plant.mjcf())
    for body in bodies:
        spec_body = reference.body(body)
        params.add(sysid.Parameter(f"scale_{body}", 1.0, 0.5, 1.5,
                                   modifier=body_scale(body, float(spec_body.mass),
                                                       np.array(spec_body.fullinertia, dtype=float))))
    for joint in robot.actuated_names:
        spec_joint = reference.joint(joint)
        for attribute, value in (("armature", spec_joint.armature), ("damping", spec_joint.damping[0]),
                                 ("frictionloss", spec_joint.frictionloss)):
            params.add(sysid.Parameter(f"{attribute}_{joint}", float(value), 0.0, max(3.0 * float(value), 1e-3),
                                       modifier=joint_term(joint, attribute)))
    mass_bound = 3.0 * payload.mass
    params.add(sysid.Parameter("payload", [0.5 * mass_bound, 0.0, 0.0, 0.0], [0.0, -0.1, -0.1, -0.1],
                               [mass_bound, 0.1, 0.1, 0.1], modifier=load))

    groups = []
    for name, data in prepared.items():
        spec = mujoco.MjSpec.from_string(plant.mjcf())
        spec.option.timestep = 1e-3
        for joint in robot.actuated_names:
            spec.add_sensor(name=f"{joint}_pos", type=mujoco.mjtSensor.mjSENS_JOINTPOS,
                            objtype=mujoco.mjtObj.mjOBJ_JOINT, objname=joint)
        if name == "loaded":
            platform = spec.body(payload.frame)
            body = platform.add_body(name="identified_payload", pos=[0.0, 0.0, 0.0])
            body.explicitinertial = True
            body.mass = 0.5 * mass_bound
            body.inertia = np.diag(payload.inertia).tolist()
        model = spec.compile()
        t = data.t - data.t[0]
        window = int(round(WINDOW_S / (t[1] - t[0])))
        starts = range(0, len(t) - window, int(round(EVERY_S / (t[1] - t[0]))))
        names, states, controls, sensors = [], [], [], []
        actuated = [robot.joint_names.index(j) for j in robot.actuated_names]
        for k in starts:
            piece = slice(k, k + window)
            qpos = np.zeros(model.nq)
            qvel = np.zeros(model.nv)
            qpos[plant.qpos_addresses] = data.q[k]
            qvel[plant.qpos_addresses] = data.qdot[k]
            names.append(f"{name}_{k}")
            states.append(sysid.create_initial_state(model, qpos, qvel))
            times = t[piece] - t[k]
            controls.append(sysid.TimeSeries(times, data.torque[piece]))
            sensors.append(sysid.TimeSeries.from_names(times, data.q[piece][:, actuated], model))
        groups.append(sysid.ModelSequences(name, spec, names, states, controls, sensors))
    residual = sysid.build_residual_fn(models_sequences=groups)
    printed = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed):  # its least squares prints every iteration
        fitted, _ = sysid.optimize(initial_params=params, residual_fn=residual, optimizer="mujoco", verbose=False,
                                   max_iters=MAX_ITERATIONS)
    elapsed = time.perf_counter() - start
    iterations = sum(line.startswith("iter:") for line in printed.getvalue().splitlines())

    values = nominal.as_dict()
    vector = nominal.vector().copy()
    for k, body in enumerate(nominal.bodies):
        if body.name in bodies:
            vector[10 * k:10 * k + 10] *= fitted[f"scale_{body.name}"].value[0]
    identified = nominal.with_vector(vector)
    drives = {}
    for joint in robot.actuated_names:
        drives[f"ia_{joint}"] = fitted[f"armature_{joint}"].value[0]
        drives[f"fv_{joint}"] = fitted[f"damping_{joint}"].value[0]
        drives[f"fs_{joint}"] = fitted[f"frictionloss_{joint}"].value[0]
    identified = identified.with_values({k: float(v) for k, v in drives.items() if k in values})
    return elapsed, identified.without_payload(), float(fitted["payload"].value[0]), iterations


def main() -> None:
    print(f"{'robot':7s} {'peer':12s} {'time s':>8s} {'held-out torque error %':>24s} {'payload mass error %':>21s}")
    for name in ROBOTS:
        robot = pardyn.load_robot(name)
        bags, truth = recorded(name)
        settings = IdentificationSettings()
        regressor = Regressor(robot)
        prepared = {run: prepare_bag(robot, regressor, bags[run], settings) for run in ("unloaded", "loaded")}
        validation = prepare_bag(robot, regressor, bags["validation"], settings)
        payload = PAYLOADS[name]
        floor = held_out_error(robot, truth.without_payload(), validation)
        nominal_error = held_out_error(robot, robot.nominal_parameters.without_payload(), validation)
        wall, parameters, mass = run_pardyn(robot, bags)
        print(f"{name:7s} {'pardyn':12s} {wall:8.2f} {100 * held_out_error(robot, parameters, validation):24.2f} "
              f"{100 * abs(mass - payload.mass) / payload.mass:21.2f}")
        wall, parameters, mass, iterations = run_sysid(robot, prepared, payload)
        print(f"{name:7s} {'mujoco.sysid':12s} {wall:8.2f} {100 * held_out_error(robot, parameters, validation):24.2f} "
              f"{100 * abs(mass - payload.mass) / payload.mass:21.2f}   ({iterations} iterations)")
        print(f"{name:7s} {'(truth)':12s} {'':8s} {100 * floor:24.2f}   nominal (CAD) model {100 * nominal_error:.2f} %")


if __name__ == "__main__":
    main()
