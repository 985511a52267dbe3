"""FIGAROH's parameter names and base-parameter expressions in pardyn's terms (to compare with its published results).

FIGAROH (Nguyen et al., ``thanhndv212/figaroh-plus``) names the standard
parameters of the body of joint ``k`` ``Ixx{k} Ixy{k} Ixz{k} Iyy{k} Iyz{k} Izz{k}
mx{k} my{k} mz{k} m{k}`` (pinocchio's, at the joint frame), its drive terms
``Ia{k} fv{k} fs{k} off{k}`` and the TX40's coupled wrist ``Iam6 fvm6 fsm6``;
it writes a base parameter as a linear expression of them
(``Izz1 + 1.0*Ia1 + 1.0*Iyy2 + 0.05185*m3``). :func:`figaroh_value` evaluates
such an expression with pardyn's identified base parameters: any combination
in the row space of the observation matrix has the same value for every
standard vector consistent with the base parameters, so the comparison does
not depend on which column each tool kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pardyn.errors import InputError

__all__ = ["figaroh_value", "parse_expression", "pardyn_name"]

_TERM = re.compile(r"\s*([+-]?)\s*(?:([0-9.eE+-]+)\s*\*\s*)?([A-Za-z]+)(\d+)\s*")
_INERTIAL = {"Ixx": "xx", "Ixy": "xy", "Ixz": "xz", "Iyy": "yy", "Iyz": "yz", "Izz": "zz",
             "mx": "mx", "my": "my", "mz": "mz", "m": "m"}
_DRIVE = {"Ia": "ia", "fv": "fv", "fs": "fs", "off": "offset"}
_MOTOR = {"Iam": "iam", "fvm": "fvm", "fsm": "fsm"}


def pardyn_name(symbol: str, index: int, *, links: Sequence[str], joints: Sequence[str],
                motors: Sequence[str] = ()) -> str:
    """``("Izz", 1)`` -> ``"zz_<links[0]>"``; ``("Ia", 3)`` -> ``"ia_<joints[2]>"``; ``("Iam", 6)`` -> ``"iam_<motors[5]>"``."""
    for table, names, kind in ((_INERTIAL, links, "link"), (_DRIVE, joints, "joint"), (_MOTOR, motors, "motor")):
        if symbol in table:
            if not 1 <= index <= len(names):
                raise InputError(f"FIGAROH parameter {symbol}{index}: no {kind} {index} (have {len(names)})")
            return f"{table[symbol]}_{names[index - 1]}"
    raise InputError(f"unknown FIGAROH parameter {symbol}{index}")


def parse_expression(text: str, rename) -> dict[str, float]:
    """``"Izz1 + 1.0*Ia1 - 0.05*m3"`` -> ``{rename("Izz", 1): 1.0, ...}`` (coefficients summed)."""
    out: dict[str, float] = {}
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TERM.match(text, position)
        if not match or match.end() == position:
            raise InputError(f"cannot read the expression {text!r} at {text[position:]!r}")
        sign, coefficient, symbol, index = match.groups()
        value = float(coefficient) if coefficient else 1.0
        name = rename(symbol, int(index))
        out[name] = out.get(name, 0.0) + (-value if sign == "-" else value)
        position = match.end()
    return out


def figaroh_value(expression: Mapping[str, float], standard_values: Mapping[str, float]) -> float:
    """The value of a linear expression of standard parameters under pardyn's estimate.

    Args:
        expression: ``{standard name: coefficient}`` (:func:`parse_expression`).
        standard_values: a standard vector consistent with pardyn's base parameters, e.g. RESULT.json's
            ``standard_parameters`` (each base value on its leading column, the others 0) and
            ``motor_parameters``.

    Raises:
        InputError: a parameter the model does not have.
    """
    unknown = [name for name in expression if name not in standard_values]
    if unknown:
        raise InputError(f"parameters {unknown} are not in the identified model")
    return float(sum(coefficient * standard_values[name] for name, coefficient in expression.items()))
