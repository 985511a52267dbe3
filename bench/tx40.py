#!/usr/bin/env python3
"""The Staubli TX40's real data: ``pardyn identify --csv`` as a user runs it, and FIGAROH on the same files.

pardyn: the command of the README's 'Your own data' section (the robot
description written here, pointing at the shared URDF; the transmission of
the dataset README), wall and CPU time, base parameters, fit error, the
published drive values and FIGAROH's published base parameters (%sigma < 10).

FIGAROH (``pip install figaroh``, 1.0.2): its own regressor
(``build_regressor_basic``: friction, rotor inertia, offsets) and double-QR
base parameters (``QRDecomposer.double_decomposition``) on the same files, with
the three steps of the published recipe that its TX40 example leaves out (the
wrist-coupling columns, decimation 5 kHz -> 50 Hz, the per-joint speed
thresholds); joint angles and torques through the dataset README's matrices;
the model loaded without geometry (the meshes are not shipped). Its base
parameters are compared with pardyn's by evaluating its regrouping
expressions with pardyn's estimate (:mod:`pardyn.identification.figaroh`).
"""

from __future__ import annotations

import csv
import json
import resource
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TX40 = REPO.parent / "shared" / "datasets" / "staubli_tx40"
sys.path.insert(0, str(REPO / "test" / "identification"))
from conftest import _tx40_arguments  # noqa: E402 - the README's command, one definition

from pardyn.identification.figaroh import figaroh_value, pardyn_name, parse_expression  # noqa: E402

RATIO = np.array([[32, 0, 0, 0, 0, 0], [0, 32, 0, 0, 0, 0], [0, 0, 45, 0, 0, 0], [0, 0, 0, -48, 0, 0],
                  [0, 0, 0, 0, 45, 0], [0, 0, 0, 0, 32, 32]], dtype=float)
OFFSET = np.array([0, -np.pi / 2, np.pi / 2, 0, 0, 0])
MIN_SPEED = np.array([0.05009095, 0.05009095, 0.07504916, 0.0715585, 0.05585054, 0.12217305])
RENAME = partial(pardyn_name, links=[f"link_{k}" for k in range(1, 7)], joints=[f"joint_{k}" for k in range(1, 7)],
                 motors=[f"motor_{k}" for k in range(1, 7)])


def published() -> list[tuple[str, float, float]]:
    with open(TX40 / "results" / "TX40_bp_5.csv", newline="") as stream:
        return [(row[0], float(row[3]), float(row[4])) for row in csv.reader(stream)]


