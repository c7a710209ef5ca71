"""loopbudget dashboard: where the time of an AI agent's loop goes, HTTP against WebSocket mode.

Start it with ``make dashboard``.  Analytic numbers follow every widget; the
discrete-event simulation runs on a button and is cached per scenario and seed.
Pure computations live in ``sim.dashboard_*``; this file holds the Streamlit calls.
"""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from models.errors import ScenarioError
from models.loading import preset_names, raw_scenario, validate
from models.scenario import Scenario
from sim import dashboard_charts as charts
from sim import dashboard_data as views
from sim import dashboard_load as fleet
from sim import dashboard_sweeps as sweeps
from sim.capacity import Slo
from sim.dashboard_fields import (
    FieldKind,
    FieldSpec,
    apply_field,
    lookup,
    scenario_fields,
    shown_value,
)
from sim.dashboard_io import scenario_from_upload, scenario_toml
from sim.dashboard_knobs import (
    COVERED_PATHS,
    HARDWARE,
    KNOBS,
    Control,
    Knob,
    apply,
    decode_tps,
    mean_tool_calls,
    with_decode_tps,
    with_tool_calls,
)
from sim.metrics import Metric
from sim.run import Engine, Run
from sim.sweep.commands import default_metric
from sim.sweep.plots import Results as SweepResults
from sim.transports import Transport

DEFAULT_PRESET = "codex-spark"
DEFAULT_ROLLOUTS = 500
RESULTS_ROOT = "results"
Table = dict[str, Any]

# Session-state keys (comments, not docstrings: Streamlit would print bare strings).
# BASE: the table of the loaded scenario (preset or upload) the controls start from.
# SIMULATED: keys of the DES runs asked for in this session; their cached results show.
BASE = "base"
BASE_LABEL = "base_label"
UPLOAD_ERROR = "upload_error"
SIMULATED = "simulated"
TURNS_SHOWN = "rollout:turns"
CONTROL_PREFIXES = ("knob:", "field:")


# ---------------------------------------------------------------- cached engines


@st.cache_data(show_spinner=False, max_entries=256)
def analytic(scenario_json: str, transports: tuple[Transport, ...]) -> views.Results:
    """Expected budgets and reductions (analytic engine)."""
    return views.evaluate(Scenario.model_validate_json(scenario_json), transports)


@st.cache_data(show_spinner=False, max_entries=256)
def amdahl_curve(shape_json: str, transports: tuple[Transport, ...]) -> pd.DataFrame:
    """The Amdahl curve; the key is the scenario at a fixed decode speed (the curve ignores it)."""
    return views.amdahl_frame(Scenario.model_validate_json(shape_json), transports)


@st.cache_data(show_spinner=False, max_entries=256)
def scaling_curves(shape_json: str, transports: tuple[Transport, ...]) -> pd.DataFrame:
    """Work against turns; the key is the scenario at one tool call (the curves ignore it)."""
    return views.scaling_frame(Scenario.model_validate_json(shape_json), transports)


@st.cache_data(show_spinner=False, max_entries=64)
def one_rollout(
    scenario_json: str, transports: tuple[Transport, ...], rollout: int, turns: tuple[int, int]
) -> pd.DataFrame:
    """Stage spans of one simulated rollout under each transport."""
    scenario = Scenario.model_validate_json(scenario_json)
    return views.rollout_frame(scenario, transports, rollout, turns)


@st.cache_data(show_spinner=False, max_entries=64)
def simulated(scenario_json: str, transport: Transport, rollouts: int) -> Run:
    """A DES run, cached per scenario (its seed included), transport and rollouts."""
    return views.run(Scenario.model_validate_json(scenario_json), transport, Engine.DES, rollouts)


def simulate_all(
    scenario: Scenario, transports: tuple[Transport, ...], rollouts: int, where: DeltaGenerator
) -> views.Results:
    """DES results of every transport, with a progress bar while any is not cached yet."""
    bar = where.progress(0.0)
    runs = []
    for done, transport in enumerate(transports):
        bar.progress(done / len(transports), text=f"simulating {transport}: {rollouts} rollouts")
        runs.append(simulated(scenario.model_dump_json(), transport, rollouts))
    bar.empty()
    return views.results_of(runs)


