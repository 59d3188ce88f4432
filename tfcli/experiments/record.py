"""``run.json``: what the last ``start`` of a run (an experiment, a trial, a sweep) recorded, typed.

Every later command reads it to find the run's backend and, locally, its process; nothing else decides where a run
lives. Files written by earlier versions of tfcli load as they are: unknown keys are ignored and a field of the wrong
type reads as unset, so an old or hand-edited file never stops ``status`` or ``stop``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

BackendName = Literal["local", "gke"]
BACKENDS: tuple[BackendName, ...] = ("local", "gke")
MAX_RECORD_BYTES = 64 * 1024  # tfcli writes a few hundred bytes; anything larger is not a run record


@dataclass(frozen=True)
class RunRecord:
    """The fields of ``run.json`` (docs/design.md §3)."""

    backend: BackendName | None = None  # where the run was last started
    started_at: str | None = None  # ISO time of that start (UTC)
    pid: int | None = None  # local: the supervisor's (experiment) or the queue's (sweep) process
    pause_requested: bool = False  # local: a pause was asked for (SIGTERM sent)
    stopped: bool = False  # stopped for good (GKE: its stack destroyed after its results were downloaded)
    stopped_at: str | None = None
    stack: str | None = None  # GKE: the Pulumi stack that runs it (a trial's is its sweep's)
    shared_cluster: str | None = None  # GKE: the shared cluster's stack, None on a cluster of its own
    sweep: str | None = None  # a trial: the sweep it belongs to (while that sweep's GKE stack runs it)
    parallel: int | None = None  # a sweep: trials at a time
    # GKE: how the cluster ended the run (failed, stopped), kept when its stack is torn down: a trial that failed
    # before it wrote a result.json, or a sweep whose Job failed, says so after `stop` too.
    ended_as: str | None = None
    ended_reason: str | None = None

    @property
    def started(self) -> bool:
        """Whether anything was recorded (a run that never started has no ``run.json``)."""
        return self != RunRecord()

    @property
    def deployed_on_gke(self) -> bool:
        """Started on GKE and not stopped since: its stack may be running it."""
        return self.backend == "gke" and not self.stopped

    @property
    def gke_trial_of(self) -> str | None:
        """The GKE sweep whose stack runs this trial, while it is deployed."""
        return self.sweep if self.deployed_on_gke else None

    def but(self, **changes: Any) -> RunRecord:
        """A copy with ``changes`` (the record is immutable: each write is a whole new file)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_json(cls, data: object) -> RunRecord:
        if not isinstance(data, dict):
            return cls()
        values: dict[str, Any] = {}
        for item in dataclasses.fields(cls):
            value = data.get(item.name)
            if item.name == "backend":
                values["backend"] = cast(BackendName, value) if value in BACKENDS else None
            elif item.name in ("pause_requested", "stopped"):
                values[item.name] = value is True
            elif item.name in ("pid", "parallel"):
                ok = isinstance(value, int) and not isinstance(value, bool)
                values[item.name] = value if ok else None
            else:
                values[item.name] = value if isinstance(value, str) else None
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """Every field (``null`` where unset, so scripts read one shape), flags only when raised."""
        return {
            item.name: getattr(self, item.name)
            for item in dataclasses.fields(self)
            if getattr(self, item.name) is not False
        }

    @classmethod
    def read(cls, path: Path) -> RunRecord:
        """The record in ``path``; an empty one when there is none or it cannot be read."""
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_RECORD_BYTES + 1)
        except OSError:
            return cls()
        if len(raw) > MAX_RECORD_BYTES:
            return cls()
        try:
            return cls.from_json(json.loads(raw))
        except (ValueError, UnicodeDecodeError):
            return cls()

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"
