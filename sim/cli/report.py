"""Human-readable reports: latency-budget tables and a one-line verdict."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from models.stages import STAGES
from sim.analysis.fleet_results import FleetStats
from sim.analysis.metrics import REDUCTIONS, Metric
from sim.analysis.results import Comparison, RunResult, UnmeasuredPoint
from sim.analysis.verdict import verdict


def print_run(console: Console, result: RunResult[Any] | UnmeasuredPoint) -> None:
    """The budget table of one run and its headline numbers."""
    if isinstance(result, UnmeasuredPoint):
        console.print(f"{result.spec}: UNSTABLE: {result.fleet.unstable_reason}", style="bold red")
        return
    print_title(console, result)
    table = Table()
    table.add_column("stage")
    table.add_column("s / rollout", justify="right")
    table.add_column("share", justify="right")
    share = result.budget_share
    for stage in STAGES:
        if result.budget_s[stage] > 0:
            table.add_row(stage.value, f"{result.budget_s[stage]:.3f}", f"{share[stage]:.1%}")
    table.add_row("end to end", f"{result.e2e_s.mean:.3f}", "100.0%", style="bold")
    console.print(table)
    console.print(_headline(result))
    if result.fleet is not None:
        console.print(fleet_line(result.fleet))


def fleet_line(fleet: FleetStats) -> str:
    """Throughput and utilization per pool of a fleet run, with the CI method."""
    busy = ", ".join(f"{pool} {value.mean:.0%}" for pool, value in fleet.utilization.items())
    limited = ""
    if fleet.rate_limit is not None:
        r = fleet.rate_limit
        limited = (
            f"rate limit: {r.admitted_requests_per_min.mean:.0f} requests/min admitted per "
            f"organization, {r.refused_per_request:.2f} 429s per request, "
            f"{r.refused_s_per_turn:.3f} s refused per turn; "
        )
    return (
        f"throughput {fleet.throughput[Metric.TURNS_PER_S].mean:.1f} turns/s, "
        f"{fleet.throughput[Metric.OUTPUT_TOKENS_PER_S].mean:.0f} output tokens/s; "
        f"{limited}utilization: {busy}; CIs: {fleet.ci_method}"
    )


def print_compare(console: Console, comparison: Comparison) -> None:
    """Both budgets side by side, the reductions with their CIs, and the verdict."""
    a, b = comparison.a, comparison.b
    if isinstance(a, UnmeasuredPoint) or isinstance(b, UnmeasuredPoint):
        for result in (a, b):
            if isinstance(result, UnmeasuredPoint):
                reason = result.fleet.unstable_reason
                console.print(f"{result.spec}: UNSTABLE: {reason}", style="bold red")
        return
    print_title(console, a, "a = ")
    print_title(console, b, "b = ")
    table = Table()
    table.add_column("stage")
    for side in ("a", "b"):
        table.add_column(f"{side}: s / rollout", justify="right")
        table.add_column(f"{side}: share", justify="right")
    table.add_column("b - a (s)", justify="right")
    share_a, share_b = a.budget_share, b.budget_share
    for stage in STAGES:
        sa, sb = a.budget_s[stage], b.budget_s[stage]
        if sa > 0 or sb > 0:
            table.add_row(
                stage.value,
                f"{sa:.3f}",
                f"{share_a[stage]:.1%}",
                f"{sb:.3f}",
                f"{share_b[stage]:.1%}",
                f"{sb - sa:+.3f}",
            )
    ea, eb = a.e2e_s.mean, b.e2e_s.mean
    table.add_row("end to end", f"{ea:.3f}", "", f"{eb:.3f}", "", f"{eb - ea:+.3f}", style="bold")
    console.print(table)
    for side, result in (("a", a), ("b", b)):
        console.print(f"{side}: {_headline(result)}")
        if result.fleet is not None:
            console.print(f"{side}: {fleet_line(result.fleet)}")
    for metric in REDUCTIONS:
        console.print(f"{metric.label}: {_percent_with_ci(comparison, metric)}")
    console.print(verdict(comparison), style="bold")


def print_title(console: Console, result: RunResult[Any], prefix: str = "") -> None:
    """Spec, engine, what was drawn (simulations only), the scenario's hash, then one line
    per override, never broken (a ``--set`` value can be copied whole from the screen)."""
    drawn = "" if result.seed is None else f", {result.rollouts} rollouts, seed {result.seed}"
    title = f"{prefix}{result.spec} ({result.engine}{drawn}, scenario {result.scenario_hash})"
    if result.approximations:
        title += f" [approximate: {', '.join(_bounded(a) for a in result.approximations)}]"
    lines = [title, *(f"  --set {override}" for override in result.overrides)]
    for line in lines:
        console.print(line, soft_wrap=True, markup=False, highlight=False)


def _bounded(flag: str) -> str:
    """A flag with the largest error it was measured to cost (a fleet's flags carry theirs)."""
    from sim.analytic.agent.expectations import BOUNDS

    bound = next((text for name, text in BOUNDS.items() if name == flag), None)
    return flag if bound is None else f"{flag} ({bound})"


def _headline(result: RunResult[Any]) -> str:
    """Means, with intervals and percentiles where simulated; clauses separated by ';'."""
    e2e, ttft = result.e2e_s, result.ttft_s
    e2e_text = f"e2e mean {e2e.mean:.3f} s"
    if e2e.ci95 is not None:
        e2e_text += (
            f" (95% CI {e2e.ci95[0]:.3f}-{e2e.ci95[1]:.3f}),"
            f" p50 {e2e.p50:.2f} p95 {e2e.p95:.2f} p99 {e2e.p99:.2f} s"
        )
    ttft_text = f"TTFT mean {ttft.mean * 1000:.0f} ms"
    if ttft.p95 is not None:
        ttft_text += f", p95 {ttft.p95 * 1000:.0f} ms"
    return "; ".join(
        [
            e2e_text,
            ttft_text,
            f"API work {result.api_cpu_s_per_rollout:.2f} s/rollout",
            f"{result.turns_per_rollout:.1f} requests/rollout",
            f"prefix-cache hit {result.prefix_cache_hit_rate:.1%}",
        ]
    )


def _percent_with_ci(comparison: Comparison, metric: Metric) -> str:
    estimate = comparison.reductions[metric]
    text = f"{estimate.value:.1%}"
    if estimate.ci95 is not None:
        text += f" (95% CI {estimate.ci95[0]:.1%} to {estimate.ci95[1]:.1%})"
    return text
