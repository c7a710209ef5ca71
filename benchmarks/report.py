"""Plain-text tables of the benchmark results (reads the JSON-ready results only)."""

from __future__ import annotations

from typing import Any

_MB = 1e6


def format_report(results: dict[str, Any]) -> str:
    """The machine line, then the speed, analytic and memory tables."""
    m = results["machine"]
    header = (
        f"loopbudget benchmark ({results['mode']}), scenario {results['scenario']}\n"
        f"{m['platform']}, {m['cpu_count']} cpus, Python {m['python']}, "
        f"numpy {m['numpy']}, simpy {m['simpy']}\n"
        f"load average at start: {', '.join(f'{x:.2f}' for x in m['load_average_at_start'])}"
    )
    return "\n\n".join(
        [
            header,
            _speed(results["speed"]),
            _analytic(results["analytic"]),
            _memory(results["memory"]),
        ]
    )


def _speed(speed: dict[str, Any]) -> str:
    per_stage, coalesced = speed["models"][-2:]
    rows = [
        [
            row["model"],
            f"{row['turns']:,}",
            f"{row['best_s']:.3f}",
            f"{row['turns_per_s']:,.0f}",
            f"{row['events_per_s']:,.0f}",
            f"{row['events_per_turn']:.2f}",
            f"{row['turns_per_s'] / per_stage['turns_per_s']:.2f}",
            f"{row['turns_per_s'] / coalesced['turns_per_s']:.2f}",
        ]
        for row in speed["models"]
    ]
    title = (
        f"Speed: {speed['rollouts']:,} rollouts, best of {speed['repeats']}; "
        "turns/s as a ratio to each skeleton"
    )
    head = [
        "model",
        "turns",
        "best s",
        "turns/s",
        "events/s",
        "events/turn",
        "x per-stage",
        "x coalesced",
    ]
    return title + "\n" + _table(head, rows)


def _analytic(analytic: dict[str, Any]) -> str:
    rows = [
        [
            f"analytic expect ({analytic['transport']})",
            f"{analytic['evaluation_s'] * 1e3:.3f}",
            f"{analytic['evaluations_per_s']:,.0f}",
        ],
        [
            f"des, {analytic['des_batch_rollouts']} rollouts ({analytic['transport']})",
            f"{analytic['des_batch_s'] * 1e3:.3f}",
            f"{analytic['des_batches_per_s']:,.1f}",
        ],
    ]
    ratio = analytic["evaluations_per_des_batch"]
    return (
        "Analytic engine against one DES batch\n"
        + _table(["evaluation", "ms each", "per s"], rows)
        + f"\nanalytic evaluations per DES batch: {ratio:,.0f}"
    )


def _memory(memory: dict[str, Any]) -> str:
    rows = [
        [
            run["method"],
            f"{run['rollouts']:,}",
            f"{run['turns']:,}",
            f"{run['peak_bytes'] / _MB:.1f}",
            f"{run['retained_bytes'] / _MB:.1f}",
            f"{run['turn_arrays_bytes'] / _MB:.1f}",
            f"{run['stage_matrix_bytes'] / _MB:.1f}",
            f"{run['peak_vs_retained']:.2f}",
            f"{run['peak_vs_stage_matrix']:.2f}",
        ]
        for run in memory["runs"]
    ]
    head = [
        "method",
        "rollouts",
        "turns",
        "peak MB",
        "retained MB",
        "per-turn MB",
        "stage matrix MB",
        "peak/retained",
        "peak/matrix",
    ]
    marginal = [
        [
            method,
            f"{m['peak_bytes_per_turn']:.1f}",
            f"{m['retained_bytes_per_turn']:.1f}",
            f"{m['stage_matrix_bytes_per_turn']:.1f}",
        ]
        for method, m in memory["marginal"].items()
    ]
    return (
        f"Memory of one DES run ({memory['transport']}), each in a fresh subprocess\n"
        + _table(head, rows)
        + "\n\nGrowth from the small to the large run, bytes per added turn\n"
        + _table(["method", "peak", "retained arrays", "stage matrix"], marginal)
    )


def _table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(head, *rows, strict=True)]
    lines = [head, ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    )
