"""Writing files so that a crash (or SIGKILL) never leaves a half-written one behind.

Used by the CLI (specs, run records, settings) and the trainer (result.json, checkpoint markers). Results may
live on a GCS FUSE mount, where renaming a directory is not atomic but replacing a single file is (the object is
uploaded on close and swapped in whole), so every file readers trust is written to a temporary name in the same
folder, flushed to disk, and moved over its final name with ``os.replace``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def fsync_directory(path: Path) -> None:
    """Make a folder's entries (new or renamed files) durable; a no-op where folders cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: readers see the old content or the new, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_directory(path.parent)