@st.cache_data(show_spinner=False, max_entries=128)
def fleet_point(scenario_json: str, transport: Transport, agents: int) -> dict[str, Any]:
    """One load point of the fleet engine, cached per scenario, transport and agents."""
    scenario = Scenario.model_validate_json(scenario_json)
    return fleet.load_point(scenario, transport, agents)


@st.cache_data(show_spinner="searching for the capacity…", max_entries=32)
def fleet_capacity(
    scenario_json: str, transport: Transport, slo: Slo, max_agents: int
) -> dict[str, Any]:
    """The capacity search of one transport, cached per scenario, SLO and bound."""
    return fleet.capacity(Scenario.model_validate_json(scenario_json), transport, slo, max_agents)


@st.cache_data(show_spinner=False, max_entries=16)
def sweep_results(path: str, parts: int) -> SweepResults:
    """A results directory's rows; ``parts`` (finished parts) invalidates a growing sweep."""
    return SweepResults.load(path)


@st.cache_data(show_spinner=False, max_entries=64)
def sweep_png(
    source: str,
    _results: SweepResults,
    choice: tuple[str, str | None, str, str | None],
    where: tuple[tuple[str, Any], ...],
    transports: tuple[str, ...],
) -> bytes:
    """A sweep figure as PNG, drawn once per source and choice (kind, x, metric, hue)."""
    kind, x, y, hue = choice
    figure = sweeps.sweep_figure(_results, kind, x, y, hue, dict(where), transports)
    return sweeps.png_bytes(figure)


# ---------------------------------------------------------------- scenario panel


def reset_controls() -> None:
    """Forget every moved knob and field: the controls show the loaded scenario again."""
    for key in [k for k in st.session_state if str(k).startswith(CONTROL_PREFIXES)]:
        del st.session_state[key]


def load_base(scenario: Scenario, label: str) -> None:
    st.session_state[BASE] = scenario.model_dump(mode="json", by_alias=True)
    st.session_state[BASE_LABEL] = label
    reset_controls()


def on_preset() -> None:
    name = st.session_state["preset"]
    load_base(validate(raw_scenario(name)), f"preset {name}")
    st.session_state.pop(UPLOAD_ERROR, None)


def on_upload() -> None:
    """Validate an uploaded file; a bad one leaves the current scenario in place."""
    upload = st.session_state.get("upload")
    if upload is None:
        return
    try:
        scenario = scenario_from_upload(upload.name, upload.getvalue())
    except ScenarioError as error:
        st.session_state[UPLOAD_ERROR] = str(error)
        return
    st.session_state.pop(UPLOAD_ERROR, None)
    load_base(scenario, f"uploaded {upload.name}")


def follow(key: str, default: Any) -> None:
    """An untouched control follows the scenario's value; a moved one keeps the user's."""
    state = st.session_state
    shadow = f"{key}:default"
    if key not in state or state[key] == state.get(shadow):
        state[key] = default
    else:
        state[key] = state[key]
    state[shadow] = default


def knob_widget(knob: Knob, default: Any, where: DeltaGenerator) -> Any:
    key = f"knob:{knob.key}"
    follow(key, default)
    value = st.session_state[key]
    if knob.control is Control.LOG_SLIDER:
        options = knob.options(default, value)
        return where.select_slider(
            knob.label, options=options, format_func=knob.show, key=key, help=knob.help
        )
    if knob.control is Control.SLIDER:
        cast = int if knob.integer else float
        low, high = knob.bounds(default, value)
        return where.slider(
            knob.label,
            cast(low),
            cast(high),
            step=cast(knob.step),
            format=knob.slider_format,
            key=key,
            help=knob.help,
        )
    if knob.control is Control.TOGGLE:
        return where.toggle(knob.label, key=key, help=knob.help)
    return where.selectbox(knob.label, knob.choices, key=key, help=knob.help)


