"""Running experiments: the operations behind ``tfcli experiment start/pause/resume/stop/...``.

A thin dispatcher over the two backends. ``start`` picks one: the local backend (processes on this machine) with
``--local`` or when the project names no GCP project; otherwise GKE (the experiment's Pulumi stack,
:mod:`tfcli.gke.experiments`). Every later command follows the backend ``run.json`` recorded at the last start.
"""

from __future__ import annotations

import dataclasses
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcli.errors import InvalidInput, TfcliError
from tfcli.experiments.status import Status, local_status
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.local import backend as local_backend

if TYPE_CHECKING:
    from tfcli.gke.events import UpdateObserver
    from tfcli.gke.experiments import Deployment


@dataclass(frozen=True)
class Launched:
    """A started run: locally, the supervising process; on GKE, what was deployed. ``process`` and ``deployment``
    are both None when there was nothing left to run (it had completed)."""

    experiment: ExperimentDir
    process: subprocess.Popen[bytes] | None
    backend: str = "local"
    deployment: Deployment | None = None

    @property
    def nothing_to_run(self) -> bool:
        if self.backend == "gke":
            return self.deployment is None or self.deployment.nothing_to_run
        return self.process is None


def recorded_backend(store: ExperimentStore, experiment: ExperimentDir) -> str:
    """The backend of the experiment's last start (the project's default when it never started)."""
    return str(experiment.run_record().get("backend") or store.project.settings.default_backend)


def gke_sweep(experiment: ExperimentDir) -> str | None:
    """The GKE sweep this experiment is a trial of, while that sweep is deployed (its stack runs the trial)."""
    record = experiment.run_record()
    if record.get("backend") == "gke" and record.get("sweep") and not record.get("stopped"):
        return str(record["sweep"])
    return None


def refuse_sweep_trial(experiment: ExperimentDir, action: str) -> None:
    """A trial of a deployed GKE sweep is run by the sweep's stack: it is started, paused and stopped with it."""
    if (sweep := gke_sweep(experiment)) is not None:
        raise TfcliError(
            f"experiment '{experiment.name}' is a trial of sweep '{sweep}', deployed on GKE; it cannot {action} on "
            "its own",
            hint=f"`tfcli experiment pause -s {sweep}` / `stop -s {sweep}` act on the whole sweep (stop downloads "
            f"every trial's results and destroys its stack; `start -e {experiment.name} --local` then continues "
            "this one here)",
        )


def _backend(store: ExperimentStore, local_flag: bool) -> str:
    return "local" if local_flag else store.project.settings.default_backend


def start_experiment(
    store: ExperimentStore,
    name: str,
    *,
    local: bool,
    restart: bool = False,
    shared_cluster: str | None = None,
    observer: UpdateObserver | None = None,
) -> Launched:
    """Start (or continue) an experiment; the trainer resumes from its newest checkpoint."""
    experiment = store.get(name)
    refuse_sweep_trial(experiment, "start")
    backend = _backend(store, local)
    if backend == "gke":
        from tfcli.gke import experiments as gke

        with experiment.locked():
            deployment = gke.start(
                experiment, store.project, restart=restart, shared_cluster=shared_cluster, observer=observer
            )
        return Launched(experiment, None, "gke", deployment)
    if shared_cluster is not None:
        flag = "--cluster" if local else "--cluster (no GCP project in tfcli.yaml, so this runs locally)"
        raise InvalidInput(f"{flag}: a shared cluster is a GKE cluster; it has no meaning for a run on this machine")
    record = experiment.run_record()
    with experiment.locked():
        if record.get("backend") == "gke" and not record.get("stopped"):
            raise TfcliError(
                f"experiment '{name}' is deployed on GKE; it cannot run here at the same time",
                hint=f"`tfcli experiment stop -e {name}` downloads its results (checkpoints included) and destroys "
                "its stack; `--local` then continues it on this machine",
            )
        if not restart and local_status(experiment).state == "completed":
            return Launched(experiment, None)
        process = local_backend.launch(experiment, restart=restart)
    return Launched(experiment, process)


def require_resumable(store: ExperimentStore, experiment: ExperimentDir) -> None:
    """Resuming makes sense for a paused, stopped or interrupted run (on GKE: a paused one)."""
    state = status_of(store, experiment).state
    gke = recorded_backend(store, experiment) == "gke"
    allowed = ("paused", "pausing") if gke else ("paused", "stopped", "interrupted", "failed")
    if state not in allowed:
        raise TfcliError(f"experiment '{experiment.name}' is {state}; only a paused or interrupted run can resume")


def resume_experiment(store: ExperimentStore, name: str, *, observer: UpdateObserver | None = None) -> Launched:
    """Continue a paused experiment where it last ran."""
    experiment = store.get(name)
    require_resumable(store, experiment)
    return start_experiment(store, name, local=recorded_backend(store, experiment) == "local", observer=observer)


def status_of(store: ExperimentStore, experiment: ExperimentDir) -> Status:
    """From the stack and its bucket (GKE) or the processes and results folder (local). An experiment that never
    ran shows the backend ``start`` would pick."""
    record = experiment.run_record()
    if record.get("backend") == "gke" and record.get("sweep"):
        from tfcli.gke.sweeps import trial_status

        return trial_status(store, experiment)
    if record.get("backend") == "gke":
        from tfcli.gke import experiments as gke

        return gke.status(experiment, store.project)
    status = local_status(experiment)
    return status if record else dataclasses.replace(status, backend=recorded_backend(store, experiment))


