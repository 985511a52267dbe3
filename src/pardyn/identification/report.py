"""The identification report: a Markdown page with the parameter table and PNG plots, and the same as one
self-contained HTML page (``report.html``: plots embedded, no script, opens in any browser).

Plots like the DualV paper's Figs. 5, 8 and 9: the measured model inputs
``Gamma`` against their reconstruction ``W chi`` on the first identification
bag, the residuals, and the measured against predicted actuator torques of
each validation bag (identified and nominal models).
"""

from __future__ import annotations

import base64
import html
import re
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


Block = tuple
"""One piece of the report: ``("heading", level, text)``, ``("items", [text, ...])``, ``("table", header, rows)``
(the first column left-aligned, the others right-aligned) or ``("images", [file name, ...])``; text in Markdown's
inline marks (`code`, **bold**)."""


def _table(result: IdentificationResult) -> Block:
    essential = set(result.essential.estimate.names)
    rows = [[f"`{name}`", f"{value:.6g}", f"{std:.3g}", f"{pct:.3g}", "yes" if name in essential else ""]
            for name, value, std, pct in zip(result.estimate.names, result.estimate.chi, result.estimate.std,
                                             result.estimate.relative_std)]
    return ("table", ["parameter", "value", "std", "%sigma", "essential"], rows)


def _estimator_summary(name: str) -> str:
    """`` (what the estimator is)``: its registered one-line summary, empty for a name no longer registered."""
    from pardyn.identification.estimators import ESTIMATORS  # noqa: PLC0415 - the registry, filled at import

    return f" ({ESTIMATORS.get(name).summary})" if name in ESTIMATORS else ""


def _blocks(result: IdentificationResult, plots: list[str]) -> list[Block]:
    """The report's content, in order, for both renderings."""
    data = result.as_json()
    fit = data["fit"]
    blocks: list[Block] = [("heading", 1, f"Identification of `{result.robot}`"), ("items", [
        f"model: **{result.model}** ({len(result.row_names)} equations per sample: {', '.join(result.row_names)})",
        f"samples after trimming: {result.samples}, equations after decimation: {result.equations}",
        f"condition number of W (base parameters): {fit['condition_number']:.4g}",
        f"relative error norm of the fit: {100 * fit['relative_error_norm']:.2f} % "
        f"(essential model: {100 * fit['essential_relative_error_norm']:.2f} %)",
        f"filters: derivative low-pass {data['filter']['derivative_cutoff_hz']:.3g} Hz "
        f"(Butterworth order {result.settings.filter.filter_order}, zero phase), decimation by "
        f"{result.settings.filter.decimation} with cut-off {data['filter']['decimation_cutoff_hz']:.3g} Hz, "
        f"model evaluated at {result.settings.filter.model_rate_hz:g} Hz",
        f"essential parameters: r_sigma = {result.settings.fit.r_sigma:g}, fit tolerance "
        f"{100 * result.settings.fit.essential_tolerance:g} %, {len(result.essential.estimate.names)} of "
        f"{len(result.estimate.names)} kept (stopped by {result.essential.stopped_by})",
        f"estimator: {data['estimator']['name']}{_estimator_summary(data['estimator']['name'])}"
        + ("" if not data["estimator"]["iterations"] else
           f", {data['estimator']['iterations']} closed-loop simulations from {data['estimator']['start']}, "
           f"{'converged' if data['estimator']['converged'] else 'NOT converged'} (steps: "
           + ", ".join(f"{c:.3g}" for c in data["estimator"]["changes"]) + ")"),
        f"time: {data['timings_s']['total_s']:.2f} s",
    ])]
    if result.notes:
        blocks += [("heading", 2, "Data"), ("items", list(result.notes))]
    if result.drive_gains is not None:
        blocks += [("heading", 2, "Drive gains (efforts logged in A)"),
                   ("items", [result.drive_gains.summary(), *result.drive_gains.lines()])]
    if result.settings.filter.min_speed is not None:
        kept = ", ".join(f"{name} {size}" for name, size in zip(result.row_names, result.fit_series["block_sizes"]))
        blocks.append(("items", [f"equations kept above the minimum speeds (first run): {kept}"]))
    if result.motor_parameters:
        blocks += [("heading", 2, "Coupled motors (transmission; joint-side scaled)"),
                   ("table", ["parameter", "value"],
                    [[f"`{key}`", f"{value:.6g}"] for key, value in result.motor_parameters.items()])]
    if result.payload:
        blocks += [("heading", 2, "Payload"),
                   ("table", ["parameter", "value"], [[key, f"{value:.6g}"] for key, value in result.payload.items()])]
    blocks += [("heading", 2, f"Base parameters ({result.estimate.method.upper()})"), _table(result)]
    if result.base.relations:
        blocks += [("heading", 2, "Regrouping relations (eq. 43 column order)"),
                   ("items", [f"`{relation}`" for relation in result.base.relations])]
    identifiability = getattr(result, "identifiability", None)
    if identifiability is not None:
        items = [f"structural base parameters (the model, random states): {identifiability.structural.n_base}; "
                 f"identified on these runs: {result.base.n_base}"]
        items += [f"`{name}`: {reason}" for name, reason in identifiability.lost]
        items += [f"on these runs only: `{relation}`" for relation in identifiability.data_relations]
        blocks += [("heading", 2, "Identifiability (these runs against the model's structure)"), ("items", items)]
    truth = getattr(result, "truth", None)
    if truth is not None:
        rows = [[f"`{row['name']}`", f"{row['identified']:.6g}", f"{row['std']:.3g}", f"{row['true']:.6g}",
                 f"{row['error_in_std']:.2f}", f"{row['error_percent']:.3g}"] for row in truth.rows()]
        items = [f"{v.bag.name}: held-out error of the true parameters {100 * floor:.2f} % (the floor), of the "
                 f"identified ones {100 * v.relative_error_norm:.2f} %" for v, floor in zip(result.validation, truth.floor)]
        blocks += [("heading", 2, "Against the truth (simulated runs)"),
                   ("table", ["parameter", "identified", "std", "true", "error / std", "error %"], rows)]
        if items:
            blocks.append(("items", items))
    if data["physical"]:
        physical = data["physical"]
        items = [
            f"fit relative error norm: {100 * physical['fit']['relative_error_norm']:.2f} % "
            f"(unconstrained {100 * fit['relative_error_norm']:.2f} %)",
            f"largest base-parameter shift from the unconstrained estimate: "
            f"{physical['max_base_shift_in_std']:.3g} standard deviations",
            f"smallest pseudo-inertia eigenvalue: {physical['min_pseudo_inertia_eigenvalue']:.3g} "
            f"(solver {physical['solver']}, {physical['solve_time_s']:.2f} s)",
        ]
        if physical.get("validation"):
            items.append(f"validation relative error norm: {100 * physical['validation']['relative_error_norm']:.2f} % "
                         f"(unconstrained {100 * data['validation']['relative_error_norm']:.2f} %)")
        blocks += [("heading", 2, "Physically consistent estimate (SDP, pseudo-inertias positive definite)"),
                   ("items", items)]
    if result.validation:
        header = ["bag", *result.validation[0].joints, "overall", "nominal overall", "NMSE", "nominal NMSE"]
        rows = [[v.bag.name, *(f"{100 * e:.2f}" for e in v.per_joint), f"{100 * v.relative_error_norm:.2f}",
                 f"{100 * v.nominal['relative_error_norm']:.2f}", f"{v.nmse:.4g}", f"{v.nominal['nmse']:.4g}"]
                for v in result.validation]
        blocks += [("heading", 2, "Cross-validation (actuator torques, relative error norms in %)"),
                   ("table", header, rows)]
    blocks += [("heading", 2, "Plots"), ("images", plots)]
    return blocks


