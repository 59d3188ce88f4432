"""Which deployed experiments ``tfcli experiment reap`` stops, and which idle shared clusters it destroys: nothing
should bill after the work is done.

A rule of the run's state, its start time and its spec's ``ttl`` (trainer/kernel/spec/ttl.py), so the scheduled CI job
and a user at the terminal stop the same runs. Stopping is the ordinary ``stop``: results downloaded, then the stack
destroyed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from trainer.kernel.spec.outcomes import paused_at_cost_limit


def reap_reason(
    state: str, detail: str, *, started_at: str | None, ttl_seconds: int | None, now: datetime
) -> str | None:
    """Why a deployed experiment in ``state`` should be stopped now, or None to leave it.

    A run that ended for good — completed, or paused by its own ``max_cost`` (its Job has ended; only a raised
    ``max_cost`` and a ``resume`` would continue it) — is stopped at once. Any other is stopped once its stack has
    been up longer than its ``ttl`` since ``started_at`` (an ISO time, UTC). A run paused by hand is left alone
    until its ttl: the user paused it to resume it.
    """
    if state == "completed":
        return "completed"
    if paused_at_cost_limit(state, detail):
        return f"paused at max_cost ({detail})"
    if ttl_seconds is not None and started_at:
        up = (now - datetime.fromisoformat(started_at)).total_seconds()
        if up > ttl_seconds:
            return f"up {up / 3600:,.1f} h, past its ttl"
    return None


def cluster_reap_reason(
    users: list[str], *, last_update_ended: str | None, ttl_seconds: int | None, now: datetime
) -> str | None:
    """Why a deployed shared cluster should be destroyed now, or None to leave it.

    Only a cluster with a ``ttl``, only when idle — ``users``, the experiments and sweeps deployed on it, is empty
    (a cluster in use is never destroyed) — and once its stack has been up longer than its ttl since its last update
    ended (``last_update_ended``, an ISO time; None: unknown, or an update under way, left alone).
    """
    if ttl_seconds is None or users or not last_update_ended:
        return None
    up = (now - datetime.fromisoformat(last_update_ended)).total_seconds()
    if up > ttl_seconds:
        return f"idle shared cluster, up {up / 3600:,.1f} h since its last update, past its ttl"
    return None


@dataclass(frozen=True)
class Reaped:
    """One experiment ``reap`` acted on: why, and what ``stop`` said it left (or the error that kept it up)."""

    name: str
    reason: str
    stopped: str = ""  # Stopped.summary()
    error: str = ""

    def summary(self) -> str:
        if self.error:
            return f"{self.name}: {self.reason}; NOT stopped: {self.error}"
        return f"{self.name}: {self.reason}; {self.stopped}"
