"""The dashboard's sidebar: preset, upload, hardware, main knobs, every other field.

A control shows the loaded scenario's value until it is moved; only moved
controls change the scenario, so an untouched panel is exactly the preset.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from models.errors import ScenarioError
from models.loading import preset_names, raw_scenario, validate
from models.scenario import Scenario
from sim.dashboard.fields import (
    FieldKind,
    FieldSpec,
    apply_field,
    lookup,
    scenario_fields,
    shown_value,
)
from sim.dashboard.io import scenario_from_upload, scenario_toml
from sim.dashboard.knobs import COVERED_PATHS, HARDWARE, KNOBS, Control, Knob, apply

DEFAULT_PRESET = "codex-spark"
Table = dict[str, Any]

# Session-state keys. BASE: the table of the loaded scenario (preset or upload)
# the controls start from.
BASE = "base"
BASE_LABEL = "base_label"
UPLOAD_ERROR = "upload_error"
UPLOADED = "uploaded"
"""The preset box's entry for the uploaded scenario while it is in use."""
CONTROL_PREFIXES = ("knob:", "field:")


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
    if name not in preset_names():
        return
    load_base(validate(raw_scenario(name)), f"preset {name}")
    st.session_state.pop(UPLOAD_ERROR, None)
    st.session_state.pop(UPLOADED, None)


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
    st.session_state[UPLOADED] = f"uploaded: {upload.name}"
    st.session_state["preset"] = st.session_state[UPLOADED]


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
    uploaded = [st.session_state[UPLOADED]] if UPLOADED in st.session_state else []
    bar.selectbox(
        "preset (or the uploaded scenario)",
        [*uploaded, *presets],
        index=0 if uploaded else presets.index(DEFAULT_PRESET),
        key="preset",
        on_change=on_preset,
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

    bar.button("Reset controls", on_click=reset_controls, width="stretch")
    bar.download_button(
        "Download the scenario (TOML)",
        scenario_toml(scenario),
        file_name=f"{scenario.name}.toml",
        mime="application/toml",
        width="stretch",
    )
    return scenario
