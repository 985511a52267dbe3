"""Identifiability decided by the data (issue 25): the runs' base parameters against the model's structural ones."""

from __future__ import annotations

import numpy as np

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
