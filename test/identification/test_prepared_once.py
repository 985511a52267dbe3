"""Bags prepared once for several identifications (issue 38): within ``prepared_once`` the estimator benchmark's
estimators on one draw read, filter and model the draw's bag and the held-out one once. The reference is the same
identifications without it: every figure bitwise equal; the preparations are counted at ``_prepare_bag``."""

from __future__ import annotations

import numpy as np
import pytest

import pardyn.identification.preparation as preparation
from pardyn.experiments import estimator_benchmark as eb
from pardyn.identification.model_simulation import ClosedLoopSetup
from pardyn.identification.pipeline import identify
from pardyn.identification.settings import IdentificationSettings
from pardyn.robot import load_robot
from pardyn.simulation.identification_runs import controller


def test_each_bag_is_prepared_once_and_the_figures_are_those_prepared_apart(tmp_path, monkeypatch):
    options = eb.BenchmarkOptions(robots=("five_bar",), identification_s=2.5, validation_s=2.5)
    setup = eb._prepare("five_bar", options, tmp_path)
    bag = eb._record("five_bar", setup["truth_parameters"], setup["reference"], setup["start"], 2.5, eb.LEVELS[1],
                     1000, tmp_path / "draw")
    robot = load_robot("five_bar")
    closed_loop = [ClosedLoopSetup(controller(robot), setup["reference"])]
    settings = IdentificationSettings(workers=1, estimator_iterations=1, model_rate_hz=1000.0)
    prepared = []
    real = preparation._prepare_bag
    monkeypatch.setattr(preparation, "_prepare_bag", lambda *a, **k: prepared.append(a[2]) or real(*a, **k))

    def run(name):
        return identify(robot, [bag], validate_bags=[setup["validation"]], settings=settings.replace(estimator=name),
                        closed_loop=closed_loop if name == "iv" else None, show_progress=False)

    names = ("ols", "wls", "iv")
    apart = [run(name) for name in names]
    assert len(prepared) == 2 * len(names)  # the bag and the held-out one, for each
    with preparation.prepared_once():
        together = [run(name) for name in names]
        with pytest.raises(ValueError, match="read-only"):  # what is handed out cannot be changed under the others
            preparation.prepare_bag(robot, None, bag, settings).observation[0, 0, 0] = 1.0
    assert len(prepared) == 2 * len(names) + 2
    for alone, shared in zip(apart, together):
        np.testing.assert_array_equal(shared.estimate.chi, alone.estimate.chi)
        np.testing.assert_array_equal(shared.estimate.std, alone.estimate.std)
        assert shared.validation[0].relative_error_norm == alone.validation[0].relative_error_norm
    run("wls")  # outside the block: prepared again
    assert len(prepared) == 2 * len(names) + 4
