"""Copying an experiment's results from its GCS bucket to ``experiments/<name>/results/``.

Downloads are incremental (an object whose local copy has the same size and CRC32C is skipped) and atomic per
file (written beside the target, then renamed), so ``download`` can run again and again while training goes on.
"""

from __future__ import annotations

import base64
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from trainer.kernel.errors import TfcliError


@dataclass(frozen=True)
class DownloadReport:
    """What one download did."""

    downloaded: int
    unchanged: int
    bytes: int


def _crc32c(path: Path) -> str:
    import google_crc32c

    checksum = google_crc32c.Checksum()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            checksum.update(chunk)
    return base64.b64encode(checksum.digest()).decode()


def _unchanged(blob: Any, target: Path) -> bool:
    if not target.is_file() or target.stat().st_size != blob.size:
        return False
    return blob.crc32c is None or _crc32c(target) == blob.crc32c


def _safe_target(destination: Path, relative: str) -> Path | None:
    """The local path of an object, or None for names that would escape the folder (``..``) or are folders."""
    parts = PurePosixPath(relative).parts
    if not parts or relative.endswith("/") or any(part in ("..", "") for part in parts):
        return None
    return destination.joinpath(*parts)


def download_prefix(client: Any, bucket: str, prefix: str, destination: Path) -> DownloadReport:
    """Copy every object under ``gs://bucket/prefix`` into ``destination`` (keeping the folder structure)."""
    from google.api_core import exceptions

    prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
    downloaded = unchanged = total = 0
    try:
        blobs = list(client.list_blobs(bucket, prefix=prefix))
    except exceptions.NotFound:
        raise TfcliError(f"bucket gs://{bucket} does not exist", hint="was the experiment's stack destroyed?") from None
    except exceptions.Forbidden as error:
        raise TfcliError(
            f"no permission to read gs://{bucket}: {error.message}",
            hint="check `gcloud auth application-default login` and your IAM roles on the project",
        ) from None
    for blob in blobs:
        target = _safe_target(destination, blob.name[len(prefix) :])
        if target is None:
            continue
        if _unchanged(blob, target):
            unchanged += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.part")
        try:
            blob.download_to_filename(str(partial))
            os.replace(partial, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
        downloaded += 1
        total += target.stat().st_size
    return DownloadReport(downloaded, unchanged, total)
