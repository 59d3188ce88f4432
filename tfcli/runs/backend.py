"""The interface every backend implements: one method per lifecycle action on a :class:`~tfcli.runs.run.Run`
(an experiment or a sweep), returning the typed results of :mod:`tfcli.runs.results`.

Modelled on SkyPilot's ``sky/backends/backend.py``: the CLI never asks where a run lives or what kind it is; it asks
``tfcli.backends`` for the run's backend and calls one method. Differences between experiments and sweeps, or
between this machine and GKE, live inside the implementations (``tfcli.local.backend``, ``tfcli.gke.backend``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tfcli.experiments.store import ExperimentStore
from tfcli.runs.reaping import Reaped
from tfcli.runs.results import Ended, LogRequest, Paused, RunStatus, Started, StartOptions, Stopped
from tfcli.runs.resuming import ResumePlan
from tfcli.runs.run import Run
from tfcli.sweeps.status import SweepStatus

if TYPE_CHECKING:
    from tfcli.sweeps.aggregate import Run as TrialNumbers


class Watcher(Protocol):
    """What a followed run reports to whoever shows it (the CLI's progress bar and trial lines)."""

    def progress(self, timesteps: int, episodes: int, mean_return: float | None) -> None:
        """An experiment's numbers so far (finished episodes)."""
        ...

    def progress_detail(self, text: str) -> None:
        """What the experiment is doing beside training (``pausing: writing a checkpoint…``)."""
        ...

    def trials(self, status: SweepStatus) -> None:
        """A sweep's trials now (each one that started or ended is shown once)."""
        ...

    def say(self, text: str) -> None:
        """A line to show as it happens."""
        ...


class Backend(Protocol):
    """Where runs train: this machine (``local``), GKE (``gke``) or any backend registered by name
    (:mod:`tfcli.runs.registry`)."""

    name: str  # its name in the registry (tfcli/runs/registry.py), run.json and --backend
    waits_by_default: bool  # whether ``start`` follows the run unless told ``--detach``

    def start(self, run: Run, options: StartOptions) -> Started:
        """Start (or continue from its newest checkpoint) a run; returns once it is launched."""
        ...

    def check_resumable(self, run: Run, plan: ResumePlan | None = None) -> None:
        """Refuse a run that is not paused (or, where the backend can continue it, stopped, interrupted or failed,
        or finished with ``plan`` raising its budget)."""
        ...

    def resume(self, run: Run, plan: ResumePlan | None = None) -> Started:
        """Continue a paused run where it last ran, as ``plan`` says (members held, budgets raised). The caller has
        checked it (:meth:`check_resumable`) and written its budget, before anything runs: ``Backends.resume`` does
        check, write, launch in one pass, so a refused resume has changed nothing."""
        ...

    def pause(self, run: Run) -> Paused:
        """Checkpoint and stop training; ``resume`` continues it."""
        ...

    def stop(self, run: Run, *, download: bool = True) -> Stopped:
        """End the run for good, its results kept here."""
        ...

    def status(self, run: Run) -> RunStatus:
        """What it is doing now, read from its processes or its stack and bucket, never from a stale copy."""
        ...

    def download(self, run: Run) -> list[Path]:
        """Its results here (``experiments/NAME/results/`` of each member)."""
        ...

    def logs(self, run: Run, request: LogRequest, write: Callable[[str], None]) -> None:
        """Write its log (with ``follow``, until it ends)."""
        ...

    def follow(self, started: Started, watcher: Watcher) -> Ended:
        """Report progress until the started run ends (``start --wait``)."""
        ...

    def plan(self, run: Run, shared_cluster: str | None = None) -> object:
        """Offline: what starting it here would make (processes, or the stack's resources and cost)."""
        ...

    def trial_numbers(self, run: Run, *, downloaded: bool = False) -> list[TrialNumbers]:
        """A sweep's trials' numbers for the comparison table (``downloaded``: from the copies here)."""
        ...


class ClusterBackend(Backend, Protocol):
    """A backend whose runs may go on a project's shared clusters (registered with ``shared_clusters``)."""

    def reap_clusters(self, store: ExperimentStore, *, now: datetime) -> list[Reaped]:
        """Destroy the project's idle shared clusters past their ``ttl`` (``experiment reap``); one that cannot be
        read or destroyed is reported and the others still reaped."""
        ...
