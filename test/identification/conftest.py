"""Shared by the identification tests: the Staubli TX40 run of the README's 'Your own data' section, and a maker's
logs of a serial arm whose truth is known (issue 25)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

TX40 = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "staubli_tx40"

DESCRIPTION = f"""\
# The Staubli TX40 of Gautier's group, as a user describes it (dataset README for the transmission).
name: tx40
urdf: {TX40 / "urdf" / "tx40_mdh_modified.urdf"}
task: {{q1: joint_1, q2: joint_2, q3: joint_3, q4: joint_4, q5: joint_5, q6: joint_6}}
actuated: [joint_1, joint_2, joint_3, joint_4, joint_5, joint_6]
closures: []
home:
  task: {{q1: 0.0, q2: 0.0, q3: 0.0, q4: 0.0, q5: 0.0, q6: 0.0}}
transmissions:                      # theta_m = sum_j ratio q_j + offset (rad), dataset README
  - {{motor: motor_1, joints: {{joint_1: 32.0}}}}
  - {{motor: motor_2, joints: {{joint_2: 32.0}}, offset: 50.26548245743669}}    # q2 = theta/32 - pi/2
  - {{motor: motor_3, joints: {{joint_3: 45.0}}, offset: -70.68583470577035}}   # q3 = theta/45 + pi/2
  - {{motor: motor_4, joints: {{joint_4: -48.0}}}}
  - {{motor: motor_5, joints: {{joint_5: 45.0}}}}
  - {{motor: motor_6, joints: {{joint_5: 32.0, joint_6: 32.0}}}}               # motor 6 turns with q5 + q6
"""
# the published recipe: 100 Hz Butterworth, 5 kHz -> 50 Hz, 20 samples trimmed, per-joint speed thresholds
MIN_SPEED = "0.05009095,0.05009095,0.07504916,0.0715585,0.05585054,0.12217305"  # dq_lim_def, rad/s


def _tx40_arguments(folder: Path) -> list[str]:
    """``pardyn identify`` arguments of the TX40 run (the README's 'Your own data' example)."""
    robot = folder / "tx40.yaml"
    robot.write_text(DESCRIPTION)
    data = TX40 / "data"
    return [
        "identify", "--robot", str(robot),
        "--csv", f"position={data / 'pos_read_data.csv'}", "--csv", f"effort={data / 'curr_data.csv'}",
        "--rate", "5000", "--joint-map", ",".join(f"Joint_{k}=motor_{k}" for k in range(1, 7)),
        "--cutoff", "100", "--decimation", "100", "--model-rate", "250", "--trim", "0.004",
        "--min-speed", MIN_SPEED, "--out", str(folder / "tx40.json"), "--report", str(folder / "report"),
    ]



@pytest.fixture(scope="session")
def tx40_arguments():
    """``tx40_arguments(folder)``: writes the TX40 description into ``folder``, returns the CLI arguments."""
    return _tx40_arguments


# --- a maker's logs of a serial arm (issue 25): the UR5e as the robot, its truth known ---------------------------

VENDOR_RATE_HZ = 1000.0
VENDOR_FRICTION = {"ia": 0.08, "fv": 1.5, "fs": 2.0}  # the arm as built: drive terms the nominal (CAD) model lacks


def vendor_truth(robot):
    """The UR5e as built: its nominal parameters with rotor inertia and friction on every joint."""
    return robot.nominal_parameters.with_values(
        {f"{kind}_{joint}": value * (1.0 + 0.1 * k) for k, joint in enumerate(robot.actuated_names)
         for kind, value in VENDOR_FRICTION.items()})


def vendor_motion(nv: int, duration_s: float, seed: int, *, still: tuple[int, ...] = ()):
    """q, qdot, qddot (N, nv) at VENDOR_RATE_HZ: four harmonics of 0.25 Hz per joint around a random pose
    (a Fourier series, exact derivatives); the joints of ``still`` (indices) hold their first position."""
    from pardyn.excitation.fourier import FourierTrajectory  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    t = np.arange(int(round(duration_s * VENDOR_RATE_HZ))) / VENDOR_RATE_HZ
    centre = rng.uniform(-1.0, 1.0, nv)
    sine, cosine = rng.normal(0.0, 0.5, (2, nv, 4)) / np.arange(1, 5)
    series = FourierTrajectory(centre, sine, cosine, base_frequency_hz=0.25, duration_s=max(duration_s, 2.0),
                               ramp_s=0.5).series(t)
    q, qdot, qddot = centre + series[0], series[1], series[2]
    for j in still:
        q[:, j], qdot[:, j], qddot[:, j] = q[0, j], 0.0, 0.0
    return q, qdot, qddot


def write_vendor_run(path: Path, robot, truth, duration_s: float, seed: int, *, still: tuple[int, ...] = (),
                     zero_effort: bool = False, noise: float = 0.01, gear: float = 1.0,
                     delay_s: float = 0.0, stribeck: float = 0.0, unmeasured: tuple[int, ...] = ()) -> Path:
    """One run as the maker logs it: ``Time`` a sample index from 0, ``Position<k>``, ``Velocity<k>``,
    ``Torque<k>`` (joint torque sensors: the truth's torques, ``noise`` x their RMS of white noise,
    ``gear`` x, stamped ``delay_s`` late; all 0 for a planned trajectory; ``stribeck`` N m more friction at
    zero speed, ``stribeck sign(qdot) exp(-(qdot / 0.05)^2)``, which the model does not have), then currents,
    temperatures and commanded positions the identification must ignore. The joints of ``unmeasured``
    (indices) log a zero torque (a sensor the driver does not read)."""
    from pardyn.dynamics.regressor import Regressor  # noqa: PLC0415

    rng = np.random.default_rng(seed + 1000)
    q, qdot, qddot = vendor_motion(robot.nv, duration_s, seed, still=still)
    torque = Regressor(robot).matrix(q, qdot, qddot) @ truth.vector()  # (N, 6) N m
    torque += stribeck * np.sign(qdot) * np.exp(-((qdot / 0.05) ** 2))
    torque = torque + noise * np.sqrt(np.mean(torque**2, axis=0)) * rng.standard_normal(torque.shape)
    if delay_s:
        shift = int(round(delay_s * VENDOR_RATE_HZ))
        torque = np.concatenate([np.repeat(torque[:1], shift, axis=0), torque[:-shift]])
    torque = np.zeros_like(torque) if zero_effort else gear * torque
    torque[:, list(unmeasured)] = 0.0
    n = robot.nv
    header = ["Time", *(f"{field}{k}" for field in ("Position", "Velocity", "Torque", "Current", "Temperature",
                                                     "PositionCommanded") for k in range(1, n + 1))]
    columns = [np.arange(len(q)), q, qdot, torque, torque / 0.125, np.full_like(q, 35.0), q]
    np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(header), comments="", fmt="%.9g")
    return path


VENDOR_COLUMNS = "position=Position{i},velocity=Velocity{i},effort=Torque{i}"


@pytest.fixture(scope="session")
def vendor():
    """The maker's-log writer: ``vendor.write(path, robot, vendor.truth(robot), duration_s, seed, ...)``."""
    from types import SimpleNamespace  # noqa: PLC0415

    return SimpleNamespace(truth=vendor_truth, write=write_vendor_run, columns=VENDOR_COLUMNS, rate=VENDOR_RATE_HZ)
