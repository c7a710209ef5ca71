"""Checking a part before its rows are trusted: whole, of its chunk, of this sweep.

A part is read with every page's checksum verified; then its row count, its
runs (every (point, seed) of its chunk, once per transport) and what it
records about itself (``sim.sweep.fingerprint.part_metadata``: the sweep's
fingerprint, its chunk, its runs' point hashes) must be what the manifest
implies.  A part copied over another chunk's, or from another sweep of the
same shape, fails here even when its row count matches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sim.sweep.fingerprint import CHUNK_KEY, FINGERPRINT_KEY, RUNS_KEY, Resolved
from sim.sweep.manifest import Manifest
from sim.sweep.rows import POINT, SEED, TRANSPORT


def checked_part(
    path: Path, chunk: int, manifest: Manifest, resolved: Resolved | None = None
) -> tuple[pa.Table | None, str | None]:
    """A part's rows and what is wrong with it (None when whole).  ``resolved`` (when
    resuming) also checks its runs' point hashes against the points as they resolve now."""
    try:
        table = pq.read_table(path, page_checksum_verification=True)
    except pa.ArrowMemoryError:
        raise  # the machine, not the part: never taken for damage
    except (pa.ArrowException, OSError) as error:
        return None, str(error).splitlines()[0]
    return table, _rows_problem(table, chunk, manifest) or _record_problem(
        table.schema.metadata or {}, chunk, manifest, resolved
    )


def changed_point(parts: list[Path], resolved: Resolved) -> str | None:
    """The first point whose recorded hash differs from its scenario's hash now, named."""
    for path in parts:
        try:
            metadata = pq.read_schema(path).metadata or {}
            runs = json.loads(metadata[RUNS_KEY])
        except (pa.ArrowException, OSError, KeyError, ValueError):
            continue
        for point, _, recorded in runs:
            if not (isinstance(point, int) and 0 <= point < len(resolved.hashes)):
                continue
            now = resolved.hashes[point].decode()
            if recorded != now:
                return (
                    f"point {point} resolves to scenario {now} now, {recorded} when "
                    f"{path.name} was written (an edit of the sweep, its base or a file it "
                    "reads, such as models/hardware.toml)"
                )
    return None


def _rows_problem(table: pa.Table, chunk: int, manifest: Manifest) -> str | None:
    if chunk >= manifest.chunks:
        return f"the sweep has {manifest.chunks} parts, not part {chunk}"
    expected = manifest.part_rows(chunk)
    if table.num_rows != expected:
        return f"{table.num_rows} rows, expected {expected}"
    if any(name not in table.column_names for name in (TRANSPORT, POINT, SEED)):
        return f"no {TRANSPORT!r}, {POINT!r} or {SEED!r} column"
    runs = manifest.runs_of(chunk)
    if not _same_runs(table, runs, len(manifest.transports)):
        first, last = runs[0][0], runs[-1][0]
        return f"its rows are not the runs of chunk {chunk} (points {first} to {last})"
    return None


def _same_runs(table: pa.Table, runs: list[tuple[int, int]], transports: int) -> bool:
    """The table's (point, seed) pairs are ``runs``, each once per transport."""
    if table[POINT].null_count or table[SEED].null_count:
        return False
    found = np.stack([table[POINT].to_numpy(), table[SEED].to_numpy()])
    wanted = np.repeat(np.array(runs, dtype=np.int64).T, transports, axis=1)
    if found.dtype.kind != "i":
        return False
    return bool(np.array_equal(_sorted(found), _sorted(wanted)))


def _sorted(pairs: np.ndarray) -> np.ndarray:
    return pairs[:, np.lexsort((pairs[1], pairs[0]))]


def _record_problem(
    metadata: dict[bytes, bytes], chunk: int, manifest: Manifest, resolved: Resolved | None
) -> str | None:
    """What the part records about itself, against the manifest (parts of writers before
    records were kept, whose manifests list no files, have none)."""
    if not manifest.files:
        return None
    if FINGERPRINT_KEY not in metadata:
        return "no record of the sweep that wrote it"
    if metadata[FINGERPRINT_KEY].decode(errors="replace") != manifest.fingerprint:
        return "written by another sweep (its fingerprint differs from the manifest's)"
    if metadata.get(CHUNK_KEY) != str(chunk).encode():
        recorded = metadata.get(CHUNK_KEY, b"?").decode(errors="replace")
        return f"the part of chunk {recorded}, not of chunk {chunk}"
    runs: Any = _json_or_none(metadata.get(RUNS_KEY, b""))
    expected = manifest.runs_of(chunk)
    if not isinstance(runs, list) or [r[:2] for r in runs if isinstance(r, list)] != [
        list(run) for run in expected
    ]:
        return f"its record does not list the runs of chunk {chunk}"
    if resolved is not None and runs != resolved.runs(expected):
        return "its points' scenarios differ from the points as they resolve now"
    return None


def _json_or_none(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None
