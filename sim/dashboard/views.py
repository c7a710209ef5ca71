"""The dashboard's single-agent views: budget, one rollout, Amdahl, scaling."""

from __future__ import annotations

from collections.abc import Hashable
from typing import cast

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from models.scenario import Scenario
from sim.analysis.flagship import flagship_sentence
from sim.analysis.metrics import Metric
from sim.dashboard import charts, data, downloads
from sim.dashboard.cache import (
    amdahl_curve,
    analytic,
    one_rollout,
    requested,
    run_key,
    scaling_curves,
    simulate_all,
)
from sim.dashboard.panel import follow
from sim.dashboard.rescale import decode_tps, mean_tool_calls, with_decode_tps, with_tool_calls
from sim.dashboard.slopes import slope_caption
from sim.report.export import rollout_table
from sim.turn.transports import Transport

DEFAULT_ROLLOUTS = 500
TURNS_SHOWN = "rollout:turns"


def show(figure: charts.Figure, title: str, what: str) -> None:
    """A stage chart at its full height (Streamlit would clip a legend below the plot), in
    its own fonts (no Streamlit theme), with PNG and SVG downloads."""
    st.altair_chart(figure.chart, width="stretch", height=figure.height_px, theme=None)
    downloads.chart_downloads(figure.chart, title, what)


def show_chart(
    chart: charts.Chart, title: str, what: str, where: DeltaGenerator | None = None
) -> None:
    """A chart as wide as its place, in its own fonts, with PNG and SVG downloads."""
    if where is None:
        st.altair_chart(chart, width="stretch", theme=None)
    else:
        where.altair_chart(chart, width="stretch", theme=None)
    downloads.chart_downloads(chart, title, what, where)


def reduction_metrics(results: data.Results, simulated_run: bool) -> None:
    """The reductions as big numbers: each transport against the baseline."""
    for transport, comparison in results.comparisons.items():
        a, b = comparison.measured()
        rows = (
            ("end-to-end", Metric.E2E_REDUCTION, a.e2e_s.mean, b.e2e_s.mean),
            ("TTFT", Metric.TTFT_REDUCTION, a.ttft_s.mean, b.ttft_s.mean),
            (
                "API work",
                Metric.API_CPU_REDUCTION,
                a.api_cpu_s_per_rollout,
                b.api_cpu_s_per_rollout,
            ),
        )
        for column, (what, metric, before, after) in zip(st.columns(3), rows, strict=True):
            ci = comparison.reductions[metric].ci95
            detail = _before_after(what, before, after)
            if simulated_run and ci is not None:
                detail = f"95% CI {ci[0]:.1%} to {ci[1]:.1%} · {detail}"
            column.metric(
                f"{what} saved: {transport} vs {results.baseline}",
                f"{comparison.reduction(metric):.1%}",
                delta=detail,
                delta_color="off",
                delta_arrow="off",
                help=metric.label,
            )
    compared = list(results.comparisons.items())
    if compared:
        rates = [(results.baseline, compared[0][1].measured()[0].prefix_cache_hit_rate)]
        rates += [(name, c.measured()[1].prefix_cache_hit_rate) for name, c in compared]
        shown = " · ".join(f"{name} {rate:.1%}" for name, rate in rates)
        st.caption(f"{Metric.PREFIX_CACHE_HIT_RATE.label}: {shown}")


def _before_after(what: str, before: float, after: float) -> str:
    if what == "TTFT":
        return f"{before * 1000:.0f} → {after * 1000:.0f} ms per turn"
    return f"{before:.2f} → {after:.2f} s per rollout"


