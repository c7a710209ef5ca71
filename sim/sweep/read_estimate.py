"""What reading Parquet rows will take, estimated from the files' footers before a row is read.

A results directory of two million points (a size ``sweep`` accepts) or a
1 MB upload of 60 million compressed rows decodes to gigabytes: ``plot``
aborted with ``std::bad_alloc`` and the dashboard grew to 3 GB.  The footers
give the rows and each column's type, so the decoded size is known first; a
read over the memory cap is refused in one line.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow.parquet as pq

from sim.analysis.estimates import Need, check

READ_COPIES = 3
"""Copies of the rows held at once while reading: decoded, joined or filtered, sorted."""
_FIXED_BYTES = {"DOUBLE": 8, "INT64": 8, "INT32": 4, "FLOAT": 4, "INT96": 12, "BOOLEAN": 1}
_TEXT_BYTES = 16
"""Characters assumed of a text value whose column records no statistics."""
_OFFSET_BYTES = 4
"""Arrow keeps a 4-byte offset per text value."""


def row_bytes(metadata: pq.FileMetaData) -> float:
    """Decoded bytes of one row: fixed-width columns by type, text by its longest value
    (from the column statistics, or ``_TEXT_BYTES`` without them)."""
    total = 0.0
    for index in range(metadata.num_columns):
        column = metadata.schema.column(index)
        kind = column.physical_type
        if str(column.logical_type) == "Null":
            continue  # Arrow's null type: no memory
        if kind in _FIXED_BYTES:
            total += _FIXED_BYTES[kind]
        else:
            total += _OFFSET_BYTES + _longest_text(metadata, index)
    return total


def check_read(what: str, footers: Iterable[pq.FileMetaData]) -> None:
    """Refuse reading the rows of ``footers`` (of one dataset) if they would pass the memory
    cap, with the estimate and the way to raise the cap."""
    rows, widest = 0, 0.0
    for metadata in footers:
        rows += metadata.num_rows
        widest = max(widest, row_bytes(metadata))
    memory = rows * widest * READ_COPIES
    basis = f"{rows:,} rows x {widest:,.0f} bytes x {READ_COPIES} copies while read"
    check(Need(what, memory, basis, 0.0, "", 1, fewer="fewer rows (a smaller sweep or file)"))


def _longest_text(metadata: pq.FileMetaData, index: int) -> float:
    """A text column's bytes a value: the longer of its bounds' lengths and its encoded size
    a value, at least ``_TEXT_BYTES``."""
    longest = float(_TEXT_BYTES)
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(index)
        if chunk.num_values:
            longest = max(longest, chunk.total_uncompressed_size / chunk.num_values)
        statistics = chunk.statistics
        if statistics is not None and statistics.has_min_max:
            longest = max(longest, *(len(_text(v)) for v in (statistics.min, statistics.max)))
    return longest


def _text(value: object) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()
