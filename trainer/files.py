"""The trainer's atomic writes (``result.json``, a checkpoint's ``state.json`` and completion marker).

The mechanism, and why it is safe on a GCS FUSE mount, is :mod:`tfcli.fileio`'s; this adds JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tfcli.fileio import fsync_directory, write_atomic

__all__ = ["atomic_write_json", "atomic_write_text", "fsync_directory", "fsync_file"]


atomic_write_text = write_atomic


def atomic_write_json(path: Path, data: Any) -> None:
    """``atomic_write_text`` of indented JSON with a final newline."""
    atomic_write_text(path, json.dumps(data, indent=2) + "\n")


def fsync_file(path: Path) -> None:
    """Flush a file someone else wrote (TensorFlow's checkpoint files) to disk before it is declared complete."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
