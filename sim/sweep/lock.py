"""One writer per results directory: a lock held for as long as a sweep writes there.

The lock is ``fcntl.flock`` on ``DIR/.lock``: the system releases it when the
process ends, however it ends, so a sweep killed with ``kill -9`` leaves no
stale lock behind, and a second sweep on the same ``--out`` is refused in one
line instead of deleting the first one's temporary part.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from models.errors import ScenarioError

LOCK = ".lock"


@contextmanager
def writer_lock(directory: Path) -> Iterator[None]:
    """Create ``directory`` if needed and hold its lock; a held lock is a one-line error.

    A directory created here and left with nothing but the lock (the sweep
    stopped before writing) is removed again.
    """
    created = _make_directory(directory)
    path = directory / LOCK
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise ScenarioError(f"--out {directory}: not writable ({error.strerror})") from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "?"
            raise ScenarioError(
                f"--out {directory}: another sweep (process {holder}) is writing there; "
                "wait for it to finish, or choose another directory"
            ) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        if created and [p.name for p in directory.iterdir()] == [LOCK]:
            path.unlink()
            directory.rmdir()
        os.close(descriptor)


def _make_directory(directory: Path) -> bool:
    """Create ``directory`` (and its parents); True if it did not exist."""
    if directory.exists():
        if not directory.is_dir():
            raise ScenarioError(f"--out {directory}: exists and is not a directory")
        return False
    try:
        directory.mkdir(parents=True)
    except OSError as error:
        raise ScenarioError(
            f"--out {directory}: cannot create the directory ({error.strerror})"
        ) from None
    return True
