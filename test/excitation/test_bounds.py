"""Per-robot excitation bounds: defaults, overrides, and errors naming what is missing."""

from __future__ import annotations

import pytest

from pardyn.errors import InputError
from pardyn.excitation.bounds import ExcitationSettings, excitation_settings


def test_shipped_bounds_live_in_the_robot_yamls_and_are_overridden_value_by_value(load):
    for name in ("dualv", "rrr3", "five_bar", "wu3r", "ur5e", "delta", "hexapod"):
        settings = load(name).description.excitation  # the former code dict, now each YAML's excitation: section
        assert settings is not None and len(settings.amplitude) == len(load(name).task_names), name
    assert load("dualv").description.excitation.max_velocity == (6.7, 6.7, 26.7)  # the values moved unchanged
    settings = excitation_settings("dualv", amplitude=[0.01, 0.01, 0.1], base_frequency_hz=0.0)
    assert settings.amplitude == (0.01, 0.01, 0.1)
    assert settings.max_velocity == (6.7, 6.7, 26.7)
    assert settings.base_frequency_hz == 1.0  # 0: the default
    assert set(settings.design_options()) == {"amplitude", "max_velocity", "max_acceleration", "base_frequency_hz"}


def test_a_robot_without_a_section_gets_bounds_from_its_limits_and_home(load):
    with pytest.warns(UserWarning, match="h4: no excitation: section in h4.yaml; derived from its limits and home"):
        derived = excitation_settings("h4")
    assert len(derived.amplitude) == 4 and derived.base_frequency_hz == 0.5
    omega = 2 * 3.141592653589793 * 0.5 * 5  # f_0 H
    assert derived.max_acceleration == pytest.approx([v * omega for v in derived.max_velocity])
    settings = excitation_settings("h4", amplitude=[0.01] * 4, max_velocity=[0.1] * 4, max_acceleration=[1.0] * 4,
                                   base_frequency_hz=0.5)
    assert settings.base_frequency_hz == 0.5


def test_inconsistent_bounds_are_rejected():
    with pytest.raises(InputError, match="one value per task coordinate"):
        ExcitationSettings(amplitude=(0.1,), max_velocity=(1.0, 1.0), max_acceleration=(1.0,), base_frequency_hz=1.0)
    with pytest.raises(InputError, match="max_velocity must be positive"):
        ExcitationSettings(amplitude=(0.1,), max_velocity=(-1.0,), max_acceleration=(1.0,), base_frequency_hz=1.0)