def turn_knob(
    knob: Knob, table: Table, scenario: Scenario, where: DeltaGenerator
) -> tuple[Table, Scenario]:
    """Draw one knob; if moved, apply it (an invalid result is reported and skipped)."""
    default = knob.read(scenario)
    value = knob_widget(knob, default, where)
    if value == default:
        return table, scenario
    try:
        return apply(table, scenario, knob, value)
    except ScenarioError as error:
        where.error(str(error))
        return table, scenario


def field_widget(spec: FieldSpec, key: str, where: DeltaGenerator) -> Any:
    label, help_text = spec.name, spec.help
    if spec.kind is FieldKind.BOOL:
        return where.checkbox(label, key=key, help=help_text)
    if spec.kind is FieldKind.INT:
        return where.number_input(
            label, min_value=spec.minimum, max_value=spec.maximum, step=1, key=key, help=help_text
        )
    if spec.kind is FieldKind.FLOAT:
        low = None if spec.minimum is None else float(spec.minimum)
        high = None if spec.maximum is None else float(spec.maximum)
        return where.number_input(
            label, min_value=low, max_value=high, format="%g", key=key, help=help_text
        )
    if spec.kind is FieldKind.CHOICE:
        return where.selectbox(label, spec.choices, key=key, help=help_text)
    if spec.kind is FieldKind.JSON:
        return where.text_area(label, key=key, help=help_text + " (JSON)", height=68)
    return where.text_input(label, key=key, help=help_text)


def advanced_fields(
    table: Table, scenario: Scenario, where: DeltaGenerator
) -> tuple[Table, Scenario]:
    """Every field without a main knob, generated from the scenario tree."""
    section = None
    for spec in scenario_fields():
        if spec.path in COVERED_PATHS:
            continue
        if spec.section != section:
            section = spec.section
            where.markdown(f"**{section}**")
        key = f"field:{spec.path}"
        default = shown_value(spec, lookup(table, spec.path))
        follow(key, default)
        value = field_widget(spec, key, where)
        if value == default:
            continue
        try:
            table, scenario = apply_field(table, spec, value)
        except ScenarioError as error:
            where.error(str(error))
    return table, scenario


def scenario_panel() -> Scenario:
    """The sidebar: preset, upload, hardware, main knobs, advanced fields, download."""
    bar = st.sidebar
    bar.header("Scenario")
    presets = preset_names()
    bar.selectbox(
        "preset", presets, index=presets.index(DEFAULT_PRESET), key="preset", on_change=on_preset
    )
    if BASE not in st.session_state:
        on_preset()
    bar.file_uploader(
        "or load a scenario file (TOML)", type=["toml"], key="upload", on_change=on_upload
    )
    if UPLOAD_ERROR in st.session_state:
        bar.error(st.session_state[UPLOAD_ERROR])
    bar.caption(f"Loaded: {st.session_state[BASE_LABEL]}")
    table: Table = st.session_state[BASE]
    scenario = validate(table)

    table, scenario = turn_knob(HARDWARE, table, scenario, bar)
    knob_box = bar.container()
    advanced = bar.expander("Advanced: every other field")
    table, scenario = advanced_fields(table, scenario, advanced)
    groups: dict[str, DeltaGenerator] = {}
    for knob in KNOBS:
        if knob.group not in groups:
            groups[knob.group] = knob_box.container()
            groups[knob.group].subheader(knob.group)
        table, scenario = turn_knob(knob, table, scenario, groups[knob.group])

    left, right = bar.columns(2)
    left.button("Reset controls", on_click=reset_controls)
    right.download_button(
        "Download TOML",
        scenario_toml(scenario),
        file_name=f"{scenario.name}.toml",
        mime="application/toml",
    )
    return scenario


# ---------------------------------------------------------------- views


def show(figure: charts.Figure) -> None:
    """A stage chart at its full height (Streamlit would clip a legend below the plot)."""
    st.altair_chart(figure.chart, width="stretch", height=figure.height_px)


