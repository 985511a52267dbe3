"""The plug-in contract's options (pardyn.registry): types from the annotations, one parameter per shared
option, a conflict refused, values read back checked against the stated range."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pardyn.errors import InputError
from pardyn.registry import option, option_specs, options_from, shared_options


@dataclass(frozen=True)
class Gains:
    kp: tuple[float, ...] = option((), "gains (N m/rad)", unit="N m/rad")
    rate: float = option(10.0, "rate (Hz)", low=0.0, high=100.0)


@dataclass(frozen=True)
class More(Gains):
    mode: str = option("a", "mode", choices=("a", "b"))
    window: int = option(3, "window", low=1, high=9, flag="window-samples")


@dataclass(frozen=True)
class Other:
    extra: bool = option(True, "extra")
    rate: float = option(20.0, "rate (Hz)", low=0.0, high=100.0)


def test_specs_follow_the_annotations_and_the_metadata():
    specs = {spec.field: spec for spec in option_specs(More, "my_")}
    assert [(s.kind, s.array) for s in specs.values()] == [("float", True), ("float", False), ("str", False),
                                                             ("int", False)]
    assert specs["kp"].parameter == "my_kp" and specs["kp"].flag == "my-kp" and specs["kp"].unit == "N m/rad"
    assert specs["window"].flag == "window-samples" and specs["mode"].choices == ("a", "b")

    @dataclass(frozen=True)
    class Bad:
        table: complex = option(1j, "not an option type")

    with pytest.raises(TypeError, match=r"Bad.table: an option is a bool, int, float, str or tuple"):
        option_specs(Bad)


def test_shared_options_are_one_parameter_and_keep_each_plugins_together():
    shared = shared_options([("gains", Gains, ""), ("more", More, "")])
    assert [(spec.parameter, users) for spec, users in shared] == [
        ("kp", ("gains", "more")), ("rate", ("gains", "more")), ("mode", ("more",)), ("window", ("more",))]
    with pytest.raises(TypeError, match=r"option rate: plug-in other declares it unlike \['gains'\]"):
        shared_options([("gains", Gains, ""), ("other", Other, "")])  # same name, another default


def test_values_by_parameter_name_are_converted_and_checked():
    options = options_from(More, {"kp": [1, 2], "rate": 5, "unrelated": 1, "window": None})
    assert options == More(kp=(1.0, 2.0), rate=5.0) and isinstance(options.rate, float)
    with pytest.raises(InputError, match=r"parameter rate: 500.0 outside \[0, 100\]"):
        options_from(More, {"rate": 500.0})
    with pytest.raises(InputError, match=r"parameter mode: 'c' is not one of \['a', 'b'\]"):
        options_from(More, {"mode": "c"})


def test_export_flags_come_from_the_formats_options(tmp_path, capsys):
    """``pardyn export``'s --placeholder-mass is the sdf format's option: range-checked by argparse, and refused
    (one line naming who reads it) for a format without it."""
    from pardyn.cli import main  # noqa: PLC0415

    with pytest.raises(SystemExit):  # argparse's exit 2
        main(["export", "sdf", "--robot", "five_bar", "--out", str(tmp_path / "a"), "--placeholder-mass", "0"])
    assert "--placeholder-mass: expected a number in (0, 1e+06] kg, got '0'" in capsys.readouterr().err
    assert main(["export", "c", "--robot", "five_bar", "--out", str(tmp_path / "b"), "--placeholder-mass", "1"]) == 2
    assert capsys.readouterr().err.strip().endswith("--placeholder-mass: the c format has no such option "
                                                    "(the sdf format reads it)")
    assert not (tmp_path / "b").exists()


def test_a_string_option_without_a_range_is_only_checked_against_its_choices():
    @dataclass(frozen=True)
    class Named:
        engine: str = option("", "engine", choices=("", "RK4"))
        label: str = option("x", "free text")

    assert options_from(Named, {"engine": "RK4", "label": "anything"}) == Named("RK4", "anything")