def _markdown(blocks: list[Block]) -> str:
    lines = []
    for block in blocks:
        kind = block[0]
        if kind == "heading":
            lines.append("#" * block[1] + " " + block[2])
        elif kind == "items":
            lines += [f"- {text}" for text in block[1]]
        elif kind == "table":
            header, rows = block[1], block[2]
            lines += ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
            lines += ["| " + " | ".join(row) + " |" for row in rows]
        else:
            lines += [f"![{name}]({name})" for name in block[1]]
        lines.append("")
    return "\n".join(lines)


def _inline(text: str) -> str:
    """Markdown's `code` and **bold** as HTML, the rest escaped."""
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]*)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]*)\*\*", r"<strong>\1</strong>", text)


_STYLE = """body{font-family:sans-serif;max-width:72em;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 8px}
td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}th{background:#eee}
code{font-size:90%}img{max-width:100%;display:block;margin:.5em 0}"""


def _html(blocks: list[Block], out_dir: Path, title: str) -> str:
    """One self-contained page: no script, no external file (the plots embedded as PNG data URIs)."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"]
    for block in blocks:
        kind = block[0]
        if kind == "heading":
            parts.append(f"<h{block[1]}>{_inline(block[2])}</h{block[1]}>")
        elif kind == "items":
            parts.append("<ul>" + "".join(f"<li>{_inline(text)}</li>" for text in block[1]) + "</ul>")
        elif kind == "table":
            header, rows = block[1], block[2]
            parts.append("<table><thead><tr>" + "".join(f"<th>{_inline(h)}</th>" for h in header) + "</tr></thead><tbody>"
                         + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in rows)
                         + "</tbody></table>")
        else:
            for name in block[1]:
                encoded = base64.b64encode((out_dir / name).read_bytes()).decode("ascii")
                parts.append(f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{encoded}">'
                             f"<figcaption>{html.escape(name)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(result: IdentificationResult, out_dir: Path | str) -> Path:
    """Write ``report.md``, its PNG plots and ``report.html`` (the same, self-contained) into ``out_dir``.

    Returns the Markdown report's path.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = _fit_plots(result, out_dir) + _validation_plots(result, out_dir)
    blocks = _blocks(result, plots)
    path = out_dir / "report.md"
    path.write_text(_markdown(blocks))
    (out_dir / "report.html").write_text(_html(blocks, out_dir, f"Identification of {result.robot}"), encoding="utf-8")
    return path