def reduction_metrics(results: views.Results, simulated_run: bool) -> None:
    """The reductions as big numbers: each transport against the baseline."""
    for transport, comparison in results.comparisons.items():
        a, b = comparison["a"], comparison["b"]
        rows = (
            ("end-to-end", Metric.E2E_REDUCTION, a[Metric.E2E_S]["mean"], b[Metric.E2E_S]["mean"]),
            ("TTFT", Metric.TTFT_REDUCTION, a[Metric.TTFT_S]["mean"], b[Metric.TTFT_S]["mean"]),
            (
                "API work",
                Metric.API_CPU_REDUCTION,
                a[Metric.API_CPU_S_PER_ROLLOUT],
                b[Metric.API_CPU_S_PER_ROLLOUT],
            ),
        )
        for column, (what, metric, before, after) in zip(st.columns(3), rows, strict=True):
            ci = comparison[f"{metric.value}_ci95"]
            detail = _before_after(what, before, after)
            if simulated_run and ci is not None:
                detail = f"95% CI {ci[0]:.1%} to {ci[1]:.1%} · {detail}"
            column.metric(
                f"{what} saved: {transport} vs {results.baseline}",
                f"{comparison[metric]:.1%}",
                delta=detail,
                delta_color="off",
                delta_arrow="off",
                help=metric.label,
            )


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
    key = _run_key(scenario, transports, "des", int(rollouts))
    if run_box.button("Simulate (DES)", type="primary"):
        st.session_state.setdefault(SIMULATED, set()).add(key)
    simulated_run = key in st.session_state.get(SIMULATED, set())
    if simulated_run:
        results = simulate_all(scenario, transports, int(rollouts), note_box)
        note_box.caption(
            f"Simulated: {results.rollouts} rollouts, seed {scenario.seed}, "
            "same workload draws under every transport."
        )
    else:
        note_box.caption("Expected values (analytic engine). Simulate for 95% CIs.")
    reduction_metrics(results, simulated_run)
    for comparison in results.comparisons.values():
        st.markdown(f"#### {views.verdict(comparison)}")
    budget = views.budget_frame(results)
    show(charts.budget_chart(budget))
    with st.expander("The budget as a table"):
        table = views.budget_table(budget)
        shares = [column for column in table.columns if column.endswith("share")]
        st.dataframe(table.style.format("{:.3f}").format("{:.1%}", subset=shares), width="stretch")


def rollout_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    left, right = st.columns([1, 3])
    rollout = left.number_input(
        "rollout number", min_value=0, max_value=999, value=0, step=1, key="rollout:number"
    )
    last = len(views.simulate_one(scenario, transports[0], int(rollout)).turn_index) - 1
    follow(TURNS_SHOWN, (max(0, last - 4), last))
    low, high = st.session_state[TURNS_SHOWN]
    st.session_state[TURNS_SHOWN] = (min(low, last), min(high, last))
    turns = right.slider("turns shown", 0, last, key=TURNS_SHOWN)
    frame = one_rollout(scenario.model_dump_json(), transports, int(rollout), turns)
    show(charts.rollout_chart(frame))
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
    point = views.amdahl_point(analytic(scenario.model_dump_json(), transports), speed)
    st.altair_chart(charts.amdahl_chart(curve, point, transports[0].value), width="stretch")
    st.caption(
        "Amdahl's law: the transport only saves API, network and safety time. While decode "
        "is slow that time hides behind inference; at 1,000+ tokens/s it is a large share of "
        "every turn. Expected values (analytic engine)."
    )


def scaling_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    frame = scaling_curves(with_tool_calls(scenario, 1).model_dump_json(), transports)
    st.altair_chart(charts.scaling_chart(frame, mean_tool_calls(scenario)), width="stretch")
    slopes = views.growth_exponents(frame, "api_cpu_s")
    growth = ", ".join(f"{name} {slope:.2f}" for name, slope in slopes.items())
    st.caption(
        "Per-request HTTP rebuilds the whole history every turn, so its API work over a "
        "rollout grows with the square of the turns; WebSocket mode processes only the new "
        f"input, so it grows linearly. Log-log slope of API work near 100 calls: {growth}."
    )


