"""Who trains which trial of a GKE sweep, decided in the results bucket (docs/design.md §6.6, "the GKE sweep's
workers").

A sweep with early stopping runs on GKE as ``parallel`` worker pods that take their work from the bucket
(:mod:`trainer.sweep_worker`). Two workers must never train the same trial, and a trial whose worker died
(preempted node, OOM kill) must not stay taken. So each trial has one *claim* object per run of the sweep's Job,
``<sweep>/claims/<run>/<trial>.json`` (``run``: the ``resume -s`` re-run number, so that a new Job trains again the
trials an earlier one ended, as its ConfigMap says): ``{"worker": W, "expires": T, "attempts": N, "ended": E}``,
changed only through the GCS JSON API with a generation precondition (``ifGenerationMatch``; Cloud Storage "Request
preconditions"), which GCS checks and applies atomically:

- **take**: create it only if absent (``ifGenerationMatch=0``), or, when it is free (no worker, or a lease that
  expired: its worker stopped renewing it) and not ended, rewrite it at the generation just read. Of two workers
  racing, exactly one write succeeds; the other gets ``412 Precondition Failed`` and looks for other work.
- **renew**: while its trial trains, the worker rewrites its claim at its own generation every third of the lease;
  a failed renewal means another worker took the trial over (this one was thought dead), and it stops its trial.
- **release** (the trial waits at a rung, was paused, or crashed: ``attempts`` counts crashes) and **end** (it ended
  for good) are conditional rewrites too.

The FUSE mount cannot be the lock: it caches stats for a minute and publishes a file only when it is closed, so
two pods would both see "absent" and both write. Claims therefore go through the storage API; the trial's own files
stay on the mount.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FOLDER = "claims"
LEASE_SECONDS = 90.0  # a worker renews every third of it: two missed renewals are tolerated


@dataclass(frozen=True)
class ClaimState:
    """A trial's claim as read: its fields and the generation they were read at (0: there is no claim)."""

    worker: str | None = None
    expires: float = 0.0
    attempts: int = 0
    ended: str | None = None
    generation: int = 0

    def free(self, now: float) -> bool:
        """Whether a worker may take the trial: not ended, and nobody holds a live lease on it."""
        return self.ended is None and (self.worker is None or self.expires <= now)

    def body(self) -> dict[str, Any]:
        return {"worker": self.worker, "expires": self.expires, "attempts": self.attempts, "ended": self.ended}

    @classmethod
    def parse(cls, text: str, generation: int) -> ClaimState:
        """A claim's object; one that does not parse is free (it can only be a write cut short)."""
        try:
            data = json.loads(text)
        except ValueError:
            return cls(generation=generation)
        if not isinstance(data, dict):
            return cls(generation=generation)
        worker, ended = data.get("worker"), data.get("ended")
        return cls(
            worker=str(worker) if worker is not None else None,
            expires=float(data.get("expires") or 0.0),
            attempts=int(data.get("attempts") or 0),
            ended=str(ended) if ended is not None else None,
            generation=generation,
        )


def claims_folder(sweep: str, run: int) -> str:
    """Where run ``run`` of ``sweep``'s Job keeps its claims in the bucket."""
    return f"{sweep}/{FOLDER}/{run}"


class Claims:
    """The claims of one sweep's trials in its bucket (``bucket``: a google-cloud-storage Bucket), under ``folder``
    (:func:`claims_folder`), as worker ``worker``."""

    def __init__(
        self,
        bucket: Any,
        folder: str,
        worker: str,
        *,
        lease: float = LEASE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.bucket = bucket
        self.folder = folder
        self.worker = worker
        self.lease = lease
        self.clock = clock

    def _blob(self, trial: str) -> Any:
        return self.bucket.blob(f"{self.folder}/{trial}.json")

    def read(self, trial: str) -> ClaimState:
        """The trial's claim now (generation 0: none). Its metadata first, then its content at that generation: a
        claim rewritten in between reads as held, and the worker looks elsewhere this round."""
        from google.api_core.exceptions import NotFound, PreconditionFailed

        blob = self.bucket.get_blob(self._blob(trial).name)
        if blob is None:
            return ClaimState()
        generation = int(blob.generation or 0)
        try:
            text = blob.download_as_text(if_generation_match=generation)
        except (NotFound, PreconditionFailed):
            return ClaimState(worker="?", expires=float("inf"), generation=generation)
        return ClaimState.parse(text, generation)

    def _write(self, trial: str, state: ClaimState, at: int) -> ClaimState | None:
        """Write ``state`` only if the claim is still at generation ``at``; None when another write came first."""
        from google.api_core.exceptions import NotFound, PreconditionFailed

        blob = self._blob(trial)
        try:
            blob.upload_from_string(json.dumps(state.body()), content_type="application/json", if_generation_match=at)
        except (PreconditionFailed, NotFound):
            return None
        return ClaimState(state.worker, state.expires, state.attempts, state.ended, int(blob.generation or 0))

    def take(self, trial: str) -> ClaimState | None:
        """Claim ``trial`` for this worker; None when it is ended, held by a live lease, or another worker won."""
        now = self.clock()
        current = self.read(trial)
        if not current.free(now):
            return None
        mine = ClaimState(self.worker, now + self.lease, current.attempts)
        return self._write(trial, mine, current.generation)

    def renew(self, trial: str, held: ClaimState) -> ClaimState | None:
        """Extend this worker's lease; None when the claim is no longer this worker's."""
        return self._write(trial, ClaimState(self.worker, self.clock() + self.lease, held.attempts), held.generation)

    def release(self, trial: str, held: ClaimState, *, crashed: bool = False) -> ClaimState | None:
        """Give the trial back to the queue (``crashed``: one more attempt counted)."""
        attempts = held.attempts + (1 if crashed else 0)
        return self._write(trial, ClaimState(None, 0.0, attempts), held.generation)

    def end(self, trial: str, held: ClaimState, how: str) -> ClaimState | None:
        """Mark the trial ended for good (``how`` in words): no worker takes it again."""
        return self._write(trial, ClaimState(None, 0.0, held.attempts, how), held.generation)
