"""An uploaded agent trace, read and fitted as ``loopbudget fit`` does, beside its fitted scenario.

The upload is read by the trace readers (the format told from its content), fitted
(``sim.traces.fit``) and the fitted scenario simulated on the recorded transport
(the DES), so the page can put the trace's measured rollouts (e2e per rollout,
TTFT per request) beside what the fitted scenario gives.  A trace that cannot be
used raises a one-line ``ScenarioError``; what the readers skipped is kept as
warning lines.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from models.errors import ScenarioError
from sim.analysis.run import Engine, SimulatedRun, Spec, execute
from sim.traces.fit import fit_scenario
from sim.traces.measures import measure
from sim.traces.read import read_rollouts
from sim.traces.report import ReadReport, TraceError
from sim.traces.table import TRANSPORTS, Request
from sim.turn.transports import Transport

SIMULATED_ROLLOUTS = 500
"""Rollouts of the fitted scenario's simulation (or twice the trace's, if more)."""
AS_RECORDED = "as recorded"
QUANTILES = np.linspace(0.0, 1.0, 101)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class TraceFit:
    """What an uploaded trace measured and what its fitted scenario gives."""

    file_name: str
    transport: str
    scenario_json: str
    toml: str
    rollouts: int
    requests: int
    fitted_fields: int
    assumed: tuple[str, ...]
    warnings: tuple[str, ...]
    measured_e2e_s: np.ndarray
    measured_ttft_s: np.ndarray
    simulated_e2e_s: np.ndarray
    simulated_ttft_s: np.ndarray


def fit_upload(file_name: str, content: bytes, extends: str, transport: str) -> TraceFit:
    """Read, fit and simulate an uploaded trace; ``transport`` is ``AS_RECORDED`` or a name."""
    name = _UNSAFE.sub("_", Path(file_name).name) or "trace"
    requests, report = _read(name, content)
    measured = measure(requests)
    chosen = None if transport == AS_RECORDED else transport
    if chosen is None and len(measured.transports) != 1:
        found = ", ".join(sorted(measured.transports)) or "none recorded"
        raise ScenarioError(
            f"transport: {name} does not name one transport ({found}); pick the one it was "
            f"recorded with ({', '.join(TRANSPORTS)})"
        )
    fit = fit_scenario(requests, name, extends, chosen, Path(name).stem or "fitted")
    scenario = fit.scenario
    spec = Spec(f"{scenario.name}:{fit.transport}", scenario.name, Transport(fit.transport))
    rollouts = max(SIMULATED_ROLLOUTS, 2 * len(measured.rollout_ids))
    run = execute(spec, scenario, Engine.DES, rollouts)
    if not isinstance(run, SimulatedRun):
        raise ScenarioError(f"extends = {extends!r}: a fleet preset; fit one agent's trace")
    return TraceFit(
        file_name=name,
        transport=fit.transport,
        scenario_json=scenario.model_dump_json(),
        toml=fit.toml(),
        rollouts=len(measured.rollout_ids),
        requests=len(requests),
        fitted_fields=len(fit.sources),
        assumed=tuple(fit.assumed),
        warnings=tuple(report.lines_of_text()),
        measured_e2e_s=measured.e2e_s,
        measured_ttft_s=measured.ttft_s,
        simulated_e2e_s=run.records.e2e_s,
        simulated_ttft_s=run.records.turn_ttft_s,
    )


def _read(name: str, content: bytes) -> tuple[list[Request], ReadReport]:
    """The upload's requests, read from a temporary copy (the readers stream a file)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        report = ReadReport(name)
        try:
            requests = [r for rollout in read_rollouts(path, report) for r in rollout]
        except TraceError as error:
            raise ScenarioError(str(error).replace(str(path), name)) from None
    return requests, report


def comparison_frame(result: TraceFit) -> pd.DataFrame:
    """Measured against the fitted scenario: mean, p50 and p95 of e2e and TTFT."""
    rows = []
    for what, measured, simulated, scale, unit in (
        ("e2e per rollout", result.measured_e2e_s, result.simulated_e2e_s, 1.0, "s"),
        ("TTFT per request", result.measured_ttft_s, result.simulated_ttft_s, 1e3, "ms"),
    ):
        if measured.size == 0:
            continue
        for statistic, pick in (
            ("mean", np.mean),
            ("p50", lambda v: np.percentile(v, 50)),
            ("p95", lambda v: np.percentile(v, 95)),
        ):
            seen, fitted = float(pick(measured)), float(pick(simulated))
            rows.append(
                {
                    "quantity": f"{what}, {statistic} ({unit})",
                    "measured": seen * scale,
                    "fitted scenario": fitted * scale,
                    "rel. error": fitted / seen - 1.0,
                }
            )
    return pd.DataFrame(rows).set_index("quantity")


def distribution_frame(result: TraceFit) -> pd.DataFrame:
    """Quantiles of e2e and TTFT, measured and simulated, for cumulative plots."""
    parts = []
    for what, measured, simulated in (
        ("e2e per rollout (s)", result.measured_e2e_s, result.simulated_e2e_s),
        ("TTFT per request (s)", result.measured_ttft_s, result.simulated_ttft_s),
    ):
        if measured.size == 0:
            continue
        for source, values in (("trace (measured)", measured), ("fitted scenario", simulated)):
            parts.append(
                pd.DataFrame(
                    {
                        "quantity": what,
                        "source": source,
                        "seconds": np.quantile(values, QUANTILES),
                        "share": QUANTILES,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)