def load_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    """Latency and utilization against concurrent agents, and the capacity at an SLO."""
    load = scenario.load
    st.caption(
        f"The fleet engine: agents share the API cell of the scenario's capacity section. Each "
        f"point simulates {load.duration_s:g} s after a {load.warmup_s:g} s warm-up, "
        f"{load.replications} replications (change them under Advanced: load)."
    )
    text = st.text_input(
        "concurrent agents (comma-separated)", fleet.DEFAULT_AGENTS, key="load:agents"
    )
    try:
        counts = fleet.agent_counts(text)
    except ScenarioError as error:
        st.error(str(error))
        return
    key = _run_key(scenario, transports, "load", *counts)
    if st.button("Simulate the fleet", type="primary"):
        st.session_state.setdefault(SIMULATED, set()).add(key)
    if key in st.session_state.get(SIMULATED, set()):
        bar = st.progress(0.0)
        points = []
        total = len(transports) * len(counts)
        for done, (transport, agents) in enumerate(itertools.product(transports, counts)):
            bar.progress(done / total, text=f"simulating {transport}: {agents} agents")
            points.append(fleet_point(scenario.model_dump_json(), transport, agents))
        bar.empty()
        st.altair_chart(charts.latency_chart(fleet.latency_frame(points)))
        st.altair_chart(charts.utilization_chart(fleet.utilization_frame(points)))
    capacity_view(scenario, transports)


def capacity_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    st.subheader("Capacity at an SLO")
    metric_box, limit_box, bound_box = st.columns(3)
    metric = metric_box.selectbox(
        "SLO metric", fleet.SLO_NAMES, index=fleet.SLO_NAMES.index(fleet.DEFAULT_SLO.metric)
    )
    limit_s = limit_box.number_input(
        "limit (s)", min_value=0.001, value=fleet.DEFAULT_SLO.limit_s, format="%g"
    )
    max_agents = bound_box.number_input(
        "search up to (agents)", 1, 100_000, 2_000, key="capacity:max_agents"
    )
    slo = Slo(metric, float(limit_s))
    key = _run_key(scenario, transports, "capacity", metric, limit_s, max_agents)
    if st.button("Find the capacity"):
        st.session_state.setdefault(SIMULATED, set()).add(key)
    if key not in st.session_state.get(SIMULATED, set()):
        return
    found = {
        t.value: fleet_capacity(scenario.model_dump_json(), t, slo, int(max_agents))
        for t in transports
    }
    for column, (name, result) in zip(st.columns(len(found)), found.items(), strict=True):
        failing = result["first_failing_agents"]
        column.metric(
            f"{name}: agents meeting {metric} <= {limit_s:g} s",
            f"{result['capacity_agents']:,}",
            delta=f"{failing:,} do not" if failing is not None else None,
            delta_color="off",
            delta_arrow="off",
        )
    baseline = found[transports[0].value]["capacity_agents"]
    for name, result in list(found.items())[1:]:
        if baseline:
            st.markdown(
                f"#### {name} serves {result['capacity_agents'] / baseline:.2f}x the agents of "
                f"{transports[0].value} at this SLO."
            )


