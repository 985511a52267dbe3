"""Shared helpers of the control experiments: the joints a law reads, error indices, JSON and PNG output.

The experiments (:mod:`pardyn.experiments.tracking`, :mod:`pardyn.experiments.robustness`)
write ``<out>/<name>.json`` and PNG figures; matplotlib is imported only when plotting
(Agg backend, no display needed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["error_indices", "joint_panels", "law_joints", "line_plot", "write_json"]


def law_joints(robot, law) -> tuple[str, ...]:
    """The measured joints a law reads (``law.joints``), the actuated ones for laws without it."""
    return tuple(getattr(law, "joints", None) or robot.actuated_names)


def error_indices(t: np.ndarray, error: np.ndarray) -> dict[str, float]:
    """ISE, IAE, ITAE of an error norm ``e(t)`` (N,) (Zubizarreta 2010, Table II), trapezoidal rule.

    ``ISE = int e^2 dt`` (m^2 s), ``IAE = int |e| dt`` (m s), ``ITAE = int t |e| dt`` (m s^2).
    """
    e = np.abs(np.asarray(error, dtype=float))
    return {
        "ISE": float(np.trapezoid(e**2, t)),
        "IAE": float(np.trapezoid(e, t)),
        "ITAE": float(np.trapezoid(t * e, t)),
    }


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def write_json(path: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as indented JSON (numpy values converted, non-finite -> null), whole or not at all: a run
    stopped while writing leaves the former file (a resumed benchmark reads its entries back)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".writing")
    partial.write_text(json.dumps(_clean(data), indent=2) + "\n")
    partial.replace(path)
    return path


def line_plot(
    path: Path,
    curves: Sequence[tuple[np.ndarray, np.ndarray, str]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logy: bool = False,
    markers: bool = False,
) -> Path:
    """One PNG with the ``(x, y, label)`` curves."""
    import matplotlib  # noqa: PLC0415 - plotting only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure, axes = plt.subplots(figsize=(7, 4))
    for x, y, label in curves:
        axes.plot(x, y, "o-" if markers else "-", label=label)
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    if logy:
        axes.set_yscale("log")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def joint_panels(
    path: Path,
    t: np.ndarray,
    series: dict[str, np.ndarray],
    joints: Sequence[str],
    *,
    title: str,
    ylabel: str,
    limits: np.ndarray | None = None,
) -> Path:
    """One PNG with a panel per joint: ``series[label]`` (N, n_joints) against ``t`` (N,) (s).

    ``limits`` (n_joints,) draws +-limit lines (e.g. torque limits).
    """
    import matplotlib  # noqa: PLC0415 - plotting only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    columns = 2
    rows = math.ceil(len(joints) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(10, 2.6 * rows), sharex=True, squeeze=False)
    for j, joint in enumerate(joints):
        axis = axes[j // columns][j % columns]
        for label, values in series.items():
            axis.plot(t, values[:, j], label=label, linewidth=1.0)
        if limits is not None:
            for sign in (-1.0, 1.0):
                axis.axhline(sign * limits[j], color="k", linestyle="--", linewidth=0.8)
        axis.set_title(joint, fontsize=9)
        axis.set_ylabel(ylabel, fontsize=8)
        axis.grid(True, alpha=0.3)
    for axis in axes[-1]:
        axis.set_xlabel("t (s)")
    axes[0][0].legend(fontsize=8)
    figure.suptitle(title)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
