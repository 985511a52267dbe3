"""The data diagnostics name the cause (issue 25): each check on signals whose cause is built in by hand."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.identification.diagnostics import (
    effort_delay_s,
    effort_notes,
    physical_notes,
    scale_notes,
    speed_notes,
)

NAMES = ["j1", "j2", "j3"]


def test_a_run_whose_efforts_are_all_zero_and_a_constant_effort_are_named():
    positions = np.linspace(0.0, 1.0, 200)[:, None] * [1.0, 2.0, 3.0]
    assert effort_notes("planned.csv", NAMES, np.zeros((200, 3)), positions) == [
        "planned.csv: efforts all zero (a planned trajectory logged without torques?): run excluded"]
    efforts = np.column_stack([np.sin(np.arange(200) * 0.1), np.full(200, 2.5), np.cos(np.arange(200) * 0.1)])
    notes = effort_notes("run.csv", NAMES, efforts, positions)
    assert notes == ["run.csv: j2: effort constant at 2.5 in every sample (not measured?): its equations are left "
                     "out"]


def test_a_gear_ratio_is_named_and_friction_the_cad_model_lacks_is_not():
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 10.0, 1000)
    nominal = np.column_stack([20 * np.sin(t), 15 * np.cos(0.7 * t), 0.01 * np.sin(3 * t)])
    friction = 2.0 * np.sign(np.cos(3 * t))  # j3: friction only, which the nominal model does not have
    measured = np.column_stack([10 * nominal[:, 0], nominal[:, 1], friction]) + rng.normal(0, 0.1, (1000, 3))
    notes = scale_notes("run.csv", NAMES, measured, nominal)
    assert len(notes) == 1 and notes[0].startswith("run.csv: j1: recorded efforts are 10 x the nominal")


def test_stiction_near_zero_speed_gives_the_min_speed_to_use():
    """j1 sticks: more friction in the direction of motion below 0.1 rad/s; j2 rings at its steps (a residual
    without the sign of the motion, as filtered Coulomb steps): only j1 is named."""
    rng = np.random.default_rng(2)
    t = np.linspace(0.0, 40.0, 8000)
    speed = np.column_stack([np.sin(t), 0.5 * np.cos(1.3 * t), np.sin(0.7 * t)])
    residual = rng.normal(0.0, 0.1, speed.shape)
    residual[:, 0] += 1.5 * np.sign(speed[:, 0]) * (np.abs(speed[:, 0]) < 0.1)  # j1 sticks below 0.1 rad/s
    residual[:, 1] += 1.5 * rng.choice([-1.0, 1.0], len(t)) * (np.abs(speed[:, 1]) < 0.05)  # j2: no sign
    notes, thresholds = speed_notes("runs", NAMES, speed, residual)
    assert 0.09 <= thresholds[0] <= 0.16 and thresholds[1] == thresholds[2] == 0.0
    assert len(notes) == 2 and notes[0].startswith("runs: j1: ") and "more friction than the model below" in notes[0]
    assert 0.7 < float(notes[0].split()[2]) < 1.5  # 1.5 N m in the slowest samples, less over the whole bin
    assert notes[1].endswith(f"--min-speed {thresholds[0]:.2g},0,0 (rad/s or m/s per actuated joint, from the "
                             "residuals above)")


@pytest.mark.parametrize("delay", [0.0123, -0.004, 0.0])
def test_the_effort_delay_is_found_by_cross_correlation(delay):
    t = np.arange(5000) * 1e-3
    torque = lambda s: np.column_stack([np.sin(2.1 * s) + 0.3 * np.sin(7.3 * s), np.cos(3.7 * s)])  # noqa: E731
    found, gain = effort_delay_s(t, torque(t - delay), torque(t)[:, :, None])
    assert found == pytest.approx(delay, abs=2e-4)
    assert gain > 0.9 if delay else gain == 0.0


def test_masses_no_body_has_and_negative_friction_are_flagged_beside_the_physical_estimate():
    names = ["m_platform", "m_link", "mx_link", "fv_j1", "fs_j1", "m_arm"]
    values = np.array([22.0, -0.4, -3.0, -0.5, 0.2, 1.1])
    stds = np.array([7.0, 0.1, 0.1, 0.05, 0.05, 0.1])
    nominal = {"m_platform": 4.93, "m_link": 0.6, "m_arm": 1.2}
    notes = physical_notes(names, values, stds, nominal, physical={"m_platform": 5.1})
    assert notes == [
        "m_platform = 22 +- 7 kg, 4.5 x the nominal 4.93 kg: implausible; friction near zero speed (see the speed "
        "notes) or a unit error biases it (physically consistent: 5.1)",
        "m_link = -0.4 +- 0.1 kg: a negative mass (--physical gives the physically consistent estimate)",
        "fv_j1 = -0.5 +- 0.05: negative friction (--physical gives the physically consistent estimate)",
    ]


def test_a_prismatic_leg_hardly_moves_by_its_encoder_steps_not_by_the_revolute_threshold():
    """A hexapod leg moving 1 cm (a platform tilt of a few degrees) is excited; under 1 mm (1000 steps of a 1 um
    linear encoder, as 0.05 rad is 1000 steps at 2**17 counts per turn) it hardly moves. A five-bar's revolute
    joint keeps 0.05 rad: 0.01 rad hardly moves."""
    from pardyn.identification.diagnostics import min_motion  # noqa: PLC0415
    from pardyn.robot import load_robot  # noqa: PLC0415

    hexapod, five_bar = load_robot("hexapod"), load_robot("five_bar")
    legs = hexapod.actuated_names
    assert min_motion(hexapod, legs) / 1e-6 == pytest.approx(1000.0)  # steps of a 1 um encoder
    assert min_motion(five_bar, five_bar.actuated_names) * (2**17 / (2 * np.pi)) == pytest.approx(1043, abs=1)
    ramp = np.linspace(0.0, 1.0, 200)[:, None]
    efforts = np.column_stack([np.sin(np.arange(200) * (0.1 + 0.01 * j)) for j in range(len(legs))])
    positions = 0.17 + ramp * np.r_[0.01, 0.0055, 0.012, 0.008, 0.0073, 0.0005]  # leg6: 0.5 mm
    notes = effort_notes("loaded", legs, efforts, positions, min_motion(hexapod, legs))
    assert notes == ["loaded: leg6_length: moves 0.0005 (rad or m) peak to peak only: hardly excited"]
    joints = five_bar.actuated_names
    notes = effort_notes("run", joints, efforts[:, :2], ramp * np.r_[0.01, 1.0],
                         min_motion(five_bar, joints))
    assert notes == [f"run: {joints[0]}: moves 0.01 (rad or m) peak to peak only: hardly excited"]


def test_first_moments_beyond_mass_times_size_and_offsets_beyond_the_efforts_are_flagged():
    # issue 40's five-bar: a first moment of -1.91 kg m on a 0.124 kg link, an offset of -11.5 N m where the
    # efforts span +-0.6 N m; a 0.3 m robot. The plausible ones beside them are not flagged.
    names = ["mx_link_1", "my_link_1", "offset_joint_1", "offset_joint_2", "fv_joint_1"]
    values = np.array([-1.91, 0.01, -11.5, 0.2, -0.5])
    stds = np.array([0.05, 0.005, 0.3, 0.05, 0.01])
    notes = physical_notes(names, values, stds, {"m_link_1": 0.124}, reach=0.3,
                           effort_range={"joint_1": 0.6, "joint_2": 0.6})
    flagged = [note.split(" =")[0] for note in notes]
    assert flagged == ["mx_link_1", "offset_joint_1", "fv_joint_1"]
    assert "0.124 kg" in notes[0] and "+-0.6" in notes[1]
