"""Per-robot excitation bounds: defaults, overrides, and errors naming what is missing."""

from __future__ import annotations

import pytest

from pardyn.errors import InputError
from pardyn.trajectories.excitation import DEFAULT_EXCITATION, ExcitationSettings, excitation_settings


def test_defaults_are_overridden_value_by_value(load):
    for name, settings in DEFAULT_EXCITATION.items():
        assert len(settings.amplitude) == len(load(name).task_names), name  # one bound per task coordinate
    settings = excitation_settings("dualv", amplitude=[0.01, 0.01, 0.1], base_frequency_hz=0.0)
    assert settings.amplitude == (0.01, 0.01, 0.1)
    assert settings.max_velocity == DEFAULT_EXCITATION["dualv"].max_velocity
    assert settings.base_frequency_hz == 1.0  # 0: the default
    assert set(settings.design_options()) == {"amplitude", "max_velocity", "max_acceleration", "base_frequency_hz"}


def test_a_robot_without_defaults_must_be_given_every_bound():
    with pytest.raises(InputError, match=r"\['max_acceleration', 'base_frequency_hz'\]: h4 has no default excitation"):
        excitation_settings("h4", amplitude=[0.01] * 4, max_velocity=[0.1] * 4)
    settings = excitation_settings("h4", amplitude=[0.01] * 4, max_velocity=[0.1] * 4, max_acceleration=[1.0] * 4,
                                   base_frequency_hz=0.5)
    assert settings.base_frequency_hz == 0.5


def test_inconsistent_bounds_are_rejected():
    with pytest.raises(InputError, match="one value per task coordinate"):
        ExcitationSettings(amplitude=(0.1,), max_velocity=(1.0, 1.0), max_acceleration=(1.0,), base_frequency_hz=1.0)
    with pytest.raises(InputError, match="max_velocity must be positive"):
        ExcitationSettings(amplitude=(0.1,), max_velocity=(-1.0,), max_acceleration=(1.0,), base_frequency_hz=1.0)
