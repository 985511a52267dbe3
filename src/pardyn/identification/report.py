"""The identification report: a Markdown page with the parameter table and PNG plots.

Plots like the DualV paper's Figs. 5, 8 and 9: the measured model inputs
``Gamma`` against their reconstruction ``W chi`` on the first identification
bag, the residuals, and the measured against predicted actuator torques of
each validation bag (identified and nominal models).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pardyn.identification.result import IdentificationResult

__all__ = ["write_report"]


def _pyplot():
    import matplotlib  # noqa: PLC0415 - heavy, only for reports

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def _fit_plots(result: IdentificationResult, out_dir: Path) -> list[str]:
    plt = _pyplot()
    series = result.fit_series
    sizes = np.asarray(series["block_sizes"], dtype=int)  # equations of each row (the same unless samples were dropped)
    rows = result.row_names
    edges = np.cumsum(sizes)[:-1]
    measured = np.split(series["measured"], edges)
    predicted = np.split(series["predicted"], edges)
    rate = result.sample_rate_hz / result.settings.filter.decimation
    uniform = bool(np.all(sizes == sizes[0])) and result.settings.filter.min_speed is None
    figure, axes = plt.subplots(len(rows), 1, figsize=(10, 2.2 * len(rows)), sharex=uniform, squeeze=False)
    for axis, name, y, y_hat in zip(axes[:, 0], rows, measured, predicted):
        t = np.arange(len(y)) / rate if uniform else np.arange(len(y))
        axis.plot(t, y, "r-", linewidth=1.0, label="measured")
        axis.plot(t, y_hat, "b--", linewidth=1.0, label="identified model")
        axis.set_ylabel(name)
        axis.grid(alpha=0.3)
    axes[0, 0].legend(loc="upper right")
    axes[0, 0].set_title(f"{result.robot}: model inputs, {result.model} (first bag, decimated to {rate:.0f} Hz)")
    axes[-1, 0].set_xlabel("t (s, after trimming)" if uniform else "equation (samples kept above the minimum speed)")
    figure.tight_layout()
    figure.savefig(out_dir / "fit.png", dpi=100)
    plt.close(figure)

    figure, axes = plt.subplots(len(rows), 1, figsize=(10, 2.0 * len(rows)), sharex=True, squeeze=False)
    for axis, name, y, y_hat in zip(axes[:, 0], rows, measured, predicted):
        t = np.arange(len(y)) / rate if uniform else np.arange(len(y))
        axis.plot(t, y - y_hat, "k-", linewidth=0.8)
        axis.set_ylabel(f"{name} residual")
        axis.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("t (s)" if uniform else "equation")
    figure.tight_layout()
    figure.savefig(out_dir / "residuals.png", dpi=100)
    plt.close(figure)
    return ["fit.png", "residuals.png"]


def _validation_plots(result: IdentificationResult, out_dir: Path) -> list[str]:
    plt = _pyplot()
    names = []
    for k, validation in enumerate(result.validation, start=1):
        joints = validation.joints
        figure, axes = plt.subplots(len(joints), 1, figsize=(10, 2.2 * len(joints)), sharex=True, squeeze=False)
        t = validation.t - validation.t[0]
        for j, (axis, joint) in enumerate(zip(axes[:, 0], joints)):
            axis.plot(t, validation.measured[:, j], "r-", linewidth=1.0, label="measured")
            axis.plot(t, validation.predicted[:, j], "b--", linewidth=1.0, label="identified")
            axis.plot(t, validation.predicted_nominal[:, j], "g:", linewidth=1.0, label="nominal (CAD)")
            axis.set_ylabel(f"{joint} (N m or N)")
            axis.grid(alpha=0.3)
        axes[0, 0].legend(loc="upper right")
        axes[0, 0].set_title(f"validation {k}: {validation.bag.name}, relative error "
                             f"{100 * validation.relative_error_norm:.1f} % (nominal "
                             f"{100 * validation.nominal['relative_error_norm']:.1f} %)")
        axes[-1, 0].set_xlabel("t (s)")
        figure.tight_layout()
        name = f"validation_{k}.png"
        figure.savefig(out_dir / name, dpi=100)
        plt.close(figure)
        names.append(name)
    return names


def _table(result: IdentificationResult) -> str:
    essential = set(result.essential.estimate.names)
    lines = ["| parameter | value | std | %sigma | essential |", "|---|---:|---:|---:|:---:|"]
    for name, value, std, pct in zip(result.estimate.names, result.estimate.chi, result.estimate.std,
                                     result.estimate.relative_std):
        lines.append(f"| `{name}` | {value:.6g} | {std:.3g} | {pct:.3g} | {'yes' if name in essential else ''} |")
    return "\n".join(lines)


def write_report(result: IdentificationResult, out_dir: Path | str) -> Path:
    """Write ``report.md`` and its PNG plots into ``out_dir``; the report's path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = _fit_plots(result, out_dir) + _validation_plots(result, out_dir)
    data = result.as_json()
    fit = data["fit"]
    lines = [
        f"# Identification of `{result.robot}`",
        "",
        f"- model: **{result.model}** ({len(result.row_names)} equations per sample: {', '.join(result.row_names)})",
        f"- samples after trimming: {result.samples}, equations after decimation: {result.equations}",
        f"- condition number of W (base parameters): {fit['condition_number']:.4g}",
        f"- relative error norm of the fit: {100 * fit['relative_error_norm']:.2f} % "
        f"(essential model: {100 * fit['essential_relative_error_norm']:.2f} %)",
        f"- filters: derivative low-pass {data['filter']['derivative_cutoff_hz']:.3g} Hz "
        f"(Butterworth order {result.settings.filter.filter_order}, zero phase), decimation by "
        f"{result.settings.filter.decimation} with cut-off {data['filter']['decimation_cutoff_hz']:.3g} Hz, "
        f"model evaluated at {result.settings.filter.model_rate_hz:g} Hz",
        f"- essential parameters: r_sigma = {result.settings.fit.r_sigma:g}, fit tolerance "
        f"{100 * result.settings.fit.essential_tolerance:g} %, {len(result.essential.estimate.names)} of "
        f"{len(result.estimate.names)} kept (stopped by {result.essential.stopped_by})",
        f"- estimator: {data['estimator']['name']}"
        + ("" if not data["estimator"]["iterations"] else
           f", {data['estimator']['iterations']} closed-loop simulations from {data['estimator']['start']}, "
           f"{'converged' if data['estimator']['converged'] else 'NOT converged'} (steps: "
           + ", ".join(f"{c:.3g}" for c in data["estimator"]["changes"]) + ")"),
        f"- time: {data['timings_s']['total_s']:.2f} s",
        "",
    ]
    if result.notes:
        lines += ["## Data", ""] + [f"- {note}" for note in result.notes] + [""]
    if result.settings.filter.min_speed is not None:
        kept = ", ".join(f"{name} {size}" for name, size in zip(result.row_names, result.fit_series["block_sizes"]))
        lines += [f"- equations kept above the minimum speeds (first run): {kept}", ""]
    if result.motor_parameters:
        lines += ["## Coupled motors (transmission; joint-side scaled)", "", "| parameter | value |", "|---|---:|"]
        lines += [f"| `{key}` | {value:.6g} |" for key, value in result.motor_parameters.items()]
        lines.append("")
    if result.payload:
        lines += ["## Payload", "", "| parameter | value |", "|---|---:|"]
        lines += [f"| {key} | {value:.6g} |" for key, value in result.payload.items()]
        lines.append("")
    lines += [f"## Base parameters ({result.estimate.method.upper()})", "", _table(result), ""]
    if result.base.relations:
        lines += ["## Regrouping relations (eq. 43 column order)", ""]
        lines += [f"- `{relation}`" for relation in result.base.relations]
        lines.append("")
    if data["physical"]:
        physical = data["physical"]
        lines += [
            "## Physically consistent estimate (SDP, pseudo-inertias positive definite)", "",
            f"- fit relative error norm: {100 * physical['fit']['relative_error_norm']:.2f} % "
            f"(unconstrained {100 * fit['relative_error_norm']:.2f} %)",
            f"- largest base-parameter shift from the unconstrained estimate: "
            f"{physical['max_base_shift_in_std']:.3g} standard deviations",
            f"- smallest pseudo-inertia eigenvalue: {physical['min_pseudo_inertia_eigenvalue']:.3g} "
            f"(solver {physical['solver']}, {physical['solve_time_s']:.2f} s)",
        ]
        if physical.get("validation"):
            lines.append(f"- validation relative error norm: {100 * physical['validation']['relative_error_norm']:.2f} % "
                         f"(unconstrained {100 * data['validation']['relative_error_norm']:.2f} %)")
        lines.append("")
    if result.validation:
        lines += ["## Cross-validation (actuator torques, relative error norms in %)", "",
                  "| bag | " + " | ".join(result.validation[0].joints) + " | overall | nominal overall | NMSE | nominal NMSE |",
                  "|---|" + "---:|" * (len(result.validation[0].joints) + 4)]
        for v in result.validation:
            per_joint = " | ".join(f"{100 * e:.2f}" for e in v.per_joint)
            lines.append(f"| {v.bag.name} | {per_joint} | {100 * v.relative_error_norm:.2f} | "
                         f"{100 * v.nominal['relative_error_norm']:.2f} | {v.nmse:.4g} | {v.nominal['nmse']:.4g} |")
        lines.append("")
    lines += ["## Plots", ""] + [f"![{name}]({name})" for name in plots] + [""]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines))
    return path
