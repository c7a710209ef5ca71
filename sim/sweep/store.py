"""The results directory: the sweep file, a manifest and Parquet parts written atomically.

Layout of ``DIR``::

    _sweep.toml        the sweep file, verbatim
    _manifest.json     what the results depend on (fingerprint, package version, sizes)
    parts/part-NNNNNN.parquet   the rows of chunk NNNNNN, written once it is finished
    .lock              held by the sweep writing here (``sim.sweep.lock``)

Parquet readers skip names starting with ``_`` or ``.``, so the directory reads
as a dataset of its parts: ``pandas.read_parquet(DIR)``, DuckDB's
``read_parquet('DIR/**/*.parquet')``.  Directories written before, with
``manifest.json`` and ``sweep.toml``, are read as they are and take the new
names when resumed.

A part is written to a temporary name, flushed to disk and renamed, so a
process killed at any moment leaves only whole parts behind.  A part is
checked whenever it is read: its Parquet footer, the row count the manifest
implies and the checksum of every page.  A resumed sweep recomputes the parts
that fail (a disk that lost data, a part cut short, a stray file) and runs the
chunks without a part; reading a damaged part for a plot is a one-line error.
Reading concatenates the parts and sorts the rows by point, transport (file
order) and seed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from models.errors import ScenarioError
from sim.sweep.manifest import (
    LEGACY_NAMES,
    MANIFEST,
    SWEEP_FILE,
    Manifest,
    manifest_of,
    metadata_path,
    read_manifest,
)
from sim.sweep.rows import ERROR, POINT, SEED, TRANSPORT
from sim.sweep.sweepfile import Sweep

PARTS = "parts"
_PART = re.compile(r"^part-(\d{6})\.parquet$")


@dataclass(frozen=True)
class Survey:
    """What a results directory already holds for a sweep: whole parts and damaged ones."""

    finished: set[int] = field(default_factory=set)
    damaged: dict[str, str] = field(default_factory=dict)
    """Part file name -> what is wrong with it."""


class ResultsDir:
    """A sweep's output directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parts = path / PARTS

    def survey(self, sweep: Sweep, resume: bool) -> Survey:
        """Check that ``sweep`` may write here and find its finished parts; writes nothing."""
        if self.path.exists() and not self.path.is_dir():
            raise ScenarioError(f"--out {self.path}: exists and is not a directory")
        if not metadata_path(self.path, MANIFEST).is_file():
            return Survey()
        if not resume:
            raise ScenarioError(
                f"--out {self.path}: already holds sweep results; "
                "add --resume to finish them, or choose another directory"
            )
        found = read_manifest(self.path)
        expected = manifest_of(sweep)
        if found.fingerprint != expected.fingerprint:
            raise ScenarioError(
                f"--resume: {self.path} holds results of a different sweep "
                f"({found.name!r}, loopbudget {found.loopbudget_version}); "
                "the sweep file, its base scenario or the version changed"
            )
        survey = Survey()
        for part in self._part_files():
            number = _chunk(part)
            problem = checked_part(part, number, expected)[1]
            if problem is None:
                survey.finished.add(number)
            else:
                survey.damaged[part.name] = problem
        return survey

    def prepare(self, sweep: Sweep, survey: Survey) -> None:
        """Write the sweep file and the manifest; drop damaged parts and stale temporary files.

        Call it holding the directory's lock (``sim.sweep.lock.writer_lock``): a
        temporary file here belongs to a sweep that is no longer running.
        """
        self.parts.mkdir(parents=True, exist_ok=True)
        for stale in self.parts.glob(".*.tmp"):
            stale.unlink()
        for name in survey.damaged:
            (self.parts / name).unlink()
        _write_atomic(self.path / SWEEP_FILE, sweep.text.encode())
        _write_atomic(self.path / MANIFEST, manifest_of(sweep).model_dump_json(indent=2).encode())
        for legacy in LEGACY_NAMES.values():
            (self.path / legacy).unlink(missing_ok=True)

    def open(self, sweep: Sweep, resume: bool) -> set[int]:
        """``survey`` then ``prepare``: the chunks already finished."""
        survey = self.survey(sweep, resume)
        self.prepare(sweep, survey)
        return survey.finished

    def finished(self) -> set[int]:
        """Chunk numbers that have a part."""
        return {_chunk(p) for p in self._part_files()}

    def write_part(self, chunk: int, table: pa.Table) -> None:
        """Write the rows of one finished chunk as one Parquet part, atomically."""
        final = self.parts / f"part-{chunk:06d}.parquet"
        temporary = self.parts / f".{final.name}.tmp"
        pq.write_table(table, temporary, write_page_checksum=True)
        with temporary.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, final)
        _fsync_directory(self.parts)

    def _part_files(self) -> list[Path]:
        if not self.parts.is_dir():
            return []
        return sorted(p for p in self.parts.iterdir() if _PART.match(p.name))


def _chunk(part: Path) -> int:
    """The chunk number in a part's file name."""
    match = _PART.match(part.name)
    if match is None:
        raise ValueError(f"{part}: not a part file (part-NNNNNN.parquet)")
    return int(match[1])


def checked_part(path: Path, chunk: int, manifest: Manifest) -> tuple[pa.Table | None, str | None]:
    """A part's rows and what is wrong with it (None when whole): its footer, its row
    count and the checksum of every page are checked."""
    try:
        table = pq.read_table(path, page_checksum_verification=True)
    except (pa.ArrowException, OSError) as error:
        return None, str(error).splitlines()[0]
    return table, _rows_problem(table, chunk, manifest)


def read_results(path: Path | str) -> pa.Table:
    """All rows of a results directory, sorted by point, transport (file order) and seed."""
    path = Path(path)
    manifest = read_manifest(path)
    parts = ResultsDir(path)._part_files()
    if not parts:
        raise ScenarioError(f"{path}: no finished points yet")
    tables = []
    for part in parts:
        table, problem = checked_part(part, _chunk(part), manifest)
        if problem is not None:
            raise ScenarioError(
                f"{path}: {PARTS}/{part.name} is damaged ({problem}); run the sweep again "
                "with --resume to recompute it"
            )
        tables.append(table)
    table = pa.concat_tables(tables, promote_options="permissive")
    order = pc.index_in(table[TRANSPORT], value_set=pa.array(list(manifest.transports)))
    table = table.append_column("_transport_order", order)
    table = table.sort_by(
        [(POINT, "ascending"), ("_transport_order", "ascending"), (SEED, "ascending")]
    )
    return table.drop_columns(["_transport_order"])


def failures(table: pa.Table) -> tuple[int, str | None]:
    """Number of (point, seed) runs that recorded an error, and the first error."""
    failed = table.filter(pc.is_valid(table[ERROR]))
    runs = set(zip(failed[POINT].to_pylist(), failed[SEED].to_pylist(), strict=True))
    return len(runs), (failed[ERROR][0].as_py() if failed.num_rows else None)


def _rows_problem(table: pa.Table, chunk: int, manifest: Manifest) -> str | None:
    if chunk >= manifest.chunks:
        return f"the sweep has {manifest.chunks} parts, not part {chunk}"
    expected = manifest.part_rows(chunk)
    if table.num_rows != expected:
        return f"{table.num_rows} rows, expected {expected}"
    if TRANSPORT not in table.column_names or POINT not in table.column_names:
        return f"no {TRANSPORT!r} or {POINT!r} column"
    return None


def _write_atomic(path: Path, content: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("wb") as file:
        file.write(content)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