def budget_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    results = analytic(scenario.model_dump_json(), transports)
    run_box, rollouts_box, note_box = st.columns([1, 1, 3], vertical_alignment="bottom")
    rollouts = rollouts_box.number_input(
        "rollouts", min_value=10, max_value=20_000, value=DEFAULT_ROLLOUTS, step=100
    )
    key = run_key(scenario, transports, "des", int(rollouts))
    simulated_run = requested(key, run_box.button("Simulate (DES)", type="primary"))
    if simulated_run:
        results, runs = simulate_all(scenario, transports, int(rollouts), note_box)
        note_box.caption(
            f"Simulated: {results.rollouts} rollouts, seed {scenario.seed}, "
            "same workload draws under every transport."
        )
        downloads.rollouts_download(
            rollout_table({r.spec.transport.value: r for r in runs}),
            f"{scenario.name}-rollouts",
            rollouts_box,
        )
    else:
        note_box.caption("Expected values (analytic engine). Simulate for 95% CIs.")
    reduction_metrics(results, simulated_run)
    for comparison in results.comparisons.values():
        st.markdown(f"#### {data.verdict(comparison)}")
    budget = data.budget_frame(results)
    show(charts.budget_chart(budget), f"{scenario.name}-budget", "the budget chart")
    with st.expander("The budget as a table"):
        table = data.budget_table(budget)
        shares: list[Hashable] = [column for column in table.columns if column.endswith("share")]
        st.dataframe(
            table.style.format("{:.3f}").format("{:.1%}", subset=shares),
            width="stretch",
            height=data.table_height_px(len(table)),
        )
        downloads.table_download(table, f"{scenario.name}-budget-table", "the budget table")


def rollout_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    left, right = st.columns([1, 3])
    rollout = left.number_input(
        "rollout number", min_value=0, max_value=999, value=0, step=1, key="rollout:number"
    )
    last = len(data.simulate_one(scenario, transports[0], int(rollout)).turn_index) - 1
    follow(TURNS_SHOWN, (max(0, last - 4), last))
    low, high = st.session_state[TURNS_SHOWN]
    st.session_state[TURNS_SHOWN] = (min(low, last), min(high, last))
    # A range slider: session state holds a pair, which Streamlit's stubs cannot know (they
    # type a slider given no value as one number).
    turns = cast(tuple[int, int], right.slider("turns shown", 0, last, key=TURNS_SHOWN))
    frame = one_rollout(scenario.model_dump_json(), transports, int(rollout), turns)
    show(
        charts.rollout_chart(frame), f"{scenario.name}-rollout-{int(rollout)}", "the rollout chart"
    )
    st.caption(
        "The same rollout (same seed, same tool calls, outputs and tool times) under each "
        "transport; only the transport differs. The last turns are shown first: their "
        "history is longest, so per-request HTTP rebuilds the most. Scroll to zoom, drag to pan."
    )


def amdahl_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    if len(transports) < 2:
        st.info("Pick at least two transports to see a reduction.")
        return
    speed = decode_tps(scenario)
    curve = amdahl_curve(with_decode_tps(scenario, 1.0).model_dump_json(), transports)
    point = data.amdahl_point(analytic(scenario.model_dump_json(), transports), speed)
    show_chart(
        charts.amdahl_chart(curve, point, transports[0].value),
        f"{scenario.name}-amdahl",
        "the Amdahl chart",
    )
    st.caption(
        "Amdahl's law: the transport only saves API, network and safety time. While decode "
        "is slow that time hides behind inference; at 1,000+ tokens/s it is a large share of "
        f"every turn. {flagship_sentence()} Expected values (analytic engine); the axis is "
        "the constant decode speed that decodes as fast on average as this scenario's "
        f"(1 / E[1/rate]: {speed:,.0f} tokens/s here)."
    )


def scaling_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    frame = scaling_curves(with_tool_calls(scenario, 1).model_dump_json(), transports)
    api_work, e2e = charts.scaling_charts(frame, mean_tool_calls(scenario))
    show_chart(api_work, f"{scenario.name}-scaling-api-work", "the API work chart")
    show_chart(e2e, f"{scenario.name}-scaling-e2e", "the end-to-end-by-tool-calls chart")
    st.caption(slope_caption(scenario, transports))
