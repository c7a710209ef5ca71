"""``loopbudget fit``: a scenario fitted to traces, its held-out error, and the answer."""

from __future__ import annotations

import json
from pathlib import Path

import click
import tomli_w

from models.errors import ScenarioError
from sim.analysis.metrics import Metric
from sim.analysis.run import Engine, Spec, execute
from sim.analysis.summary import compare
from sim.cli.output import check_writable, json_text, write_output
from sim.cli.traces import read_traces
from sim.traces.fit import DEFAULT_PRESET, ScenarioFit, fit_scenario
from sim.traces.fit_report import write_report
from sim.traces.holdout import split, validate_on
from sim.turn.transports import Transport

ANSWER_ROLLOUTS = 500


@click.command()
@click.argument("traces", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--extends", default=DEFAULT_PRESET, show_default=True, help="preset for the rest")
@click.option("--transport", default=None, help="the transport the trace was recorded with")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="the fitted scenario (TOML), each field's source in its comments",
)
@click.option(
    "--holdout",
    type=float,
    default=0.0,
    show_default=True,
    help="share of rollouts held out to validate on (e.g. 0.3)",
)
@click.option("--seed", type=int, default=1, show_default=True, help="seed of the split")
@click.option(
    "--report",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="directory for the Markdown report and its figures",
)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def fit(
    traces: tuple[Path, ...],
    extends: str,
    transport: str | None,
    out: Path,
    holdout: float,
    seed: int,
    report: Path | None,
    as_json: bool,
) -> None:
    """Fit a scenario to TRACE files; with --holdout, report its error on unseen rollouts."""
    if not 0.0 <= holdout < 1.0:
        raise ScenarioError(f"--holdout = {holdout}: must be >= 0 and < 1")
    check_writable(out, "--out")
    requests, _ = read_traces(traces)
    label = ", ".join(p.name for p in traces)
    fitted_on, held_out = split(requests, holdout, seed) if holdout > 0 else (requests, [])
    if holdout > 0 and not held_out:
        raise ScenarioError(f"--holdout = {holdout}: too few rollouts to hold any out")
    name = out.stem
    result = fit_scenario(fitted_on, label, extends, transport, name)
    scenario = result.scenario
    write_output(out, "--out", lambda target: target.write_text(scenario_toml(result)))
    validation = None
    if held_out:
        validation = validate_on(scenario, result.transport, held_out, seed)
    answer, reduction = _answer(result)
    if report is not None:
        written = write_report(report, result, validation, answer)
        click.echo(f"wrote {written}", err=True)
    if as_json:
        payload = {
            "scenario": str(out),
            "transport": result.transport,
            "sources": result.sources,
            "assumed": result.assumed,
            "calibration": {k: v for k, v in vars(result.calibration).items() if k != "notes"}
            if result.calibration
            else None,
            "held_out": validation.to_json() if validation else None,
            "ws_e2e_reduction": reduction,
            "answer": answer,
        }
        click.echo(json_text(json.loads(json.dumps(payload, default=float))))
        return
    click.echo(f"wrote {out}: {len(result.sources)} fields fitted, {len(result.assumed)} assumed")
    if validation is not None:
        for name_, s in validation.e2e.items():
            click.echo(
                f"held-out e2e {name_}: measured {s.measured:.3f} s, simulated "
                f"{s.simulated:.3f} s ({s.relative_error:+.1%}, 95% CI "
                f"{s.ci95[0]:+.1%} to {s.ci95[1]:+.1%})"
            )
        click.echo(f"held-out e2e KS distance: {validation.e2e_ks_distance:.3f}")
    click.echo(answer)


def scenario_toml(result: ScenarioFit) -> str:
    """The fitted scenario as TOML, its sources and assumptions as leading comments."""
    header = ["# Fitted by loopbudget fit (docs/traces.md). Where each field comes from:"]
    header += [f"#   {path}: {source}" for path, source in result.sources.items()]
    header += ["# Assumed (kept from the preset; the trace does not inform them):"]
    header += [f"#   {item}" for item in result.assumed]
    header += [f"# Recorded transport: {result.transport}", ""]
    return "\n".join(header) + "\n" + tomli_w.dumps(result.data)


def _answer(result: ScenarioFit) -> tuple[str, dict[str, float]]:
    """The sentence a user came for: what WebSocket mode would save this agent."""
    scenario = result.scenario
    runs = [
        execute(
            Spec(f"{scenario.name}:{t}", scenario.name, Transport(t)),
            scenario,
            Engine.DES,
            ANSWER_ROLLOUTS,
        )
        for t in ("http", "ws")
    ]
    comparison = compare(*runs)
    estimate = comparison.reductions[Metric.E2E_REDUCTION]
    low, high = estimate.ci95 or (float("nan"), float("nan"))
    result_a, result_b = comparison.measured()
    a, b = result_a.budget_s, result_b.budget_s
    biggest = max(a, key=lambda stage: a[stage] - b[stage])
    assumed = "; ".join(result.assumed[:4])
    sentence = (
        f"For this agent, WebSocket mode would save {estimate.value:.1%} (95% CI {low:.1%} to "
        f"{high:.1%}) end to end; the biggest saving is {biggest.label} "
        f"({a[biggest] - b[biggest]:.2f} s per rollout). This rests on the model's transport "
        f"counterfactual and on assumed values ({assumed}; the full list is in the scenario)."
    )
    return sentence, {"value": estimate.value, "ci95_low": low, "ci95_high": high}
