"""Writing files so that a crash (or SIGKILL) never leaves a half-written one behind.

Results may live on a GCS FUSE mount, where renaming a directory is not atomic but replacing a single file is
(the object is uploaded on close and swapped in whole). So every file that readers trust — ``result.json``, a
checkpoint's ``state.json`` and its completion marker — is written to a temporary name in the same folder,
flushed to disk, and moved over its final name with ``os.replace``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def fsync_directory(path: Path) -> None:
    """Make a folder's entries (new or renamed files) durable; a no-op where folders cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: readers see the old content or the new, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_directory(path.parent)


def atomic_write_json(path: Path, data: Any) -> None:
    """``atomic_write_text`` of indented JSON with a final newline."""
    atomic_write_text(path, json.dumps(data, indent=2) + "\n")


def fsync_file(path: Path) -> None:
    """Flush a file someone else wrote (TensorFlow's checkpoint files) to disk before it is declared complete."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