def statuses(store: ExperimentStore) -> list[Status]:
    """Every experiment's status; a GKE one that cannot be read (no Pulumi CLI, no credentials) is ``unknown``."""
    experiments = [store.get(name) for name in store.names()]

    def one(experiment: ExperimentDir) -> Status:
        try:
            return status_of(store, experiment)
        except TfcliError as error:
            spec = experiment.spec_data()
            return Status(
                name=experiment.name,
                backend="gke",
                run_mode=str(spec.get("run_mode", "single")),
                state="unknown",
                timesteps=0,
                episodes=0,
                budget="",
                progress=None,
                mean_return=None,
                wall_seconds=None,
                timesteps_per_second=None,
                pid=None,
                detail=error.message.splitlines()[0],
            )

    remote = [e for e in experiments if e.run_record().get("backend") == "gke"]
    if len(remote) < 2:
        return [one(experiment) for experiment in experiments]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(remote))) as pool:  # each one runs a few pulumi commands
        return list(pool.map(one, experiments))


def pause_experiment(
    store: ExperimentStore, experiment: ExperimentDir, *, observer: UpdateObserver | None = None
) -> dict[str, Any]:
    """Checkpoint and stop the run; returns its result (status ``paused``, or ``pausing`` while GKE still works)."""
    refuse_sweep_trial(experiment, "pause")
    with experiment.locked():
        if recorded_backend(store, experiment) == "gke":
            from tfcli.gke import experiments as gke

            return gke.pause(experiment, store.project, observer=observer)
        pid = local_backend.signal_pause(experiment)
        if not local_backend.wait_exit(experiment, pid):
            raise TfcliError(
                f"experiment '{experiment.name}' did not pause within {local_backend.PAUSE_TIMEOUT:.0f} s",
                hint="`tfcli experiment stop` ends it for good",
            )
    return experiment.result()


def stop_experiment(
    store: ExperimentStore, experiment: ExperimentDir, *, download: bool, observer: UpdateObserver | None = None
) -> Path | None:
    """End the run for good. Locally: checkpoint and end its processes (killed if they do not stop in time). On GKE:
    checkpoint, download, destroy the stack. Returns where the results are (None when GKE results were not
    downloaded)."""
    refuse_sweep_trial(experiment, "stop")
    with experiment.locked():
        if recorded_backend(store, experiment) == "gke":
            from tfcli.gke import experiments as gke

            return gke.stop(experiment, store.project, download=download, observer=observer)
        if local_backend.is_running(experiment):
            pid = local_backend.signal_pause(experiment)
            if not local_backend.wait_exit(experiment, pid):
                local_backend.kill(experiment, pid)
        local_backend.mark_stopped(experiment)
    return experiment.results


def download_results(store: ExperimentStore, experiment: ExperimentDir) -> Path:
    """GKE: copy the bucket's results to ``experiments/NAME/results/``. Local runs write them in place."""
    if (sweep := gke_sweep(experiment)) is not None:
        from tfcli.gke.automation import Stacks
        from tfcli.gke.sweeps import download_trial

        state = Stacks(store.project).state(sweep)
        found = download_trial(store, experiment, state.outputs) if state.deployed else None
        if found is None:
            raise TfcliError(f"trial '{experiment.name}' of sweep '{sweep}' has no results in the bucket yet")
        return found
    if recorded_backend(store, experiment) == "gke" and not experiment.run_record().get("sweep"):
        from tfcli.gke import experiments as gke

        with experiment.locked():
            return gke.download_results(experiment, store.project)
    if not experiment.results.is_dir():
        raise TfcliError(f"experiment '{experiment.name}' has no results yet", hint="start it first")
    return experiment.results


def follow_log(
    store: ExperimentStore,
    experiment: ExperimentDir,
    *,
    follow: bool,
    worker: int | None,
    write: Callable[[str], None],
    tail: int | None = None,
) -> None:
    """Print a log (its last ``tail`` lines); with ``follow``, keep printing what is appended until the run ends.
    On GKE the log comes from the cluster (:mod:`tfcli.gke.logs`)."""
    if tail is not None and tail < 0:
        raise InvalidInput(f"--tail: expected a number of lines >= 0, got {tail}")
    if experiment.run_record().get("backend") == "gke":
        from tfcli.gke.logs import stream_logs

        stream_logs(experiment, store.project, follow=follow, worker=worker, tail=tail, write=write)
        return
    name = "trainer.log" if worker is None else f"env-worker-{worker}.log"
    path = experiment.logs / name
    if not path.exists():
        raise TfcliError(f"experiment '{experiment.name}' has no {name} yet", hint="start it first")
    with open(path, errors="replace") as handle:
        if tail is not None:
            lines = handle.readlines()
            write("".join(lines[len(lines) - tail :] if tail else []))
        while True:
            chunk = handle.read()
            if chunk:
                write(chunk)
            elif not follow or not local_backend.is_running(experiment):
                break
            else:
                time.sleep(0.3)
