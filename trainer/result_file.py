"""``result.json`` as every reader reads it: the one place its name is spelled and its content parsed.

The trainer writes it (:mod:`trainer.results`, atomically); the trainer reads its previous one on a resume
(:mod:`trainer.ended`, :mod:`trainer.hooks.early_stop`), the sweep workers and the rung judgement read other
trials' through a bucket or a mount (:mod:`trainer.sweep_worker`, :mod:`trainer.rung_scores`), and tfcli reads it
from an experiment's folder (:mod:`tfcli.experiments.store`) or from its bucket (:mod:`tfcli.gke.results`). They all
agree on one rule: what is not a readable JSON object — none yet, a file being replaced on a mount (``ESTALE``), a
generation fetched while a writer rewrote it, a hand-made list — reads as ``{}``, "no result yet", and the next read
gets it whole. No reader raises on it, so a listing or a worker's poll never fails on one trial's file.

Pure (no TensorFlow, no numpy), so tfcli's listing and the sweep workers load it cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

FILENAME = "result.json"

# How a reader gets a file's content: a plain read here, a bucket read or a mount's on a GKE sweep worker.
Reader = Callable[[Path], str | bytes]


def _read_bytes(path: Path) -> bytes:
    return path.read_bytes()


def parse_result(data: str | bytes | None) -> dict[str, Any]:
    """``result.json``'s object from its content ({} for what is not a JSON object)."""
    if data is None:
        return {}
    try:
        value = json.loads(data)
    except ValueError:  # not JSON, half a file, or bytes that are not text (UnicodeDecodeError is a ValueError)
        return {}
    return value if isinstance(value, dict) else {}


def read_result(folder: Path, read: Reader = _read_bytes) -> dict[str, Any]:
    """The ``result.json`` in ``folder`` ({} when there is none or it cannot be read right now)."""
    try:
        data = read(folder / FILENAME)
    except OSError:
        return {}
    return parse_result(data)


def result_status(result: dict[str, Any]) -> str | None:
    """A result's ``status`` (None: no result, or no status that is a string)."""
    status = result.get("status")
    return status if isinstance(status, str) else None
