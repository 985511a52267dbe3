"""Drive gains identified with the dynamic parameters (issue 40 item 3): efforts logged as motor currents, runs
without and with a known payload (pardyn.identification.drive_gains, eq. G1).

The arm is the UR5e as built (conftest ``vendor``: rotor inertia and friction the nominal model lacks). Its
drives log currents ``i_j = tau_j / g_j`` plus 1 % white noise, with per-joint gains ``g`` chosen here (a
different one per joint, none of them the nominal 13 / 9 N m/A the test passes as the maker's values); the
torques come from pinocchio's inverse dynamics of the robot carrying the payload as one more body
(:meth:`Payload.added_to`), not from the regressor the identification builds. Reference: the gains written.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pardyn
from pardyn.cli import main
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.plants.payload import Payload

from .conftest import VENDOR_RATE_HZ, vendor_motion, vendor_truth

GAINS = np.array([12.1, 13.4, 12.7, 8.6, 9.5, 9.2])  # N m/A, the drives as built
NOMINAL = np.array([13.0, 13.0, 13.0, 9.0, 9.0, 9.0])  # N m/A, the maker's catalogue values
PAYLOAD = {"mass": 2.5, "com": [0.1, 0.1, 0.06], "inertia": [0.012, 0.010, 0.008, 0.0, 0.0, 0.0]}
LAYOUT = ["--time-unit", "samples", "--rate", str(VENDOR_RATE_HZ),
          "--columns", "position=Position{i},velocity=Velocity{i},effort=Current{i}"]


def _write(path, robot, parameters, seed: int, duration_s: float = 8.0):
    """A run as the drives log it: sample index, positions, velocities and currents (A), 1 % noise."""
    q, qdot, qddot = vendor_motion(robot.nv, duration_s, seed)
    torque = InverseDynamics(robot, parameters).torques_batch(q, qdot, qddot)  # (N, 6) N m
    currents = torque / GAINS
    rng = np.random.default_rng(seed + 500)
    currents += 0.01 * np.sqrt(np.mean(currents**2, axis=0)) * rng.standard_normal(currents.shape)
    header = ["Time", *(f"{field}{k}" for field in ("Position", "Velocity", "Current") for k in range(1, 7))]
    np.savetxt(path, np.column_stack([np.arange(len(q)), q, qdot, currents]), delimiter=",",
               header=",".join(header), comments="", fmt="%.10g")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gains")
    robot = pardyn.load_robot("ur5e")
    truth = vendor_truth(robot)
    load = Payload(PAYLOAD["mass"], np.array(PAYLOAD["com"]), np.diag(PAYLOAD["inertia"][:3]), robot.payload_frame)
    unloaded = _write(folder / "unloaded.csv", robot, truth, seed=3)
    loaded = _write(folder / "loaded.csv", robot, load.added_to(truth, robot.model), seed=4)
    held_out = _write(folder / "held_out.csv", robot, truth, seed=5, duration_s=6.0)
    (folder / "payload.yaml").write_text(
        "payload:\n" + "".join(f"  {key}: {value}\n" for key, value in PAYLOAD.items()))
    return folder, unloaded, loaded, held_out


def test_gains_identified_within_2_percent_with_a_known_payload(runs, capsys):
    folder, unloaded, loaded, held_out = runs
    nominal = ",".join(f"{joint}={g}" for joint, g in zip(pardyn.load_robot("ur5e").actuated_names, NOMINAL))
    out = folder / "result.json"
    assert main(["identify", "--robot", "ur5e", *LAYOUT, "--run", str(unloaded), "--loaded-run", str(loaded),
                 "--validate", str(held_out), "--payload", str(folder / "payload.yaml"), "--efforts-unit", "A",
                 "--drive-gains", nominal, "--out", str(out), "--report", str(folder / "report")]) == 0
    result = json.loads(out.read_text())
    gains = result["drive_gains"]
    assert gains["efforts_unit"] == "A" and gains["source"] == "identified"
    found = np.array([gains["joints"][joint]["gain"] for joint in gains["joints"]])
    error = np.abs(found / GAINS - 1.0)
    assert error.max() < 0.02, f"gains {found} against {GAINS}"
    assert all(row["unit"] == "N m/A" and row["nominal"] is not None for row in gains["joints"].values())
    # with the gains, the currents are torques: the payload identified beside them is the one weighed
    assert abs(result["payload"]["mass"] / PAYLOAD["mass"] - 1.0) < 0.02
    assert result["validation"]["relative_error_norm"] < 0.05  # held-out torques: 1 % noise, the gains' error
    text = (folder / "report" / "report.md").read_text()
    assert "Drive gains" in text and "N m/A" in text
    assert "drive gains" in capsys.readouterr().out
    print(f"drive gains: errors {np.round(100 * error, 3).tolist()} %; payload mass "
          f"{result['payload']['mass']:.4g} kg (2.5 weighed); held-out {100 * result['validation']['relative_error_norm']:.2f} %"
          f"(nominal model {100 * result['validation']['nominal']['relative_error_norm']:.2f} %)")


@pytest.mark.parametrize(("extra", "expected"), [
    (["--efforts-unit", "A"], "--efforts-unit A: efforts in amperes need the drive gains"),
    (["--efforts-unit", "A", "--payload", "PAYLOAD"], "--payload: the runs with the known payload on are missing"),
    (["--payload", "PAYLOAD", "--loaded-run", "LOADED"], "--payload identifies the drive gains of efforts logged in A"),
])
def test_missing_pieces_are_one_line_errors(runs, capsys, extra, expected):
    folder, unloaded, loaded, _ = runs
    extra = [str(folder / "payload.yaml") if e == "PAYLOAD" else str(loaded) if e == "LOADED" else e for e in extra]
    assert main(["identify", "--robot", "ur5e", *LAYOUT, "--run", str(unloaded), *extra,
                 "--out", str(folder / "never.json")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and expected in error[0], error
    assert not (folder / "never.json").exists()


def test_a_payload_file_without_a_mass_is_refused(runs, capsys):
    folder, unloaded, loaded, _ = runs
    (folder / "no_mass.yaml").write_text("payload:\n  com: [0, 0, 0.1]\n")
    assert main(["identify", "--robot", "ur5e", *LAYOUT, "--run", str(unloaded), "--loaded-run", str(loaded),
                 "--payload", str(folder / "no_mass.yaml"), "--efforts-unit", "A",
                 "--out", str(folder / "never.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert "no_mass.yaml" in error and "mass" in error and "\n" not in error


def _two_joint_systems(rng, payload_on_second: bool):
    """A hand-made case of eq. G1: joint j's torque ``a_j x_j`` (one parameter each), the payload's ``p x_3`` on
    joint 1 only (and on joint 2 when ``payload_on_second``); currents ``tau / g``, noise-free."""
    from pardyn.identification.least_squares import LinearSystem  # noqa: PLC0415

    a, g, p, n = np.array([2.0, 3.0]), np.array([5.0, 7.0]), 1.5, 200
    systems = []
    for loaded in (False, True):
        x = rng.standard_normal((2, n, 3))
        W = np.zeros((2 * n, 3))
        W[:n, 0], W[n:, 1] = x[0, :, 0], x[1, :, 1]
        W[:n, 2] = loaded * x[0, :, 2]
        W[n:, 2] = loaded * payload_on_second * x[1, :, 2]
        tau = W @ np.array([*a, p])
        systems.append(LinearSystem(W, np.concatenate([tau[:n] / g[0], tau[n:] / g[1]]), (n, n), ("a1", "a2", "p")))
    return systems, g, p


def test_g1_solves_a_hand_made_case_and_names_a_gain_the_payload_does_not_fix():
    from pardyn.errors import InputError  # noqa: PLC0415
    from pardyn.identification.drive_gains import gain_system, solve_drive_gains  # noqa: PLC0415

    rng = np.random.default_rng(0)
    (unloaded, loaded), g, p = _two_joint_systems(rng, payload_on_second=True)
    system = gain_system(unloaded, loaded, payload=[2], payload_values=np.array([p]), joints=("j1", "j2"))
    found = solve_drive_gains(system, joints=("j1", "j2"), units=("N m/A", "N m/A"), payload_mass_kg=1.0,
                              rank_eps=1e-8)
    np.testing.assert_allclose(found.gains, g, rtol=1e-9)
    assert found.torque_fit_error < 1e-9 and not found.not_identified
    # the payload loads joint 1 only: g2 and a2 fit the unloaded and loaded runs alike up to one scale
    (unloaded, loaded), g, p = _two_joint_systems(rng, payload_on_second=False)
    system = gain_system(unloaded, loaded, payload=[2], payload_values=np.array([p]), joints=("j1", "j2"))
    with pytest.raises(InputError, match=r"drive gains of \['j2'\]: the runs with the known payload do not fix"):
        solve_drive_gains(system, joints=("j1", "j2"), units=("N m/A", "N m/A"), payload_mass_kg=1.0, rank_eps=1e-8)
    found = solve_drive_gains(system, joints=("j1", "j2"), units=("N m/A", "N m/A"), payload_mass_kg=1.0,
                              nominal={"j1": 4.0, "j2": 6.5}, rank_eps=1e-8)
    assert found.gains[0] == pytest.approx(g[0], rel=1e-9) and found.gains[1] == 6.5
    assert [joint for joint, _ in found.not_identified] == ["j2"]
    assert any("j2: not identified" in line for line in found.lines())
