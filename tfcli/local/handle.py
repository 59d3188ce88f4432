"""The local backend's own state in ``run.json`` (under ``"local"``): the process that runs the run here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tfcli.experiments.record import Handle, RunRecord


@dataclass(frozen=True)
class LocalHandle(Handle):
    """The supervisor's pid (an experiment) or the queue's (a sweep), and whether a pause was asked of it."""

    KEY: ClassVar[str] = "local"

    pid: int | None = None
    pause_requested: bool = False  # SIGTERM sent: true while pausing and once paused; cleared by stop


def local_of(record: RunRecord) -> LocalHandle:
    """The record's local state (all unset for a run that never started here)."""
    return record.handle(LocalHandle)
