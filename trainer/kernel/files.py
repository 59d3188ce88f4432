"""The trainer's atomic writes (``result.json``, a checkpoint's ``state.json`` and completion marker).

A crash (or SIGKILL, or a node going away) must never leave a half-written file that a reader then trusts. On GKE
the results live on a GCS FUSE mount, where renaming a directory is not atomic but replacing a single file is (the
object is uploaded on close and swapped in whole), so every file is written to a temporary name in the same folder,
flushed to disk, and moved over its final name with ``os.replace``.

This is the project's one atomic write: the trainer imports nothing of tfcli but ``trainer.kernel.spec`` and
``trainer.kernel.errors`` (the layer contracts in pyproject.toml), so tfcli writes its own files (specs, run records,
stack files) through this module too.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from trainer.kernel.errors import io_failure

__all__ = [
    "NON_FINITE",
    "atomic_write_json",
    "atomic_write_text",
    "check_writable",
    "finite_json",
    "fsync_directory",
    "fsync_file",
    "strict_json_dumps",
]

# The key a mapping gets when some of its values were NaN or infinite: {key: "nan" | "inf" | "-inf"}, the values
# themselves written as null (docs/design.md §6.3). Strict JSON has no NaN: Python's json module writes it, most
# other parsers (JavaScript's, jq's, Go's) refuse the whole file.
NON_FINITE = "non_finite"


def check_writable(path: Path, flag: str) -> Path:
    """An output file a command can write, checked before any work is done (``play --video``, ``plot -o``): not a
    folder, in a folder that exists and takes a new file (a probe is made and removed: permissions alone do not say
    it, ``/proc`` and read-only mounts refuse root too). Otherwise ``InvalidInput`` naming ``flag``; no folder is
    made."""
    from trainer.kernel.errors import InvalidInput

    if path.is_dir():
        raise InvalidInput(f"{flag}: {path}: is a folder; name a file")
    folder = path.parent
    if not folder.is_dir():
        raise InvalidInput(f"{flag}: {path}: the folder {folder} does not exist")
    probe = folder / f".{path.name}.{os.getpid()}.probe"
    try:
        probe.open("xb").close()
    except OSError as error:
        raise InvalidInput(f"{flag}: {path}: cannot write in {folder} ({error.strerror})") from None
    probe.unlink(missing_ok=True)
    return path


def fsync_directory(path: Path) -> None:
    """Make a folder's entries (new or renamed files) durable; a no-op where folders cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: readers see the old content or the new, never a mix.

    A failure (a full disk) leaves the old file and no temporary one, and is a ``TfcliError`` naming the file.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        _raise_io_failure(error, path)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            _raise_io_failure(error, path)
        raise
    fsync_directory(path.parent)


def _raise_io_failure(error: OSError, path: Path) -> NoReturn:
    failure = io_failure(error, f"writing {path.name}", path)
    if failure is None:
        raise error
    raise failure from error


def _finite(value: Any) -> tuple[Any, str | None]:
    """The value with every NaN and infinity inside it made null, and what the value itself was when it was one."""
    if isinstance(value, float) and not math.isfinite(value):
        return None, str(value)
    if isinstance(value, dict):
        return finite_json(value), None
    if isinstance(value, list | tuple):
        items = [_finite(item) for item in value]
        return [item for item, _ in items], ("some entries" if any(was for _, was in items) else None)
    return value, None


def finite_json(data: Any) -> Any:
    """``data`` for strict JSON: NaN and infinities become null, and each mapping that held one gets
    :data:`NON_FINITE` saying which keys and what they were (a list with some: ``"some entries"``)."""
    if not isinstance(data, dict):
        return _finite(data)[0]
    cleaned: dict[Any, Any] = {}
    flags: dict[str, str] = {}
    for key, value in data.items():
        cleaned[key], was = _finite(value)
        if was is not None:
            flags[str(key)] = was
    if flags:
        cleaned[NON_FINITE] = flags
    return cleaned


def strict_json_dumps(data: Any, **options: Any) -> str:
    """``json.dumps`` that never writes NaN or Infinity (:func:`finite_json`); every JSON file and ``--json``
    output goes through it."""
    return json.dumps(finite_json(data), allow_nan=False, **options)


def atomic_write_json(path: Path, data: Any) -> None:
    """``atomic_write_text`` of indented strict JSON (no NaN: :func:`finite_json`) with a final newline."""
    atomic_write_text(path, strict_json_dumps(data, indent=2) + "\n")


def fsync_file(path: Path) -> None:
    """Flush a file someone else wrote (TensorFlow's checkpoint files) to disk before it is declared complete."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
