"""Human-readable reports: latency-budget tables and a one-line verdict."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from models.stages import STAGES
from sim.analysis.metrics import Metric
from sim.analysis.verdict import verdict


def print_run(console: Console, summary: dict[str, Any]) -> None:
    """The budget table of one run and its headline numbers."""
    if summary.get("stable") is False:
        console.print(
            f"{summary['spec']}: UNSTABLE: {summary['unstable_reason']}", style="bold red"
        )
        return
    table = Table(title=_title(summary), title_justify="left")
    table.add_column("stage")
    table.add_column("s / rollout", justify="right")
    table.add_column("share", justify="right")
    budget, share = summary[Metric.BUDGET_S], summary[Metric.BUDGET_SHARE]
    for stage in STAGES:
        if budget[stage] > 0:
            table.add_row(stage.value, f"{budget[stage]:.3f}", f"{share[stage]:.1%}")
    table.add_row("end to end", f"{summary[Metric.E2E_S]['mean']:.3f}", "100.0%", style="bold")
    console.print(table)
    console.print(_headline(summary))
    if "utilization" in summary:
        console.print(fleet_line(summary))


def fleet_line(summary: dict[str, Any]) -> str:
    """Throughput and utilization per pool of a fleet run, with the CI method."""
    busy = ", ".join(
        f"{pool} {value['mean']:.0%}" for pool, value in summary["utilization"].items()
    )
    throughput = summary["throughput"]
    return (
        f"throughput {throughput['turns_per_s']['mean']:.1f} turns/s, "
        f"{throughput['output_tokens_per_s']['mean']:.0f} output tokens/s; "
        f"utilization: {busy}; CIs: {summary['ci_method']}"
    )


def print_compare(console: Console, result: dict[str, Any]) -> None:
    """Both budgets side by side, the reductions with their CIs, and the verdict."""
    a, b = result["a"], result["b"]
    unstable = [s for s in (a, b) if s.get("stable") is False]
    for summary in unstable:
        console.print(
            f"{summary['spec']}: UNSTABLE: {summary['unstable_reason']}", style="bold red"
        )
    if unstable:
        return
    table = Table(title=f"a = {_title(a)}\nb = {_title(b)}", title_justify="left")
    table.add_column("stage")
    for side in ("a", "b"):
        table.add_column(f"{side}: s / rollout", justify="right")
        table.add_column(f"{side}: share", justify="right")
    table.add_column("b - a (s)", justify="right")
    for stage in STAGES:
        sa, sb = a[Metric.BUDGET_S][stage], b[Metric.BUDGET_S][stage]
        if sa > 0 or sb > 0:
            table.add_row(
                stage.value,
                f"{sa:.3f}",
                f"{a[Metric.BUDGET_SHARE][stage]:.1%}",
                f"{sb:.3f}",
                f"{b[Metric.BUDGET_SHARE][stage]:.1%}",
                f"{sb - sa:+.3f}",
            )
    ea, eb = a[Metric.E2E_S]["mean"], b[Metric.E2E_S]["mean"]
    table.add_row("end to end", f"{ea:.3f}", "", f"{eb:.3f}", "", f"{eb - ea:+.3f}", style="bold")
    console.print(table)
    for side, summary in (("a", a), ("b", b)):
        console.print(f"{side}: {_headline(summary)}")
        if "utilization" in summary:
            console.print(f"{side}: {fleet_line(summary)}")
    for metric in (Metric.E2E_REDUCTION, Metric.TTFT_REDUCTION, Metric.API_CPU_REDUCTION):
        console.print(f"{metric.label}: {_percent_with_ci(result, metric)}")
    console.print(verdict(result), style="bold")


def _title(summary: dict[str, Any]) -> str:
    return (
        f"{summary['spec']} ({summary['engine']}, {summary['rollouts']} rollouts, "
        f"seed {summary['seed']})"
    )


def _headline(summary: dict[str, Any]) -> str:
    e2e, ttft = summary[Metric.E2E_S], summary[Metric.TTFT_S]
    parts = [f"e2e mean {e2e['mean']:.3f} s"]
    if e2e["ci95"] is not None:
        parts.append(f"(95% CI {e2e['ci95'][0]:.3f}-{e2e['ci95'][1]:.3f})")
        parts.append(f"p50 {e2e['p50']:.2f} p95 {e2e['p95']:.2f} p99 {e2e['p99']:.2f} s;")
    parts.append(f"TTFT mean {ttft['mean'] * 1000:.0f} ms")
    if ttft["p95"] is not None:
        parts.append(f"p95 {ttft['p95'] * 1000:.0f} ms;")
    parts.append(f"API work {summary[Metric.API_CPU_S_PER_ROLLOUT]:.2f} s/rollout;")
    parts.append(f"{summary[Metric.TURNS_PER_ROLLOUT]:.1f} requests/rollout")
    return " ".join(parts)


def _percent_with_ci(result: dict[str, Any], metric: Metric) -> str:
    ci = result[f"{metric.value}_ci95"]
    text = f"{result[metric]:.1%}"
    if ci is not None:
        text += f" (95% CI {ci[0]:.1%} to {ci[1]:.1%})"
    return text
