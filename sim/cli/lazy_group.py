"""The command line's group: commands of their own modules loaded only when they run, so
``--help`` and the quick commands start without the simulation's packages."""

from __future__ import annotations

import importlib

import click

LAZY_COMMANDS = {
    "load": (
        "sim.cli.load",
        "load",
        "Latency, throughput and utilization of SPEC at each load point.",
    ),
    "capacity": (
        "sim.cli.capacity",
        "capacity",
        "Largest number of agents meeting every SLO, for http and for ws, and their ratio.",
    ),
    "sweep": (
        "sim.cli.sweep",
        "sweep",
        "Run the parameter sweep FILE (TOML) and write its results to --out as Parquet.",
    ),
    "plot": ("sim.cli.sweep", "plot", "Plot sweep results from DIRECTORY as PNG and SVG."),
    "testbed": (
        "sim.cli.testbed",
        "testbed",
        "The official openai SDK drives agent loops against an emulated Responses API on "
        "loopback; what it measured is put beside the simulation of the same scenario.",
    ),
    "record": (
        "sim.cli.record",
        "record",
        "Record every Responses API request of an agent pointed at this proxy.",
    ),
    "trace": (
        "sim.cli.traces",
        "trace",
        "Read agent traces (Codex rollout JSONL, OTLP JSON, Agents SDK spans).",
    ),
    "fit": (
        "sim.cli.fit",
        "fit",
        "Fit a scenario to TRACE files; with --holdout, report its error on unseen rollouts.",
    ),
    "profile": (
        "sim.cli.profile",
        "profile",
        "Profile the real engine (SmolLM2-135M on llama.cpp) on SPEC's text: prefill, decode, "
        "KV restore, validation and rendering, each alone; write the fitted fields and sources.",
    ),
}
"""Commands of their own modules, loaded when run: name -> (module, attribute, the first
paragraph of its help, which ``--help`` shortens as click would; ``tests/test_import_set.py``
checks it against the command's own)."""


class LazyGroup(click.Group):
    """A group whose commands in ``LAZY_COMMANDS`` are imported only when used, so that
    ``--help`` and the quick commands start without the simulation's packages."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS:
            module, attribute, _ = LAZY_COMMANDS[name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            limit = formatter.width - 6 - len(name)
            if name in LAZY_COMMANDS:
                described = click.Command(name, help=LAZY_COMMANDS[name][2])
                rows.append((name, described.get_short_help_str(limit)))
            else:
                command = super().get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