def sweep_view() -> None:
    """Open a sweep's results (a directory or an uploaded Parquet file), pick what to plot."""
    source = st.radio(
        "results from",
        ["a results directory", "a Parquet file"],
        horizontal=True,
        key="sweep:source",
    )
    try:
        chosen_sweep = _chosen_sweep(source)
    except ScenarioError as error:
        st.error(str(error))
        return
    if chosen_sweep is None:
        return
    key, results = chosen_sweep
    st.caption(f"**{results.name}** {results.description}: {results.table.num_rows} rows")
    metrics = sweeps.metric_columns(results)
    if not metrics:
        st.info("These rows have no numeric result columns to plot.")
        return
    kind_box, x_box, y_box, hue_box = st.columns(4)
    kind = kind_box.selectbox("plot", sweeps.KINDS, key="sweep:kind")
    preferred = default_metric(metrics)
    y = y_box.selectbox(
        "metric", metrics, index=metrics.index(preferred) if preferred in metrics else 0
    )
    x = None if kind == "tornado" else x_box.selectbox("x: swept path", results.axes)
    others = [a for a in results.axes if a != x]
    hue = None
    if kind != "tornado":
        hue = hue_box.selectbox(
            "vertical axis" if kind == "heat map" else "one line per",
            [None, *others],
            key="sweep:hue",
        )
    defaults = results.default_transports(y)
    if kind == "line":
        chosen = tuple(st.multiselect("transports", results.transports, default=defaults))
    else:
        chosen = (st.selectbox("transport", defaults),)
    where = {}
    if kind != "tornado":
        for axis, values in sweeps.free_axes(results, (x, hue), chosen).items():
            where[axis] = st.select_slider(f"{axis} (fixed)", values, key=f"where:{axis}")
    try:
        png = sweep_png(key, results, (kind, x, y, hue), tuple(where.items()), chosen)
    except ScenarioError as error:
        st.error(str(error))
        return
    st.image(png)


def _chosen_sweep(source: str) -> tuple[str, SweepResults] | None:
    """(a key naming the rows' source and version, the rows), or None before a choice."""
    if source == "a Parquet file":
        upload = st.file_uploader("sweep rows (Parquet)", type=["parquet"], key="sweep:upload")
        if upload is None:
            return None
        return upload.file_id, sweeps.results_from_parquet(upload.name, upload.getvalue())
    found = [str(p) for p in sweeps.results_dirs(Path(RESULTS_ROOT))]
    path = st.selectbox(
        "results directory",
        found,
        index=0 if found else None,
        accept_new_options=True,
        key="sweep:directory",
    )
    if path is None:
        st.info(f"No sweep results under {RESULTS_ROOT}/ yet: run `loopbudget sweep`.")
        return None
    parts = Path(path, "parts")
    count = len(list(parts.iterdir())) if parts.is_dir() else 0
    return f"{path}|{count}", sweep_results(path, count)


def _run_key(scenario: Scenario, transports: tuple[Transport, ...], *extra: Any) -> str:
    text = f"{scenario.model_dump_json()}|{','.join(transports)}|{extra}"
    return hashlib.sha256(text.encode()).hexdigest()


def main() -> None:
    st.set_page_config(page_title="loopbudget", layout="wide")
    scenario = scenario_panel()
    st.title("Where does the time go in an agent's loop?")
    st.markdown(f"**{scenario.name}**: {scenario.description}")
    agent = views.single_agent(scenario)
    if agent is not scenario:
        st.info(
            f"This scenario puts a fleet in front of the API ({scenario.load.kind} load). "
            "The budget, rollout, Amdahl and scaling views show one agent without contention; "
            "the load view shows the fleet."
        )
    chosen = st.multiselect(
        "transports (the first is the baseline)",
        [t.value for t in Transport],
        default=[t.value for t in views.DEFAULT_TRANSPORTS],
        key="transports",
        help="; ".join(f"{t.value}: {t.description}" for t in Transport),
    )
    if not chosen:
        st.info("Pick at least one transport.")
        return
    transports = tuple(Transport(name) for name in chosen)
    budget, rollout, amdahl, scaling, load, sweep = st.tabs(
        ["Budget", "One rollout", "Amdahl: decode speed", "Scaling: turns", "Load", "Sweeps"]
    )
    with budget:
        budget_view(agent, transports)
    with rollout:
        rollout_view(agent, transports)
    with amdahl:
        amdahl_view(agent, transports)
    with scaling:
        scaling_view(agent, transports)
    with load:
        load_view(scenario, transports)
    with sweep:
        sweep_view()


# Streamlit runs this file as __main__; the guard keeps worker processes that
# re-import the main module (multiprocessing spawn, Dask) from drawing the page.
if __name__ == "__main__":
    main()
