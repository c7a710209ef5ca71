"""A results directory read for plotting: its rows and what the plots need to know of its sweep."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from models.errors import ScenarioError
from sim.sweep.labels import is_reduction
from sim.sweep.manifest import SWEEP_FILE, metadata_path, read_manifest
from sim.sweep.rows import ERROR, TRANSPORT
from sim.sweep.store import read_results
from sim.sweep.sweepfile import read_sweep_file


@dataclass(frozen=True)
class Results:
    """A results table with what the plots need to know about its sweep."""

    table: pa.Table
    name: str
    description: str
    axes: tuple[str, ...]
    scales: dict[str, str]
    transports: tuple[str, ...]
    baseline: str | None

    @classmethod
    def load(cls, path: Path | str) -> Results:
        path = Path(path)
        table = read_results(path)
        manifest = read_manifest(path)
        sweep = read_sweep_file(metadata_path(path, SWEEP_FILE))[1]
        return cls(
            table=table,
            name=manifest.name,
            description=sweep.description,
            axes=manifest.axes,
            scales={axis.path: axis.scale for axis in sweep.axes},
            transports=manifest.transports,
            baseline=manifest.baseline,
        )

    def select(
        self, metric: str, where: dict[str, Any], transports: tuple[str, ...] = ()
    ) -> pa.Table:
        """Successful rows with ``metric``, matching ``where``, of the chosen transports."""
        table = self.table
        require_column(table, metric, "--y")
        table = table.filter(pc.is_null(table[ERROR]))
        for column, value in where.items():
            require_column(table, column, "--where")
            table = table.filter(_equals(table[column], value))
        chosen = transports or self.default_transports(metric)
        unknown = sorted(set(chosen) - set(self.transports))
        if unknown:
            raise ScenarioError(
                f"--transport = {unknown[0]!r}: not in this sweep; allowed: "
                f"{', '.join(self.transports)}"
            )
        table = table.filter(pc.is_in(table[TRANSPORT], value_set=pa.array(list(chosen))))
        table = table.filter(pc.is_valid(table[metric]))
        if table.num_rows == 0:
            raise ScenarioError(f"--y = {metric!r}: no successful rows match the selection")
        return table

    def default_transports(self, metric: str) -> tuple[str, ...]:
        """Reductions exist for the non-baseline transports; other metrics for all."""
        if is_reduction(metric):
            return tuple(t for t in self.transports if t != self.baseline)
        return self.transports

    def is_log(self, path: str) -> bool:
        return self.scales.get(path) == "log"

    def check_fixed(self, table: pa.Table, shown: tuple[str | None, ...]) -> None:
        """Every swept path not shown must take one value among ``table``'s rows."""
        for axis in self.axes:
            if axis in shown:
                continue
            values = set(table[axis].to_pylist())
            if len(values) > 1:
                raise ScenarioError(
                    f"plot: {axis} takes {len(values)} values in these rows; show it with "
                    f"--hue or fix it with --where {axis}=VALUE"
                )


def require_column(table: pa.Table, column: str, option: str) -> None:
    if column not in table.column_names:
        metrics = [c for c in table.column_names if c.startswith(("e2e_", "ttft_", "budget_s_"))]
        raise ScenarioError(f"{option} = {column!r}: no such column; e.g. {', '.join(metrics[:6])}")


def _equals(column: pa.ChunkedArray, value: Any) -> pa.ChunkedArray:
    if pa.types.is_floating(column.type) or pa.types.is_integer(column.type):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ScenarioError(f"--where: {value!r} is not a number")
        values = column.to_numpy(zero_copy_only=False).astype(float)
        return pa.array(np.isclose(values, float(value), rtol=1e-9, atol=0.0))
    return pc.equal(column, pa.scalar(value).cast(column.type))
