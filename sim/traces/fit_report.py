"""The fit's report a person reads: Markdown beside PNG figures (QQ plot of held-out e2e,
fitted densities over histograms of tool times and decode rates)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from sim.traces.fit import ScenarioFit
from sim.traces.holdout import Validation


def write_report(
    directory: Path, fit: ScenarioFit, validation: Validation | None, answer: str
) -> Path:
    """Write ``fit-report.md`` and its figures into ``directory``; the Markdown's path."""
    import matplotlib

    matplotlib.use("Agg")
    directory.mkdir(parents=True, exist_ok=True)
    lines = [f"# Fitted scenario: {fit.data['name']}", "", fit.data["description"], ""]
    lines += ["## The answer", "", answer, ""]
    if validation is not None:
        lines += _validation(validation)
        _qq(directory / "e2e-qq.png", validation)
        lines += ["![held-out e2e QQ plot](e2e-qq.png)", ""]
    if fit.measured is not None and fit.measured.tool_s:
        _tools(directory / "tool-times.png", fit)
        lines += ["## Tool times", "", "![tool time fits](tool-times.png)", ""]
    lines += ["## Where each field comes from", "", "| field | source |", "| --- | --- |"]
    lines += [f"| `{k}` | {v} |" for k, v in fit.sources.items()]
    lines += ["", "## Assumed (kept from the preset)", ""]
    lines += [f"- {a}" for a in fit.assumed]
    if fit.calibration is not None and fit.calibration.notes:
        lines += ["", "## Calibration notes", ""] + [f"- {n}" for n in fit.calibration.notes]
    path = directory / "fit-report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _validation(v: Validation) -> list[str]:
    lines = [
        "## Held-out rollouts: simulated against measured",
        "",
        f"{v.held_out_rollouts} held-out rollouts against {v.simulated_rollouts} simulated; "
        f"KS distance of e2e {v.e2e_ks_distance:.3f}"
        + (f", of TTFT {v.ttft_ks_distance:.3f}" if v.ttft_ks_distance is not None else "")
        + ".",
        "",
        "| quantity | measured | simulated | relative error | 95% CI |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label, table, unit in (("e2e", v.e2e, 1.0), ("TTFT", v.ttft, 1e3)):
        suffix = "s" if unit == 1.0 else "ms"
        for name, s in table.items():
            lines.append(
                f"| {label} {name} ({suffix}) | {s.measured * unit:.4g} | {s.simulated * unit:.4g} "
                f"| {s.relative_error:+.1%} | {s.ci95[0]:+.1%} to {s.ci95[1]:+.1%} |"
            )
    return [*lines, ""]


def _qq(path: Path, v: Validation) -> None:
    import matplotlib.pyplot as plt

    levels = np.linspace(0.01, 0.99, 99)
    measured = np.quantile(v.measured_e2e_s, levels)
    simulated = np.quantile(v.simulated_e2e_s, levels)
    figure, axis = plt.subplots(figsize=(5, 5))
    axis.plot(measured, simulated, "o", markersize=3)
    top = max(measured.max(), simulated.max())
    axis.plot([0, top], [0, top], color="grey", linewidth=1)
    axis.set_xlabel("held-out measured e2e quantile (s)")
    axis.set_ylabel("simulated e2e quantile (s)")
    axis.set_title("e2e per rollout, quantiles 1-99%")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _tools(path: Path, fit: ScenarioFit) -> None:
    import matplotlib.pyplot as plt

    assert fit.measured is not None
    tools = {t["name"]: t["time_s"] for t in fit.data["workload"]["tools"]}
    names = list(fit.measured.tool_s)[:9]
    columns = min(3, len(names))
    rows = -(-len(names) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3 * rows), squeeze=False)
    for axis, name in zip(axes.flat, names, strict=False):
        values = fit.measured.tool_s[name]
        axis.hist(values, bins=40, density=True, alpha=0.5, label="measured")
        grid = np.linspace(0, np.percentile(values, 99.5), 200)
        density = _density(tools.get(name), grid)
        if density is not None:
            axis.plot(grid, density, label="fitted")
        axis.set_title(f"{name} (n = {values.size})")
        axis.set_xlabel("seconds")
        axis.legend(fontsize=7)
    for axis in list(axes.flat)[len(names) :]:
        axis.set_visible(False)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _density(table: Any, grid: np.ndarray) -> np.ndarray | None:
    if not isinstance(table, dict):
        return None
    kind = table.get("kind")
    if kind == "lognormal":
        return stats.lognorm(table["sigma"], scale=table["median"]).pdf(grid)
    if kind == "exponential":
        return stats.expon(scale=table["mean"]).pdf(grid)
    if kind == "uniform":
        return stats.uniform(table["low"], table["high"] - table["low"]).pdf(grid)
    return None
