"""Delta and hexapod dynamics: the exact models against power balance and the MuJoCo plant,
the Delta's simplified model against Codourey's closed form, base parameters against hand derivations.

Independent references:
* power balance: ``tau_a . qdot_a = dE/dt + friction power`` with pinocchio's mass matrix
  (armature ``ia`` included) and potential energy, ``dE/dt`` by central
  differences in time along a motion given by the closed-form inverse problem;
* MuJoCo (an independent engine) against pardyn's forward model over 0.2 s;
* Codourey (1998)'s simplified Delta model written here from the geometry::

      tau = (I_arm + ia + m_b L^2) qddot + fv qdot + fs sign(qdot) - (m_arm x_G + m_b L) g cos q
            + J^T m_n (xddot - g),   m_n = m_platform + 3 m_b,  J = dx/dq (closed form)

  (a pair of bars, 2 m_b / 2, at the elbow; 6 m_b / 2 at the platform);
* the base parameters of the simplified Delta counted by hand (19) and the regrouping of
  each hexapod piston's mass onto the platform (its frame origin is the ball joint).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.lumped import split_bar_masses
from pardyn.dynamics.regressor import Regressor
from pardyn.identification.base_parameters import base_parameters
from pardyn.plants.mujoco_plant import MujocoPlant

BARS = [f"leg{i}_bar{k}" for i in (1, 2, 3) for k in (1, 2)]
SPREAD = {"delta": 0.15, "hexapod": 0.015}  # m (and rad x 10 for the hexapod)


def motion(robot, t, seed=0):
    """A smooth task motion x(t) = home + a sin(w t + c) and its rates (closed-form inverse problem)."""
    rng = np.random.default_rng(seed)
    n = len(robot.task_names)
    scale = np.full(n, SPREAD[robot.name])
    scale[3:] *= 10.0
    amplitude, frequency, phase = scale * rng.uniform(0.5, 1.0, n), rng.uniform(2.0, 6.0, n), rng.uniform(0, 6, n)
    x = robot.home[robot.task_indices] + amplitude * np.sin(frequency * t + phase)
    xdot = amplitude * frequency * np.cos(frequency * t + phase)
    xddot = -amplitude * frequency**2 * np.sin(frequency * t + phase)
    q = robot.analytic.inverse(x)
    _, qdot, qddot = robot.differential.task_states(q, xdot, xddot)
    return x, xdot, xddot, q, qdot, qddot


@pytest.mark.parametrize("name", ["delta", "hexapod"])
def test_power_balance(load, name):
    robot = load(name)
    inverse = InverseDynamics(robot)
    model, data = inverse.model, inverse.model.createData()
    step = 1e-5
    for t in (0.1, 0.45, 0.8):
        *_, q, qdot, qddot = motion(robot, t)
        torques = inverse.torques(q, qdot, qddot)
        power = torques @ qdot[robot.actuated_indices]

        def total(s):
            *_, qs, qdots, _ = motion(robot, s)
            kinetic = 0.5 * qdots @ pin.crba(model, data, qs) @ qdots  # crba includes the armature ia
            return kinetic + pin.computePotentialEnergy(model, data, qs)

        energy_rate = (total(t + step) - total(t - step)) / (2 * step)
        friction = inverse.friction_torques(qdot) @ qdot
        scale = max(np.abs(torques) @ np.abs(qdot[robot.actuated_indices]), abs(energy_rate))
        assert abs(power - energy_rate - friction) <= 1e-6 * scale, (t, power, energy_rate, friction)


@pytest.mark.parametrize(("name", "amplitude"), [("delta", 2.0), ("hexapod", 5.0)])  # N m, N
def test_forward_model_agrees_with_mujoco_and_loops_stay_closed(name, amplitude):
    import pardyn

    robot = pardyn.load_robot(name)
    params = robot.nominal_parameters.with_values({f"fs_{j}": 0.0 for j in robot.actuated_names})  # smooth
    hold = InverseDynamics(robot, params).torques(robot.home, np.zeros(robot.nv), np.zeros(robot.nv))
    frequencies = 1.0 + 0.37 * np.arange(len(robot.actuated_names))

    def torque(t):
        return hold + amplitude * np.sin(2 * np.pi * frequencies * t)

    plant = MujocoPlant(robot, params)
    dt, states, worst = plant.timestep, [plant.state().q], 0.0
    for k in range(int(round(0.2 / dt))):
        states.append(plant.step(torque((k + 0.5) * dt), dt).q)
        worst = max(worst, plant.closure_violation())
    reference = simulate(ForwardDynamics(robot, params), lambda t, q, qdot: torque(t), robot.home,
                         np.zeros(robot.nv), duration=0.2, dt=1e-3)
    difference = np.abs(np.array(states)[::10] - reference.q).max()
    print(f"{name}: motion {np.abs(reference.q[-1] - robot.home).max():.3g}, MuJoCo vs forward model "
          f"{difference:.2e}, closure {worst:.2e} m")
    assert np.abs(reference.q[-1] - robot.home).max() > 2e-2  # a real motion (rad, m)
    assert difference < 1e-7
    assert worst <= 1e-9


def test_simplified_delta_is_codoureys_closed_form(load):
    robot = load("delta")
    exact = robot.nominal_parameters
    simplified = InverseDynamics(robot, split_bar_masses(robot, exact, BARS))
    values = exact.as_dict()
    m_bar, m_arm, xg = values["m_leg1_bar1"], values["m_arm1"], values["mx_arm1"] / values["m_arm1"]
    arm_inertia = values["yy_arm1"]  # about the motor axis (the arm frame's y through its origin)
    length = 0.524
    inertia = arm_inertia + values["ia_motor1"] + m_bar * length**2
    m_n = values["m_platform"] + 3 * m_bar
    g = np.array([0.0, 0.0, -9.81])
    worst = 0.0
    for t in (0.1, 0.3, 0.7):
        x, xdot, xddot, q, qdot, qddot = motion(robot, t, seed=1)
        a, adot, addot = (v[robot.actuated_indices] for v in (q, qdot, qddot))
        jacobian = robot.analytic.jacobian(x, a)  # xdot = J qdot
        expected = (inertia * addot + values["fv_motor1"] * adot + values["fs_motor1"] * np.sign(adot)
                    - (m_arm * xg + m_bar * length) * 9.81 * np.cos(a) + jacobian.T @ (m_n * (xddot - g)))
        worst = max(worst, np.max(np.abs(simplified.torques(q, qdot, qddot) - expected)) / np.max(np.abs(expected)))
    assert worst < 1e-9


def observation(robot, params, samples=45):
    regressor = Regressor(robot, params)
    rows = []
    for k in range(samples):
        *_, q, qdot, qddot = motion(robot, 0.05 * k, seed=k)
        rows.append(regressor.matrix(q, qdot, qddot))
    return base_parameters(rows, names=regressor.names)


def test_base_parameters(load):
    delta = load("delta")
    exact = delta.nominal_parameters
    simplified = split_bar_masses(delta, exact, BARS)
    lumped = type(simplified)(robot=simplified.robot, bodies=tuple(b for b in simplified.bodies if b.name not in BARS),
                              drives=simplified.drives, gravity=simplified.gravity, njoints=simplified.njoints,
                              nv=simplified.nv)
    # per arm yyR (with ia), mx, mz; per drive fv, fs, offset; the platform + payload mass
    assert observation(delta, lumped).n_base == 3 * 3 + 3 * 3 + 1
    hexapod = load("hexapod")
    base = observation(hexapod, hexapod.nominal_parameters)
    relation = next(r for r in base.relations if r.startswith("m_platformR"))
    assert all(f"+ 1.0*m_leg{j}_piston" in relation for j in range(1, 7))
    print(f"base parameters: delta simplified 19, hexapod {base.n_base}")


def test_split_bar_masses_names_what_it_cannot_split(load):
    from pardyn.errors import InputError

    robot = load("delta")
    params = robot.nominal_parameters
    with pytest.raises(InputError, match="no body 'leg9_bar1'"):
        split_bar_masses(robot, params, ["leg9_bar1"])
    with pytest.raises(InputError, match="platform: no body above it"):
        split_bar_masses(robot, params, ["platform"])
    with pytest.raises(InputError, match="arm1: no body above it"):  # the arm hangs on the base
        split_bar_masses(robot, params, ["arm1"])