def run_pardyn(folder: Path) -> tuple[dict, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pardyn.cli", *_tx40_arguments(folder)], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads((folder / "tx40.json").read_text()), wall, cpu


def run_figaroh() -> tuple[list[str], np.ndarray, float, float]:
    """FIGAROH's base-parameter expressions and values on the TX40 files; wall and CPU time (s)."""
    import pinocchio as pin  # noqa: PLC0415
    from figaroh.tools.qrdecomposition import QRDecomposer  # noqa: PLC0415
    from figaroh.tools.regressor import build_regressor_basic, get_index_eliminate  # noqa: PLC0415
    from scipy import signal  # noqa: PLC0415

    start, cpu_start = time.perf_counter(), time.process_time()
    model = pin.buildModelFromUrdf(str(TX40 / "urdf" / "tx40_mdh_modified.urdf"))
    robot = type("Robot", (), {"model": model, "data": model.createData()})()
    theta = np.loadtxt(TX40 / "data" / "pos_read_data.csv", delimiter=",", skiprows=1)
    current = np.loadtxt(TX40 / "data" / "curr_data.csv", delimiter=",", skiprows=1)
    rate, n = 5000.0, 6
    q = np.linalg.solve(RATIO, theta.T).T + OFFSET
    tau = current @ RATIO  # tau = R^T tau_m
    b, a = signal.butter(4, 100.0 / (rate / 2))
    q = signal.filtfilt(b, a, q, axis=0)
    dq = np.gradient(q, 1 / rate, axis=0)
    ddq = np.gradient(dq, 1 / rate, axis=0)
    config = {"has_friction": True, "has_actuator_inertia": True, "has_joint_offset": True,
              "is_joint_torques": True, "act_idxv": list(range(n))}
    W = build_regressor_basic(robot, q, dq, ddq, config)  # (n N, 10 n + 4 n), joint-major rows
    count = len(q)
    names = [f"{p}{k}" for k in range(1, n + 1) for p in ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")]
    names += [f"{p}{k}" for p in ("fv", "fs", "Ia", "off") for k in range(1, n + 1)]
    coupling = np.zeros((n * count, 3))  # Iam6, fvm6, fsm6 (the published recipe)
    sign = np.sign(dq[:, 4] + dq[:, 5])
    coupling[4 * count:5 * count] = np.column_stack([ddq[:, 5], dq[:, 5], sign])
    coupling[5 * count:6 * count] = np.column_stack([ddq[:, 4], dq[:, 4], sign])
    W = np.hstack([W, coupling])
    names += ["Iam6", "fvm6", "fsm6"]
    rows_W, rows_tau = [], []
    for j in range(n):  # trim 20 samples, decimate 5 kHz -> 50 Hz, drop slow samples, joint by joint
        block = slice(j * count + 20, (j + 1) * count - 20)
        w_j = signal.decimate(signal.decimate(W[block], 10, axis=0, zero_phase=True), 10, axis=0, zero_phase=True)
        t_j = signal.decimate(signal.decimate(tau[20:-20, j], 10, zero_phase=True), 10, zero_phase=True)
        v_j = signal.decimate(signal.decimate(dq[20:-20, j], 10, zero_phase=True), 10, zero_phase=True)
        moving = np.abs(v_j) >= MIN_SPEED[j]
        rows_W.append(w_j[moving])
        rows_tau.append(t_j[moving])
    W, tau = np.vstack(rows_W), np.concatenate(rows_tau)
    eliminated, kept = get_index_eliminate(W, dict.fromkeys(names, 0.0), 1e-6)
    W_e = np.delete(W, eliminated, 1)
    _, _, expressions, values = QRDecomposer().double_decomposition(tau, W_e, kept)
    return list(expressions), np.asarray(values), time.perf_counter() - start, time.process_time() - cpu_start


def main() -> None:
    if not TX40.is_dir():
        print(f"skipped: {TX40} absent (the shared datasets folder)")
        return
    with tempfile.TemporaryDirectory(prefix="pardyn-tx40-") as folder:
        result, wall, cpu = run_pardyn(Path(folder))
    values = {**result["standard_parameters"], **result["motor_parameters"]}
    fit = result["fit"]["relative_error_norm"]
    differences = [abs(figaroh_value(parse_expression(e, RENAME), values) - v) / abs(v)
                   for e, v, sigma in published() if sigma < 10]
    print("Staubli TX40, real data (45 000 samples at 5 kHz), pardyn identify --csv:")
    print(f"  wall {wall:.2f} s (target 10 s), CPU {cpu:.2f} s (imports included; the machine's load inflates wall)")
    print(f"  {len(result['base_parameters'])} base parameters, fit error {100 * fit:.2f} %; FIGAROH's published "
          f"base parameters with %sigma < 10 ({len(differences)}): max {100 * max(differences):.2f} %, "
          f"median {100 * np.median(differences):.2f} %")
    try:
        import figaroh  # noqa: F401, PLC0415
    except ImportError as error:
        print(f"  FIGAROH: not installed ({error}); pip install figaroh (extra 'bench') to compare in the same run")
        return
    expressions, figaroh_values, f_wall, f_cpu = run_figaroh()
    ours = np.array([figaroh_value(parse_expression(e, RENAME), values) for e in expressions])
    relative = np.abs(ours - figaroh_values) / np.maximum(np.abs(figaroh_values), 1e-12)
    sigma = dict((e, s) for e, _, s in published())
    well = [r for e, r in zip(expressions, relative) if sigma.get(e, np.inf) < 10]
    print("FIGAROH 1.0.2 on the same files (its regressor and double QR, the published recipe's three steps added):")
    print(f"  wall {f_wall:.2f} s, CPU {f_cpu:.2f} s (in-process, imports excluded); {len(expressions)} base parameters")
    print(f"  pardyn against FIGAROH in the same run: median difference {100 * np.median(relative):.2f} % over all, "
          f"{100 * np.median(well) if well else float('nan'):.2f} % (max {100 * max(well) if well else float('nan'):.2f} %) "
          f"over the {len(well)} it shares with the published %sigma < 10 set")


if __name__ == "__main__":
    main()
