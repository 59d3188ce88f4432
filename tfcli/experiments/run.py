"""Running experiments: the operations behind ``tfcli experiment start/pause/resume/stop/...``.

Each operation picks the backend: the local one (processes on this machine) with ``--local`` or when the
project names no GCP project; otherwise GKE (the experiment's Pulumi stack).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcli.errors import TfcliError
from tfcli.experiments.status import Status, local_status
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.local import backend as local


@dataclass(frozen=True)
class Launched:
    """A started run: the supervising process (None when there was nothing left to run)."""

    experiment: ExperimentDir
    process: subprocess.Popen[bytes] | None


def _backend(store: ExperimentStore, local_flag: bool) -> str:
    if local_flag or store.project.settings.default_backend == "local":
        return "local"
    raise TfcliError(
        "the GKE backend is not available in this version yet",
        hint="run on this machine with --local (or remove gcp_project from tfcli.yaml)",
    )


def start_experiment(store: ExperimentStore, name: str, *, local: bool, restart: bool = False) -> Launched:
    """Start (or continue) an experiment; the trainer resumes from its newest checkpoint."""
    experiment = store.get(name)
    _backend(store, local)
    with experiment.locked():
        if not restart and local_status(experiment).state == "completed":
            return Launched(experiment, None)
        process = _launch(experiment, restart)
    return Launched(experiment, process)


def _launch(experiment: ExperimentDir, restart: bool) -> subprocess.Popen[bytes]:
    return local.launch(experiment, restart=restart)


def require_resumable(experiment: ExperimentDir) -> None:
    """Resuming makes sense for a paused, stopped or interrupted run."""
    state = local_status(experiment).state
    if state not in ("paused", "stopped", "interrupted", "failed"):
        raise TfcliError(f"experiment '{experiment.name}' is {state}; only a paused or interrupted run can resume")


def status_of(experiment: ExperimentDir) -> Status:
    return local_status(experiment)


def pause_experiment(experiment: ExperimentDir) -> dict[str, Any]:
    """Checkpoint and stop the run (SIGTERM to the trainer); wait until it has written its result."""
    with experiment.locked():
        pid = local.signal_pause(experiment)
        if not local.wait_exit(experiment, pid):
            raise TfcliError(
                f"experiment '{experiment.name}' did not pause within {local.PAUSE_TIMEOUT:.0f} s",
                hint="`tfcli experiment stop` ends it for good",
            )
    return experiment.result()


def stop_experiment(experiment: ExperimentDir, *, download: bool) -> None:
    """End the run for good: checkpoint and end its processes (they are killed if they do not stop in time)."""
    with experiment.locked():
        if local.is_running(experiment):
            pid = local.signal_pause(experiment)
            if not local.wait_exit(experiment, pid):
                local.kill(experiment, pid)
        local.mark_stopped(experiment)


def download_results(experiment: ExperimentDir) -> Path:
    """Local runs write their results in place; nothing to copy."""
    if not experiment.results.is_dir():
        raise TfcliError(f"experiment '{experiment.name}' has no results yet", hint="start it first")
    return experiment.results


def follow_log(experiment: ExperimentDir, *, follow: bool, worker: int | None, write: Callable[[str], None]) -> None:
    """Print a log file; with ``follow``, keep printing what is appended until the run ends."""
    name = "trainer.log" if worker is None else f"env-worker-{worker}.log"
    path = experiment.logs / name
    if not path.exists():
        raise TfcliError(f"experiment '{experiment.name}' has no {name} yet", hint="start it first")
    with open(path, errors="replace") as handle:
        while True:
            chunk = handle.read()
            if chunk:
                write(chunk)
            elif not follow or not local.is_running(experiment):
                break
            else:
                time.sleep(0.3)
