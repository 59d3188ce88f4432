"""Running a sweep on this machine: the queue process (:mod:`tfcli.sweeps.queue`), its state, pause and stop.

``start`` launches the queue in a session of its own and records its pid in ``experiments/<sweep>/run.json``, as a
local experiment's supervisor is recorded; every trial stays an ordinary experiment that ``status``, ``logs``,
``pause``, ``resume`` and ``stop`` reach on its own too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tfcli.errors import InvalidInput, TfcliError
from tfcli.experiments.status import Status, local_status, process_alive
from tfcli.experiments.store import ExperimentStore
from tfcli.local import backend as local_backend
from tfcli.sweeps.model import SweepFile, Trial
from tfcli.sweeps.store import SweepDir, trial_dirs

QUEUE_MODULE = "tfcli.sweeps.queue"
STOP_TIMEOUT = 180.0


def cores_per_trial(spec: dict[str, Any]) -> int:
    """Cores one local trial keeps busy: its process (environments of a multi-threaded run step inside it), plus one
    per environment worker process in distributed mode."""
    if spec.get("run_mode") == "distributed":
        return 1 + int(spec.get("num_workers", 3))
    return 1


def default_parallel(sweep: SweepFile, cores: int | None = None) -> int:
    """Trials at a time when not told: what this machine's cores fit for the trials' run mode (at least one)."""
    cores = cores or os.cpu_count() or 1
    assert isinstance(sweep.base, dict)
    per_trial = cores_per_trial({**sweep.base, **_top_level(sweep)})
    return max(1, cores // per_trial)


def _top_level(sweep: SweepFile) -> dict[str, Any]:
    """Swept run modes and worker counts count at their largest."""
    widest: dict[str, Any] = {}
    if "run_mode" in sweep.axes and "distributed" in sweep.axes["run_mode"]:
        widest["run_mode"] = "distributed"
    if "num_workers" in sweep.axes:
        widest["num_workers"] = max(int(v) for v in sweep.axes["num_workers"])
    return widest


def queue_alive(sweep: SweepDir) -> bool:
    """Whether the recorded queue process still runs (and is ours: pids get reused)."""
    return process_alive(sweep.run_record(), QUEUE_MODULE, sweep.root)


@dataclass(frozen=True)
class SweepStatus:
    """A sweep's state and its trials' statuses, for ``status -s`` and ``list -s``."""

    name: str
    state: str  # new | running | pausing | paused | completed | failed | stopped | interrupted
    parallel: int | None
    counts: dict[str, int]
    trials: list[tuple[Trial, Status]]
    pid: int | None
    backend: str = "local"  # or gke: the sweep's stack (tfcli/gke/sweeps.py)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "backend": self.backend,
            "state": self.state,
            "parallel": self.parallel,
            "counts": self.counts,
            "pid": self.pid,
            "trials": [
                {"trial": trial.name, "combination": trial.combination, "seed": trial.seed, **status.as_json()}
                for trial, status in self.trials
            ],
        }


def sweep_status(store: ExperimentStore, sweep: SweepDir) -> SweepStatus:
    record = sweep.run_record()
    trials = [(trial, local_status(experiment)) for trial, experiment in trial_dirs(store, sweep)]
    counts = dict(Counter(status.state for _, status in trials))
    alive = queue_alive(sweep)
    if alive:
        state = "pausing" if record.get("pause_requested") else "running"
    elif counts.get("completed", 0) == len(trials):
        state = "completed"
    elif record.get("stopped"):
        state = "stopped"
    elif record.get("pause_requested"):
        state = "paused"
    elif any(status.state in ("running", "pausing") for _, status in trials):
        state = "interrupted"  # the queue died; its trials go on, and `start -s` adopts them
    elif counts.get("failed"):
        state = "failed"
    elif record:
        state = "interrupted"
    else:
        state = "new"
    return SweepStatus(sweep.name, state, record.get("parallel"), counts, trials, record.get("pid") if alive else None)


def start_sweep(
    store: ExperimentStore, sweep: SweepDir, *, parallel: int | None, restart: bool = False
) -> subprocess.Popen[bytes] | None:
    """Launch the queue (None when every trial has already completed and not ``restart``)."""
    definition = sweep.definition()
    if parallel is not None and parallel < 1:
        raise InvalidInput(f"--parallel: at least 1, got {parallel}")
    chosen = parallel or definition.parallel or default_parallel(definition)
    with sweep.locked():
        if queue_alive(sweep):
            raise TfcliError(
                f"sweep '{sweep.name}' is already running (pid {sweep.run_record().get('pid')})",
                hint=f"`tfcli experiment status -s {sweep.name}` shows its trials",
            )
        trials = trial_dirs(store, sweep)
        for trial, experiment in trials:
            if experiment.run_record().get("backend") == "gke" and not experiment.run_record().get("stopped"):
                raise TfcliError(f"trial '{trial.name}' is deployed on GKE; it cannot run here at the same time")
        if restart:
            for _, experiment in trials:
                if local_backend.is_running(experiment):
                    raise TfcliError(f"trial '{experiment.name}' is running; pause or stop the sweep first")
            import shutil

            for _, experiment in trials:
                for folder in (experiment.results, experiment.logs, experiment.run_file):
                    if folder.is_dir():
                        shutil.rmtree(folder, ignore_errors=True)
                    else:
                        folder.unlink(missing_ok=True)
        elif all(local_status(experiment).state == "completed" for _, experiment in trials):
            return None
        process = local_backend.spawn(QUEUE_MODULE, [str(sweep.root), str(chosen)], sweep.logs / "queue.log")
        sweep.write_run_record(
            {"backend": "local", "pid": process.pid, "parallel": chosen, "started_at": local_backend.now()}
        )
    return process


def pause_sweep(store: ExperimentStore, sweep: SweepDir, *, timeout: float = STOP_TIMEOUT) -> SweepStatus:
    """Stop launching trials, checkpoint and stop the running ones; every trial resumes later."""
    with sweep.locked():
        record = sweep.run_record()
        if not queue_alive(sweep):
            raise TfcliError(f"sweep '{sweep.name}' is not running")
        pid = int(record["pid"])
        sweep.write_run_record({**record, "pause_requested": True})
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while queue_alive(sweep) and time.monotonic() < deadline:
            time.sleep(0.2)
        if queue_alive(sweep):
            raise TfcliError(f"sweep '{sweep.name}' did not pause within {timeout:.0f} s")
    return sweep_status(store, sweep)


def stop_sweep(store: ExperimentStore, sweep: SweepDir) -> SweepStatus:
    """End the sweep for good: pause it if it runs, end any trial still running, mark everything stopped."""
    if queue_alive(sweep):
        pause_sweep(store, sweep)
    with sweep.locked():
        for _, experiment in trial_dirs(store, sweep):
            with experiment.locked():
                if local_backend.is_running(experiment):
                    pid = local_backend.signal_pause(experiment)
                    if not local_backend.wait_exit(experiment, pid):
                        local_backend.kill(experiment, pid)
                if experiment.run_record() and local_status(experiment).state != "completed":
                    local_backend.mark_stopped(experiment)
        record = sweep.run_record()
        record.pop("pause_requested", None)
        sweep.write_run_record({**record, "stopped": True})
    return sweep_status(store, sweep)


def wait_queue(sweep: SweepDir, process: subprocess.Popen[bytes] | None, poll: float = 1.0) -> None:
    """Block until the queue has exited (used by tests and by ``--wait`` without a terminal)."""
    while queue_alive(sweep):
        if process is not None:
            with contextlib.suppress(Exception):
                process.poll()
        time.sleep(poll)
