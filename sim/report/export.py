"""A simulated run's records as tables: one row per rollout and one per turn, written by suffix.

``--out FILE`` of ``run`` and ``compare`` and the dashboard's downloads write
these.  A ``.parquet`` or ``.csv`` FILE holds the rollouts and a sibling
``FILE.turns.parquet`` (``.csv``) the turns; a ``.json`` FILE holds both as
``{"rollouts": [...], "turns": [...]}``.  Every row names its run (spec,
transport, seed, scenario hash); durations end in ``_s`` and the time a turn
started, in simulated seconds, is ``start_at_s``.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from models.errors import ScenarioError
from models.scenario_hash import scenario_hash
from models.stages import POOLS, STAGES
from sim.analysis.run import FleetRun, Run, SimulatedRun
from sim.turn.phases import WAIT_POOLS
from sim.turn.records import RolloutRecords, TurnRecords

SUFFIXES = (".parquet", ".csv", ".json")
ROLLOUTS, TURNS = "rollouts", "turns"


@dataclass(frozen=True)
class RecordTables:
    """The rollouts and the turns of one or more runs; the ``side`` column is each run's label
    (the spec of a single run, ``a`` or ``b`` of a comparison)."""

    rollouts: pa.Table
    turns: pa.Table


def record_tables(runs: dict[str, Run]) -> RecordTables:
    """The records of simulated runs that kept their turns, labelled (e.g. ``a`` and ``b``
    of a comparison)."""
    turns = [_turn_columns(_head(side, run), run.turn_records()) for side, run in runs.items()]
    return RecordTables(rollout_table(runs), pa.concat_tables(turns))


def rollout_table(runs: dict[str, Run]) -> pa.Table:
    """One row per simulated rollout of each labelled run (a fleet's: every replication)."""
    return pa.concat_tables(
        [
            _rollout_columns(_head(side, run), replication, records)
            for side, run in runs.items()
            for replication, records in _replications(run)
        ]
    )


def output_paths(path: Path) -> dict[str, Path]:
    """Where ``write_records`` puts the rollouts and the turns of ``--out path``."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ScenarioError(
            f"--out {path}: unknown format {suffix!r}; allowed: .parquet, .csv, .json"
        )
    if suffix == ".json":
        return {ROLLOUTS: path, TURNS: path}
    return {ROLLOUTS: path, TURNS: path.with_name(f"{path.stem}.{TURNS}{path.suffix}")}


def write_records(path: Path, tables: RecordTables) -> list[Path]:
    """Write the tables in the format of ``path``'s suffix; the files written."""
    paths = output_paths(path)
    for name, content in encode(tables, path.suffix.lower()).items():
        paths[name].write_bytes(content)
    return list(dict.fromkeys(paths.values()))


def encode(tables: RecordTables, suffix: str) -> dict[str, bytes]:
    """The tables as file contents in one format (JSON: one document holding both)."""
    if suffix == ".json":
        document = {ROLLOUTS: tables.rollouts.to_pylist(), TURNS: tables.turns.to_pylist()}
        return {ROLLOUTS: json.dumps(document).encode()}
    return {name: _table_bytes(getattr(tables, name), suffix) for name in (ROLLOUTS, TURNS)}


def read_records(path: Path) -> RecordTables:
    """The tables ``write_records`` wrote to ``path``."""
    paths = output_paths(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        document = json.loads(path.read_text())
        return RecordTables(
            pa.Table.from_pylist(document[ROLLOUTS]), pa.Table.from_pylist(document[TURNS])
        )
    read = pq.read_table if suffix == ".parquet" else pacsv.read_csv
    return RecordTables(read(paths[ROLLOUTS]), read(paths[TURNS]))


def _head(side: str, run: Run) -> dict[str, Any]:
    return {
        "side": side,
        "spec": run.spec.text,
        "transport": run.spec.transport.value,
        "seed": run.scenario.seed,
        "scenario_hash": scenario_hash(run.scenario),
    }


def _replications(run: Run) -> list[tuple[int, RolloutRecords]]:
    if isinstance(run, FleetRun):
        return [(index, replication.records) for index, replication in enumerate(run.replications)]
    if not isinstance(run, SimulatedRun):
        raise ScenarioError(f"--out: {run.spec.text}: needs --engine des (no records to write)")
    return [(0, run.records)]


def _rollout_columns(head: dict[str, Any], replication: int, r: RolloutRecords) -> pa.Table:
    columns: dict[str, Any] = {key: [value] * r.count for key, value in head.items()}
    columns["replication"] = np.full(r.count, replication)
    columns["rollout"] = np.arange(r.count)
    columns["started_at_s"] = r.started_at_s
    columns["e2e_s"] = r.e2e_s
    columns["turns"] = r.turns.astype(np.int64)
    columns["new_connections"] = r.cold_turns.astype(np.int64)
    columns["ttft_mean_s"] = r.ttft_sum_s / r.turns
    columns["api_cpu_s"] = r.api_cpu_s
    columns["safety_cpu_s"] = r.safety_cpu_s
    columns["rate_limited"] = r.rate_limited.astype(np.int64)
    columns["rate_limit_wait_s"] = r.rate_limit_wait_s
    columns.update({f"{stage.value}_s": r.stage_s[:, i] for i, stage in enumerate(STAGES)})
    columns.update({f"wait_{pool.value}_s": r.pool_wait_s[:, i] for i, pool in enumerate(POOLS)})
    return pa.table(columns)


def _turn_columns(head: dict[str, Any], t: TurnRecords) -> pa.Table:
    count = int(t.rollout.size)
    columns: dict[str, Any] = {key: [value] * count for key, value in head.items()}
    columns["rollout"] = t.rollout.astype(np.int64)
    columns["turn"] = t.turn_index.astype(np.int64)
    columns["start_at_s"] = t.start_at_s
    columns["new_connection"] = t.cold.astype(bool)
    columns["ttft_s"] = t.ttft_s
    columns["api_cpu_s"] = t.api_cpu_s
    columns["post_overlapped_s"] = t.post_overlapped_s
    columns["safety_parallel_s"] = t.safety_parallel_s
    columns["rate_limited"] = t.rate_limited.astype(np.int64)
    columns.update({f"{stage.value}_s": t.stage_s[:, i] for i, stage in enumerate(STAGES)})
    for pool in POOLS:
        mine = [i for i, waited in enumerate(WAIT_POOLS) if waited is pool]
        columns[f"wait_{pool.value}_s"] = t.wait_s[:, mine].sum(axis=1)
    return pa.table(columns)


def _table_bytes(table: pa.Table, suffix: str) -> bytes:
    buffer = io.BytesIO()
    if suffix == ".parquet":
        pq.write_table(table, buffer)
    else:
        pacsv.write_csv(table, buffer)
    return buffer.getvalue()
