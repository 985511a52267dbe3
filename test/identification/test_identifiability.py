"""Identifiability decided by the data (issue 25): the runs' base parameters against the model's structural ones."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.identification.base_parameters import base_parameters
from pardyn.identification.identifiability import compare_bases

NAMES = ["fv_j1", "fs_j1", "xx_link2", "ia_j3", "fv_j2"]


def test_parameters_the_runs_cannot_identify_are_named_with_the_reason():
    rng = np.random.default_rng(0)
    structural = base_parameters(rng.standard_normal((200, 5)), names=NAMES)  # every column independent
    data = rng.standard_normal((200, 5))
    data[:, 2] = 2.0 * data[:, 0]  # xx_link2 collinear with fv_j1 on this motion
    data[:, 3] = 0.0               # j3 still: its rotor inertia has no effect
    data[:, 4] = -0.5 * data[:, 1]  # j2's viscous friction collinear with fs_j1 (j2 efforts zero in every run)
    found = compare_bases(structural, base_parameters(data, names=NAMES),
                          motion={"j1": 1.2, "j2": 0.8, "j3": 0.001}, silent=["j2"], body_joints={"link2": "j1"})
    assert found.lost == (
        ("xx_link2", "collinear on this data: its column of W = 2*fv_j1"),
        ("ia_j3", "joint j3 hardly moves (0.001 rad or m peak to peak)"),
        ("fv_j2", "the efforts of joint j2 are zero in every run"),
    )
    notes = found.notes()
    assert notes[0] == "not identifiable from these runs: xx_link2: collinear on this data: its column of W = 2*fv_j1"
    assert notes[-1].startswith("3 of the model's 5 structural base parameters are not identified")
    assert compare_bases(structural, structural, motion={"j1": 1.0}).notes() == []


def test_true_base_values_follow_the_regrouping_and_unknown_parts_stay_unknown():
    from pardyn.identification.truth import compare_with_truth  # noqa: PLC0415

    regrouping = np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 1.0]])  # aR = a + 0.5 b; c (payload: unknown truth)
    found = compare_with_truth(["aR", "c"], np.array([2.1, 3.0]), np.array([0.05, 0.1]), regrouping,
                               np.array([1.0, 2.0, np.nan]), floor=[0.012])
    row, unknown = found.rows()
    assert row["true"] == 2.0 and row["error_in_std"] == pytest.approx(2.0) and row["error_percent"] == pytest.approx(5)
    assert np.isnan(unknown["true"])
    assert found.as_json()["base_parameters"][1]["true"] is None and found.as_json()["validation_floor"] == [0.012]
