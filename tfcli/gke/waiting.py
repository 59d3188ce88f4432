"""Waiting for a run on GKE: its ``result.json`` in the bucket is what says a checkpoint or an end was written.

Every wait compares generations: a run that paused before has an old ``result.json``; only one written after the
update that changed the run (another generation) answers the wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tfcli.gke.results import RemoteResults

POLL_SECONDS = 15.0  # how often --wait and pause read the bucket
PAUSE_TIMEOUT = 180.0  # the Jobs give the trainer 120 s to checkpoint after SIGTERM
FINAL = ("completed", "pruned", "failed")  # a pruned trial ended itself at a rung (early stopping)
_UNREAD = object()


def result_generation(remote: RemoteResults) -> int | None:
    """The generation of ``result.json`` now (None when there is none): a later result has another one."""
    blob = remote.result_blob()
    return None if blob is None else blob.generation


def wait_for_result(
    remote: RemoteResults,
    done: Callable[[dict[str, Any]], bool],
    *,
    initial: Any = _UNREAD,
    timeout: float | None,
    on_poll: Callable[[RemoteResults], None] | None = None,
) -> dict[str, Any]:
    """Poll the bucket until a *new* ``result.json`` (another generation than ``initial``, read before the update
    that changed the run) satisfies ``done``. Returns the last result read ({} on timeout)."""
    if initial is _UNREAD:
        initial = result_generation(remote)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        remote.poll()
        if on_poll is not None:
            on_poll(remote)
        blob = remote.result_blob()
        if blob is not None and blob.generation != initial:
            result = remote.result(blob)
            if done(result):
                return result
        if deadline is not None and time.monotonic() >= deadline:
            return {}
        time.sleep(POLL_SECONDS)


def checkpointed(result: dict[str, Any]) -> bool:
    """A result that answers a pause: paused, or ended meanwhile."""
    return result.get("status") in ("paused", *FINAL)
