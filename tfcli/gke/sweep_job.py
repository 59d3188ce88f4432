"""A GKE sweep's Indexed Job as the cluster reports it, and what it adds to the bucket's view of the trials.

The bucket says what a trial wrote (``result.json``, ``progress.jsonl``); only the Job says what the controller did
with it (infra/sweep_manifests.py): a trial whose slot failed (exit 2 before it wrote anything, a crash past its
retries) is in ``status.failedIndexes`` (one paused at ``max_cost`` exits 0: its index completes), and a Job that
ended (``Failed``, ``Complete``) starts no more pods, so a trial that never started never will. Without the Job, a
sweep with a failed trial would look "running" for ever and ``start -s --wait`` would never return.

With early stopping the Job's pods are *workers* (the stack output ``workers``): each trains whichever trial it
claims in the bucket (trainer/sweep_worker.py), so no index, pod or failed index is one trial's; the bucket alone
says each trial's state (a trial a worker gave up on has a ``result.json`` saying ``failed``).

The Job's completion indexes are *slots*, not trials: a re-run Job (``resume -s``) has a slot only for each trial
that still trains. :class:`SlotTable` (the stack's ``slots`` output) is the one place a slot becomes its trial —
for the Job's failed and completed indexes, the pods (``status -s``) and a trial's log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from tfcli.gke.pod_states import PodState

TRIALS_ROLE = "trials"  # the Job's tfcli/job annotation (infra/sweep_manifests.py TRIALS_JOB)
ENDED = ("completed", "pruned", "failed")  # a trial's states the Job cannot change any more (and "paused" at max_cost)


@dataclass(frozen=True)
class SlotTable:
    """The trial each slot (completion index) of the deployed Job runs (infra/sweep_manifests.py ``slot_trials``)."""

    trials: tuple[int, ...]
    workers: bool = False  # the pods are workers that take any trial (early stopping): no index is a trial

    @classmethod
    def of(cls, outputs: Mapping[str, Any], trials: int) -> SlotTable:
        """From the stack's ``slots`` and ``workers`` outputs; a stack deployed before they existed ran slot ``k``
        as trial ``k``."""
        workers = outputs.get("workers") in (True, "true", "True")
        slots = outputs.get("slots")
        if isinstance(slots, list) and all(str(slot).isdigit() for slot in slots):
            return cls(tuple(int(slot) for slot in slots), workers)
        return cls(tuple(range(trials)), workers)

    def trial(self, slot: int) -> int | None:
        """The trial slot ``slot`` runs (None: no such slot, or the pods are workers)."""
        return self.trials[slot] if 0 <= slot < len(self.trials) and not self.workers else None

    def slot(self, trial: int) -> int | None:
        """The slot that runs ``trial`` (None: this Job leaves it as it ended)."""
        return self.trials.index(trial) if trial in self.trials else None

    def by_trial(self, slots: Mapping[int, Any]) -> dict[int, Any]:
        """``slots`` (slot -> anything) keyed by trial instead."""
        return {trial: value for slot, value in slots.items() if (trial := self.trial(slot)) is not None}

    def reading(self, job: JobReading) -> JobReading:
        """``job`` with its failed and completed indexes as the trials they ran."""
        return dataclasses.replace(
            job,
            failed_indexes=frozenset(self.by_trial(dict.fromkeys(job.failed_indexes))),
            completed_indexes=frozenset(self.by_trial(dict.fromkeys(job.completed_indexes))),
        )


def parse_indexes(text: str | None) -> frozenset[int]:
    """``completedIndexes``/``failedIndexes`` (``"0,2-4,7"``) as a set; what is not such a list reads as empty."""
    found: set[int] = set()
    for part in filter(None, (text or "").split(",")):
        first, _, last = part.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            return frozenset()
        found.update(range(int(first), int(last or first) + 1))
    return frozenset(found)


@dataclass(frozen=True)
class JobReading:
    """The trials Job: whether (and why) it failed or completed, and its failed and completed indexes."""

    failed: str | None  # "reason: message" of its Failed (or FailureTarget) condition; None if it has not failed
    complete: bool
    failed_indexes: frozenset[int]
    completed_indexes: frozenset[int]

    @classmethod
    def of(cls, job: Mapping[str, Any]) -> JobReading:
        status = job.get("status") or {}
        conditions = {
            str(c.get("type")): c
            for c in status.get("conditions") or []
            if isinstance(c, dict) and c.get("status") == "True"
        }
        failure = conditions.get("Failed") or conditions.get("FailureTarget")
        failed = None
        if failure is not None:
            failed = ": ".join(str(part) for part in (failure.get("reason"), failure.get("message")) if part)
        return cls(
            failed=failed if failure is not None else None,
            complete="Complete" in conditions,
            failed_indexes=parse_indexes(status.get("failedIndexes")),
            completed_indexes=parse_indexes(status.get("completedIndexes")),
        )


def trials_job(jobs: list[dict[str, Any]]) -> JobReading | None:
    """The sweep's trials Job among its namespace's Jobs (the newest, should a replaced one still linger)."""
    mine = [
        job for job in jobs if ((job.get("metadata") or {}).get("annotations") or {}).get("tfcli/job") == TRIALS_ROLE
    ]
    if not mine:
        return None
    newest = max(mine, key=lambda job: str((job.get("metadata") or {}).get("creationTimestamp") or ""))
    return JobReading.of(newest)


class TrialVerdict(NamedTuple):
    """What the Job says of one trial: its state and why, when that overrides what the bucket says."""

    state: str
    detail: str


def trial_verdict(
    index: int, state: str, job: JobReading, pod: PodState | None, *, paused_for: str = "", held: bool = False
) -> TrialVerdict | None:
    """A trial's true state when the Job knows better than the bucket (None: the bucket's ``state`` stands).

    - the trainer paused it at ``max_cost`` (its ``result.json`` says so, ``paused_for``): paused, with that reason,
      whether its index completed (the trial exits 0) or failed (an older trainer's exit 3);
    - ``held`` (the Job has no slot for it: a resume left it as it ended) and not ended in the bucket: failed — it
      failed in an earlier Job before writing a result (its spec refused, a crash past its retries);
    - its index failed: failed, with its last pod's reason (the trainer's error line, OOMKilled, ...) — unless its
      last pod's exit code says it paused at ``max_cost`` (3, before it wrote ``result.json``): paused;
    - the Job failed and the trial had not ended: stopped — it never started, or was terminated with the Job.
    """
    reason = pod.reason if pod is not None else ""
    if paused_for:  # its index completed (exit 0) or, with an older trainer, failed (exit 3)
        return TrialVerdict("paused", paused_for)
    if held:
        if state in ENDED or state == "paused":
            return None
        return TrialVerdict("failed", "it failed in an earlier Job (resume -s --retry-failed runs it again)")
    if index in job.failed_indexes:
        if pod is not None and pod.state == "paused":
            return TrialVerdict("paused", reason or "max_cost reached")
        return TrialVerdict("failed", reason or "its index failed (the Job's failedIndexes)")
    if job.failed is not None and state not in ENDED and state != "paused":
        started = "was stopped with it" if pod is not None else "never started"
        return TrialVerdict("stopped", f"the sweep's Job failed ({job.failed}); this trial {started}")
    return None


def sweep_state(job: JobReading) -> str | None:
    """``failed`` when the sweep's Job failed; None otherwise, when the trials' own reading decides: a Job that
    completed ran every index to its end, but a trial paused at ``max_cost`` ends its index with exit 0 too, so a
    complete Job is a completed sweep only when every trial completed (or was pruned)."""
    return "failed" if job.failed is not None else None
