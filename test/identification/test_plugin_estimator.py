"""An estimator with an option of its own is one file (test/identification/ridge_estimator.py): its
option reaches ``estimate()``, the pipeline's settings and ``pardyn identify``'s flags without any
other file changing.

The estimate is checked against the closed form ``(W^T W + lambda I)^-1 W^T Y`` (the estimator
solves the stacked least squares instead).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from pardyn.bags.joint_states import write_joint_states
from pardyn.cli import main
from pardyn.cli.identify import add_arguments
from pardyn.cli.options import option_values
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.errors import InputError
from pardyn.identification.estimators import ESTIMATORS, estimate, options_of_estimators
from pardyn.identification.least_squares import LinearSystem
from pardyn.identification.settings import IdentificationSettings

from .ridge_estimator import RidgeOptions, register_estimator


@pytest.fixture
def ridge():
    name = register_estimator()
    yield name
    ESTIMATORS.unregister(name)


def test_the_estimate_is_the_closed_form(ridge):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((200, 4)) * [1.0, 5.0, 0.2, 2.0]
    y = w @ [1.0, -2.0, 3.0, 0.5] + 0.1 * rng.standard_normal(200)
    system = LinearSystem(w, y, (100, 100))
    for lam in (0.0, 0.3, 50.0):
        closed_form = np.linalg.solve(w.T @ w + lam * np.eye(4), w.T @ y)
        for options in (RidgeOptions(ridge=lam), {"estimator_ridge": lam}):
            result = estimate(ridge, system, options)
            assert result.estimator == "ridge"
            np.testing.assert_allclose(result.estimate.chi, closed_form, rtol=1e-9)
    with pytest.raises(InputError, match=r"parameter estimator_ridge: -1.0 outside \[0, 1e\+12\]"):
        estimate(ridge, system, {"estimator_ridge": -1.0})


def test_the_option_is_a_setting_and_a_flag(ridge, capsys):
    settings = IdentificationSettings(estimator="ridge", estimator_ridge=0.5)
    assert settings.estimator.values() == {"estimator_ridge": 0.5}
    assert settings.replace(estimator="wls").estimator.values() == {"estimator_ridge": 0.5}  # kept for a change back
    parser = argparse.ArgumentParser(prog="pardyn identify")
    add_arguments(parser)
    shown = " ".join(parser.format_help().split())
    assert "--estimator-ridge RIDGE ridge: Tikhonov weight lambda of ||chi||^2 (0: ordinary least squares) " \
           "(default 0.0)" in shown
    args = parser.parse_args(["--robot", "ur5e", "--out", "r.json", "--estimator", "ridge", "--estimator-ridge", "2.5"])
    assert option_values(args, options_of_estimators()) == {"estimator_ridge": 2.5}
    with pytest.raises(SystemExit):
        parser.parse_args(["--robot", "ur5e", "--out", "r.json", "--estimator-ridge", "-1"])
    assert "--estimator-ridge: expected a number in [0, 1e+12]" in capsys.readouterr().err


def test_the_option_is_gone_with_its_estimator():
    assert "estimator_ridge" not in {spec.parameter for spec, _ in options_of_estimators()}
    with pytest.raises(InputError, match="unknown identification setting 'estimator_ridge'"):
        IdentificationSettings(estimator_ridge=0.5)


def test_pardyn_identify_runs_it_with_the_flag(ridge, load, tmp_path):
    """Through the whole pipeline: lambda 0 fits the nominal model's own torques, a large lambda shrinks
    the parameters and the fit degrades."""
    robot = load("ur5e")
    t = np.arange(0.0, 8.0, 2e-3)  # 500 Hz
    rng = np.random.default_rng(4)
    frequencies, phases = rng.uniform(0.2, 0.6, (3, 6)), rng.uniform(0, 2 * np.pi, (3, 6))
    q = robot.home + sum(0.3 * np.sin(2 * np.pi * f * t[:, None] + p) for f, p in zip(frequencies, phases))
    qdot = sum(0.3 * 2 * np.pi * f * np.cos(2 * np.pi * f * t[:, None] + p) for f, p in zip(frequencies, phases))
    qddot = sum(-0.3 * (2 * np.pi * f) ** 2 * np.sin(2 * np.pi * f * t[:, None] + p)
                for f, p in zip(frequencies, phases))
    bag = write_joint_states(tmp_path / "bag", t, list(robot.actuated_names), q,
                             effort=InverseDynamics(robot).torques_batch(q, qdot, qddot))
    results = {}
    for lam in ("0", "1e4"):
        out = tmp_path / f"ridge_{lam}.json"
        assert main(["identify", "--robot", "ur5e", "--bag", str(bag), "--estimator", "ridge", "--estimator-ridge", lam,
                     "--effort-delay", "0", "--out", str(out)]) == 0
        results[lam] = json.loads(out.read_text())
    assert results["0"]["estimator"]["name"] == "ridge"
    assert results["0"]["fit"]["relative_error_norm"] < 0.01 < results["1e4"]["fit"]["relative_error_norm"]
    norms = {lam: np.linalg.norm([p["value"] for p in data["base_parameters"]]) for lam, data in results.items()}
    assert norms["1e4"] < norms["0"]
