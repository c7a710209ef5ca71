"""The dashboard's sweep explorer: open a results directory or a Parquet file, plot."""

from __future__ import annotations

import streamlit as st

from models.errors import ScenarioError
from sim.dashboard import downloads, sweeps
from sim.dashboard.cache import sweep_image, sweep_results
from sim.sweep.labels import default_metric
from sim.sweep.results_table import Results as SweepResults


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
    preferred_kind = sweeps.default_kind(results)
    kinds = ("tornado",) if preferred_kind == "tornado" else sweeps.KINDS
    kind = kind_box.selectbox("plot", kinds, key=f"sweep:kind:{preferred_kind}")
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
    choice, fixed = (kind, x, y, hue), tuple(where.items())
    try:
        png = sweep_image(key, results, choice, fixed, chosen, "png")
    except ScenarioError as error:
        st.error(str(error))
        return
    st.image(png, width="stretch")
    downloads.buttons(
        None,
        "-".join(filter(None, [results.name, kind, y, x, hue])),
        "this plot",
        {
            ".png": ("image/png", lambda: png),
            ".svg": (
                "image/svg+xml",
                lambda: sweep_image(key, results, choice, fixed, chosen, "svg"),
            ),
        },
    )


def _chosen_sweep(source: str) -> tuple[str, SweepResults] | None:
    """(a key naming the rows' source and version, the rows), or None before a choice."""
    if source == "a Parquet file":
        upload = st.file_uploader("sweep rows (Parquet)", type=["parquet"], key="sweep:upload")
        if upload is None:
            return None
        return upload.file_id, sweeps.results_from_parquet(upload.name, upload.getvalue())
    root = sweeps.results_root()
    found = [str(p) for p in sweeps.results_dirs(root)]
    chosen = st.selectbox(
        "results directory", found, index=0 if found else None, key="sweep:directory"
    )
    typed = st.text_input(f"or another results directory under {root}/", key="sweep:path")
    path = typed.strip() or chosen
    if path is None:
        st.info(f"No sweep results under {root}/ yet: run `loopbudget sweep`.")
        return None
    parts = sweeps.inside_root(root, path) / "parts"
    count = len(list(parts.iterdir())) if parts.is_dir() else 0
    return f"{path}|{count}", sweep_results(path, count)
