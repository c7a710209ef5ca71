"""The results directory: the sweep file, a manifest and Parquet parts written atomically.

Layout of ``DIR``::

    _sweep.toml        the sweep file, verbatim
    _manifest.json     what the results depend on (fingerprint, package version, sizes)
                       and the files the writer made (``files``)
    parts/part-NNNNNN.parquet   the rows of chunk NNNNNN, written once it is finished
    .lock              held by the sweep writing here (``sim.sweep.lock``)

Parquet readers skip names starting with ``_`` or ``.``, so the directory reads
as a dataset of its parts: ``pandas.read_parquet(DIR)``, DuckDB's
``read_parquet('DIR/**/*.parquet')``.  Directories written before, with
``manifest.json`` and ``sweep.toml``, are read as they are and take the new
names when resumed.

The writer never deletes or overwrites a file it did not write: a directory
without a manifest that already holds ``_sweep.toml`` or a non-empty ``parts``
is refused, the manifest lists the writer's files (``files``), and an old
layout's ``sweep.toml`` is removed only when it is the sweep's own text (a
user's sweep file of that name in ``--out`` stays).

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
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from models.errors import ScenarioError
from sim.sweep.fingerprint import Resolved, part_metadata, resolve
from sim.sweep.manifest import (
    LEGACY_NAMES,
    MANIFEST,
    OWN_FILES,
    PARTS,
    SWEEP_FILE,
    manifest_of,
    metadata_path,
    package_version,
    read_manifest,
)
from sim.sweep.part_check import changed_point, checked_part
from sim.sweep.read_estimate import check_read
from sim.sweep.rows import ERROR, POINT, SEED, TRANSPORT
from sim.sweep.sweepfile import Sweep

_PART = re.compile(r"^part-(\d{6})\.parquet$")
_WHAT_CHANGES = "the sweep file, its base scenario, a hardware profile or the version changed"


@dataclass(frozen=True)
class Survey:
    """What a results directory already holds for a sweep: whole parts and damaged ones."""

    finished: set[int] = field(default_factory=set)
    damaged: dict[str, str] = field(default_factory=dict)
    """Part file name -> what is wrong with it."""
    replaced: tuple[str, ...] = ()
    """Files of the old layout that the new names replace (proven the writer's own)."""


class ResultsDir:
    """A sweep's output directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parts = path / PARTS

    def survey(self, sweep: Sweep, resume: bool, resolved: Resolved) -> Survey:
        """Check that ``sweep`` (its points ``resolved``) may write here and find its
        finished parts; writes nothing."""
        if self.path.exists() and not self.path.is_dir():
            raise ScenarioError(f"--out {self.path}: exists and is not a directory")
        if not metadata_path(self.path, MANIFEST).is_file():
            self._check_no_foreign_files()
            return Survey()
        if not resume:
            raise ScenarioError(
                f"--out {self.path}: already holds sweep results; "
                "add --resume to finish them, or choose another directory"
            )
        found = read_manifest(self.path)
        expected = manifest_of(sweep, resolved.fingerprint)
        if found.fingerprint != expected.fingerprint:
            raise ScenarioError(
                f"--resume: {self.path} holds results of a different sweep "
                f"({found.name!r}, loopbudget {found.loopbudget_version}): "
                f"{changed_point(self._part_files(), resolved) or _WHAT_CHANGES}; "
                "run it into another directory"
            )
        survey = Survey(replaced=self._old_layout_files(sweep))
        for part in self._part_files():
            number = _chunk(part)
            problem = checked_part(part, number, expected, resolved)[1]
            if problem is None:
                survey.finished.add(number)
            else:
                survey.damaged[part.name] = problem
        return survey

    def prepare(self, sweep: Sweep, survey: Survey, resolved: Resolved) -> None:
        """Write the sweep file and the manifest; drop damaged parts and stale temporary files.

        Call it holding the directory's lock (``sim.sweep.lock.writer_lock``): a
        temporary file here belongs to a sweep that is no longer running.
        """
        # The manifest first: a writer killed after it leaves a directory that says whose
        # the files beside it are.
        self.path.mkdir(parents=True, exist_ok=True)
        self._written = (manifest_of(sweep, resolved.fingerprint), resolved)
        _write_atomic(self.path / MANIFEST, self._written[0].model_dump_json(indent=2).encode())
        _write_atomic(self.path / SWEEP_FILE, sweep.text.encode())
        for name in survey.replaced:
            (self.path / name).unlink(missing_ok=True)
        self.parts.mkdir(exist_ok=True)
        for stale in self.parts.glob(".*.tmp"):
            stale.unlink()
        for name in survey.damaged:
            (self.parts / name).unlink()

    def open(self, sweep: Sweep, resume: bool) -> set[int]:
        """``resolve``, ``survey`` then ``prepare``: the chunks already finished."""
        resolved = resolve(sweep, package_version())
        survey = self.survey(sweep, resume, resolved)
        self.prepare(sweep, survey, resolved)
        return survey.finished

    def finished(self) -> set[int]:
        """Chunk numbers that have a part."""
        return {_chunk(p) for p in self._part_files()}

    def write_part(self, chunk: int, table: pa.Table) -> None:
        """Write the rows of one finished chunk as one Parquet part, atomically, with what
        it records about itself (``part_metadata``); call ``prepare`` first."""
        manifest, resolved = self._written
        table = table.replace_schema_metadata(
            part_metadata(resolved, chunk, manifest.runs_of(chunk))
        )
        final = self.parts / f"part-{chunk:06d}.parquet"
        temporary = self.parts / f".{final.name}.tmp"
        try:
            # Dictionary pages only where values repeat (strings): numbers are mostly
            # distinct, and encoding them twice costs more CPU than the part's compression.
            strings = [f.name for f in table.schema if pa.types.is_string(f.type)]
            pq.write_table(table, temporary, write_page_checksum=True, use_dictionary=strings)
            with temporary.open("rb") as written:
                os.fsync(written.fileno())
            os.replace(temporary, final)
            _fsync_directory(self.parts)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            raise _cannot_write(self.path, f"{PARTS}/{final.name}", error) from None

    def _check_no_foreign_files(self) -> None:
        """A directory without a manifest must not hold a name the writer would write."""
        for name in OWN_FILES:
            path = self.path / name.rstrip("/")
            if name.endswith("/") and path.is_dir() and not any(path.iterdir()):
                continue
            if path.exists() or path.is_symlink():
                raise ScenarioError(
                    f"--out {self.path}: holds {name} but no {MANIFEST}, so no sweep wrote it; "
                    "choose another directory, or move it away"
                )

    def _old_layout_files(self, sweep: Sweep) -> tuple[str, ...]:
        """The old layout's files proven the writer's: the manifest just read in their place,
        and the sweep file if it is this sweep's text."""
        replaced = []
        manifest, copy = (self.path / LEGACY_NAMES[n] for n in (MANIFEST, SWEEP_FILE))
        if metadata_path(self.path, MANIFEST) == manifest:
            replaced.append(manifest.name)
        if copy.is_file() and not copy.is_symlink() and _text_or_none(copy) == sweep.text:
            replaced.append(copy.name)
        return tuple(replaced)

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


def read_results(
    path: Path | str,
    written: dict[int, pa.Table] | None = None,
    columns: tuple[str, ...] | None = None,
) -> pa.Table:
    """All rows of a results directory, sorted by point, transport (file order) and seed
    (only ``columns``, if given). ``written``: parts this process has just written, by
    chunk, taken as they are instead of read back (a sweep's totals)."""
    path = Path(path)
    manifest = read_manifest(path)
    written = written or {}
    parts = {_chunk(p): p for p in ResultsDir(path)._part_files()}
    if not parts:
        raise ScenarioError(f"{path}: no finished points yet")
    unread = [part for chunk, part in parts.items() if chunk not in written]
    check_read(f"reading {path}", filter(None, map(_footer, unread)))
    tables = []
    for chunk, part in parts.items():
        table, problem = written.get(chunk), None
        if table is None:
            table, problem = checked_part(part, chunk, manifest)
        if table is None or problem is not None:
            raise ScenarioError(
                f"{path}: {PARTS}/{part.name} is damaged ({problem}); run the sweep again "
                "with --resume to recompute it"
            )
        tables.append(table.replace_schema_metadata(None))
    table = pa.concat_tables(tables, promote_options="permissive")
    if columns is not None:
        table = table.select(list(columns))
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


def _footer(part: Path) -> pq.FileMetaData | None:
    """A part's Parquet footer (None if it cannot be read: the part is checked as it is read)."""
    try:
        return pq.read_metadata(part)
    except (pa.ArrowException, OSError):
        return None


def _text_or_none(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` to a new temporary file (never an existing one), then rename it."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "wb") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _cannot_write(path.parent, path.name, error) from None


def _cannot_write(directory: Path, name: str, error: OSError) -> ScenarioError:
    """A write that failed (a full disk, a file size limit, no permission), in one line; the
    parts already written stay."""
    reason = error.strerror or (str(error).splitlines() or ["an I/O error"])[0]
    return ScenarioError(
        f"--out {directory}: cannot write {name} ({reason}); the parts written before it are "
        "kept: run the sweep again with --resume once the disk has room"
    )


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
