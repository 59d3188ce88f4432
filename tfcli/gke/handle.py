"""The GKE backend's own state in ``run.json`` (under ``"gke"``): the stack that runs the run, and how the cluster
ended it when its stack is gone. Imports nothing of the GKE backend, so shared rules may read it cheaply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tfcli.experiments.record import Handle, RunRecord


@dataclass(frozen=True)
class GkeHandle(Handle):
    """A run's stack on GKE (a trial's is its sweep's)."""

    KEY: ClassVar[str] = "gke"

    stack: str | None = None  # the Pulumi stack that runs it
    shared_cluster: str | None = None  # the shared cluster's stack, None on a cluster of its own
    sweep: str | None = None  # a trial: the sweep whose stack runs it
    # How the cluster ended the run (failed, stopped), kept when its stack is torn down: a trial that failed before
    # it wrote a result.json, or a sweep whose Job failed, says so after `stop` too.
    ended_as: str | None = None
    ended_reason: str | None = None


def gke_of(record: RunRecord) -> GkeHandle:
    """The record's GKE state (all unset for a run that never started on GKE)."""
    return record.handle(GkeHandle)


def deployed_on_gke(record: RunRecord) -> bool:
    """Started on GKE and not stopped since: its stack may be running it."""
    return record.backend == GkeHandle.KEY and not record.stopped


def gke_trial_of(record: RunRecord) -> str | None:
    """The GKE sweep whose stack runs this trial, while it is deployed."""
    return gke_of(record).sweep if deployed_on_gke(record) else None
