"""The GKE backend of a sweep: the sweep is ONE Pulumi stack (``stacks/Pulumi.<sweep>.yaml``,
:mod:`infra.sweep_program`): one Indexed Job, pod ``k`` trains trial ``<sweep>-k`` into ``gs://<bucket>/<sweep>/<sweep>-k/``.

It follows the experiment backend (:mod:`tfcli.gke.experiments`) step for step and shares its pieces:

- start: the stack file (``tfcli:sweep``, ``-c`` a shared cluster, ``--parallel`` as ``tfcli:parallelism``), ``stack
  init`` with its secrets provider, ``tfcli:suspend`` false and the credentials in one ``config set-all``, ``pulumi
  up``. ``experiments/<sweep>/run.json`` records ``backend: gke``; each trial's ``run.json`` records ``backend: gke``
  and ``sweep: <sweep>``, so neither a local queue nor ``start -e <trial> --local`` runs a trial the cluster runs;
- pause / resume: ``tfcli:suspend`` true / false and ``up`` (the Job's ``spec.suspend``: each running trainer
  checkpoints on SIGTERM and continues from its checkpoint in the bucket);
- stop: pause if it still trains, download every trial's results to ``experiments/<sweep>-k/results/``, ``destroy``;
- status: each trial's ``result.json`` and ``progress.jsonl`` read from the bucket.

The trials' numbers are read remotely into memory, not downloaded: ``progress.jsonl`` is a line per episode (well
under a megabyte for the runs a sweep makes), the aggregate table needs every episode of every trial, and a local
copy could be stale (a partial download) or mix with the results of an earlier local run. Once the sweep is stopped
its bucket is gone and the downloads are what is read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcli.errors import InvalidInput, TfcliError
from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.status import Status, status_from
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.gke import experiments as gke
from tfcli.gke.automation import Stacks, StackState, planned_total
from tfcli.gke.events import UpdateObserver
from tfcli.gke.results import RemoteResults, remote_results
from tfcli.gke.stack_files import SUSPEND_KEY
from tfcli.sweeps.aggregate import Run, run_of
from tfcli.sweeps.model import Trial
from tfcli.sweeps.run import SweepStatus, queue_alive
from tfcli.sweeps.store import SweepDir, trial_dirs

FINAL = gke.FINAL


@dataclass(frozen=True)
class SweepDeployment:
    """What ``start -s`` deployed (``nothing_to_run`` when every trial had completed)."""

    outputs: dict[str, Any]
    shared_cluster: str | None
    nothing_to_run: bool = False


@dataclass(frozen=True)
class TrialReading:
    """One trial as read from the bucket (or, once stopped, from its download): its state and numbers."""

    trial: Trial
    state: str
    result: dict[str, Any]
    records: list[dict[str, Any]]
    reader: ProgressReader

    def status(self) -> Status:
        final = self.state in ("completed", "failed", "paused", "stopped") and bool(self.result)
        detail = str(self.result.get("error", "")) if self.state == "failed" else ""
        return status_from(
            self.trial.name,
            self.trial.data,
            backend="gke",
            state=self.state,
            result=self.result,
            reader=self.reader,
            final=final,
            detail=detail,
        )

    def run(self) -> Run:
        return run_of(self.trial, self.records, self.state, self.result)


def trial_state(result: dict[str, Any], reader: ProgressReader, *, suspended: bool) -> str:
    """A deployed trial's state: its own ``result.json`` once it ended or paused itself, else what the Job does."""
    reported = result.get("status")
    if reported in FINAL:
        return str(reported)
    if reported == "paused" and str(result.get("reason", "")).startswith("max_cost"):
        return "paused"  # the trainer paused itself at max_cost; its pod has ended
    started = bool(reader.episodes or reported)
    if suspended:
        return ("paused" if reported == "paused" else "pausing") if started else "new"
    return "running" if started else "new"


def _trial_remote(base: RemoteResults, trial: str) -> RemoteResults:
    return dataclasses.replace(
        base, prefix=f"{base.prefix}/{trial}" if base.prefix else trial, progress=ProgressReader(Path("progress"))
    )


def read_deployed(project: Any, outputs: dict[str, Any], trials: list[Trial]) -> list[TrialReading]:
    """Every trial's ``result.json`` and ``progress.jsonl`` from the sweep's bucket (one client for all)."""
    base = remote_results(project, outputs)
    suspended = bool(outputs.get("suspended"))
    readings = []
    for trial in trials:
        remote = _trial_remote(base, trial.name)
        result = remote.result()
        records = remote.poll()
        state = trial_state(result, remote.progress, suspended=suspended)
        readings.append(TrialReading(trial, state, result, records, remote.progress))
    return readings


def read_downloaded(experiment: ExperimentDir, trial: Trial) -> TrialReading:
    """A trial of a sweep that is not deployed, from ``experiments/<trial>/results/`` (its download)."""
    reader = ProgressReader(experiment.results / "progress.jsonl")
    records = reader.read()
    result = experiment.result() if experiment.exists() else {}
    record = experiment.run_record() if experiment.exists() else {}
    reported = str(result.get("status", ""))
    if reported in FINAL:
        state = reported
    elif record.get("stopped"):
        state = "stopped"
    else:
        state = reported or "new"
    return TrialReading(trial, state, result, records, reader)


def _sweep_state(readings: list[TrialReading], *, suspended: bool) -> str:
    states = Counter(reading.state for reading in readings)
    if states.get("completed", 0) == len(readings):
        return "completed"
    if suspended:
        return "pausing" if states.get("pausing") else "paused"
    if states.get("failed") and states.get("completed", 0) + states["failed"] == len(readings):
        return "failed"
    return "running"


def _undeployed_state(sweep: SweepDir, state: StackState) -> str:
    """As :func:`tfcli.gke.experiments.status` says it for an experiment whose stack has no outputs."""
    if state.last_result == "in-progress":
        return "deploying" if state.last_kind == "update" else "destroying"
    if sweep.run_record().get("stopped") or state.last_kind == "destroy":
        return "stopped"
    if state.last_result == "failed":
        return "failed"
    return "new"


@dataclass(frozen=True)
class SweepView:
    """The sweep's stack and its trials' readings: what ``status -s``, ``list -s`` and ``stop -s`` look at."""

    status: SweepStatus
    readings: list[TrialReading]
    stack: StackState

    def run(self, trial: Trial) -> Run:
        return next(reading for reading in self.readings if reading.trial.name == trial.name).run()


def view(store: ExperimentStore, sweep: SweepDir, *, stacks: Stacks | None = None) -> SweepView:
    """The sweep's state from its stack and its bucket (never a stale local file while it is deployed)."""
    stacks = stacks or Stacks(store.project)
    trials = sweep.trials()
    state = stacks.state(sweep.name)
    if state.deployed:
        readings = read_deployed(store.project, state.outputs, trials)
        current = _sweep_state(readings, suspended=bool(state.outputs.get("suspended")))
        parallel = state.outputs.get("parallelism")
    else:
        readings = [read_downloaded(store.dir(trial.name), trial) for trial in trials]
        current = _undeployed_state(sweep, state)
        parallel = sweep.run_record().get("parallel")
    counts = dict(Counter(reading.state for reading in readings))
    trial_statuses = [(reading.trial, reading.status()) for reading in readings]
    if state.deployed and state.outputs.get("kubeconfig"):
        trial_statuses = _with_pods(store, sweep.name, state.outputs, trial_statuses)
    status = SweepStatus(
        sweep.name, current, None if parallel is None else int(parallel), counts, trial_statuses, None, "gke"
    )
    return SweepView(status, readings, state)


def _with_pods(
    store: ExperimentStore, sweep: str, outputs: dict[str, Any], statuses: list[tuple[Trial, Status]]
) -> list[tuple[Trial, Status]]:
    """Each trial's pod in words (``cluster: {"pod", "reason"}``; one API call for all the Job's pods), or the
    reason the cluster cannot be read (``cluster: {"error"}``); a status without them is still a status."""
    from tfcli.gke.kube import kube_for
    from tfcli.gke.pod_states import trial_pods

    namespace = str(outputs.get("namespace") or f"tfcli-{sweep}")
    try:
        kube = kube_for(outputs, store.project)
        pods = trial_pods(
            kube.pods(namespace, f"app.kubernetes.io/instance={sweep},app.kubernetes.io/component=trial"),
            kube.events(namespace),
        )
    except TfcliError as error:
        unread = {"error": error.message.splitlines()[0]}
        return [(trial, dataclasses.replace(status, cluster=unread)) for trial, status in statuses]
    return [
        (trial, dataclasses.replace(status, cluster={"pod": pod.state, "reason": pod.reason}))
        if (pod := pods.get(trial.index)) is not None
        else (trial, status)
        for trial, status in statuses
    ]


def trial_status(store: ExperimentStore, experiment: ExperimentDir, *, stacks: Stacks | None = None) -> Status:
    """``status -e <sweep>-k`` of a trial of a GKE sweep: read from the sweep's bucket (its download once stopped)."""
    from tfcli.sweeps.store import get_sweep

    sweep = get_sweep(store, str(experiment.run_record()["sweep"]))
    trial = next(trial for trial in sweep.trials() if trial.name == experiment.name)
    state = (stacks or Stacks(store.project)).state(sweep.name)
    if state.deployed:
        (reading,) = read_deployed(store.project, state.outputs, [trial])
    else:
        reading = read_downloaded(experiment, trial)
    return reading.status()


def _refuse_local_runs(sweep: SweepDir, trials: list[ExperimentDir], restart: bool) -> None:
    if sweep.run_record().get("backend") == "local" and queue_alive(sweep):
        raise TfcliError(
            f"sweep '{sweep.name}' is running on this machine; it cannot run on GKE at the same time",
            hint=f"`tfcli experiment stop -s {sweep.name}` first",
        )
    from tfcli.local import backend as local_backend

    running = [experiment.name for experiment in trials if local_backend.is_running(experiment)]
    if running:
        raise TfcliError(
            f"trials of sweep '{sweep.name}' run on this machine ({', '.join(running[:3])})",
            hint=f"`tfcli experiment stop -s {sweep.name}` ends them first",
        )
    local = [e.name for e in trials if e.run_record().get("backend") == "local" and gke.has_results(e)]
    if local and not restart:
        raise TfcliError(
            f"trials of sweep '{sweep.name}' have results of runs on this machine ({', '.join(local[:3])}), which "
            "GKE cannot continue",
            hint="continue the sweep here with --local, or start it over on GKE with --restart (deletes those results)",
        )


def _clear(trials: list[ExperimentDir]) -> None:
    import shutil

    for experiment in trials:
        for folder in (experiment.results, experiment.logs):
            shutil.rmtree(folder, ignore_errors=True)
        experiment.run_file.unlink(missing_ok=True)


def start(
    store: ExperimentStore,
    sweep: SweepDir,
    *,
    parallel: int | None = None,
    restart: bool = False,
    shared_cluster: str | None = None,
    observer: UpdateObserver | None = None,
    stacks: Stacks | None = None,
) -> SweepDeployment:
    """Deploy (or update, or resume) the sweep's stack; returns once ``pulumi up`` is done."""
    from infra.sweep_config import sweep_settings_from_config
    from tfcli.sweeps.stack import deploy_stack

    project = store.project
    gke.require_gcp(project)
    if parallel is not None and parallel < 1:
        raise InvalidInput(f"--parallel: at least 1, got {parallel}")
    stacks = stacks or Stacks(project)
    name = sweep.name
    trials = [experiment for _, experiment in trial_dirs(store, sweep)]
    _refuse_local_runs(sweep, trials, restart)
    if shared_cluster is not None:
        from tfcli.gke.stack_files import cluster_spec

        cluster_spec(project, shared_cluster)  # an unknown one is an InvalidInput listing the known ones
    stack_file, shared = deploy_stack(project, sweep.definition(), shared_cluster=shared_cluster, parallelism=parallel)
    sweep_settings_from_config(stack_file.config, stack=name)  # every mistake before Pulumi runs, exit code 2
    record = sweep.run_record()
    was_stopped = record.get("backend") == "gke" and record.get("stopped") and any(map(gke.has_results, trials))
    current = stacks.state(name)
    if current.deployed:
        gke.refuse_changes(project, current, stack_file.config, shared, restart=restart, kind="sweep")
        readings = read_deployed(project, current.outputs, sweep.trials())
        if all(reading.state == "completed" for reading in readings):
            return SweepDeployment(current.outputs, shared, nothing_to_run=True)
    elif restart:
        _clear(trials)
    elif was_stopped:
        raise TfcliError(
            f"sweep '{name}' was stopped: its bucket was destroyed after its trials' results were downloaded, "
            "and GKE cannot continue from a local copy",
            hint="--restart runs it again from the start on GKE; --local continues it on this machine",
        )
    with contextlib.ExitStack() as held:
        gke.hold_shared_cluster(held, project, stacks, shared)
        stack_file.write()
        stack = stacks.stack(name, create=True)
        # Recorded before the update: if it fails half-way, status and stop still look at the stack.
        started = gke.now()
        sweep.write_run_record({"backend": "gke", "stack": name, "shared_cluster": shared, "started_at": started})
        for experiment in trials:
            experiment.write_run_record({"backend": "gke", "sweep": name, "stack": name, "started_at": started})
        stacks.set_config(stack, {SUSPEND_KEY: "false"}, secrets=stacks.credentials())
        outputs = stacks.up(stack, observer=observer, total=planned_total(stack_file.config, name))
    if outputs.get("parallelism") is not None:
        sweep.write_run_record({**sweep.run_record(), "parallel": int(outputs["parallelism"])})
    return SweepDeployment(outputs, shared)


def _total(store: ExperimentStore, sweep: SweepDir) -> int | None:
    """The progress bar's estimate; a sweep whose definition no longer validates still pauses and stops."""
    from tfcli.gke.stack_files import StackFile, stack_path

    stack_file = StackFile.read(stack_path(store.project, sweep.name))
    return None if stack_file is None else planned_total(stack_file.config, sweep.name)


def wait_until(
    store: ExperimentStore,
    sweep: SweepDir,
    done: Callable[[SweepView], bool],
    *,
    on_poll: Callable[[SweepView], None] | None = None,
    stacks: Stacks | None = None,
) -> SweepView:
    """Poll the stack and the bucket (every :data:`tfcli.gke.experiments.POLL_SECONDS`) until ``done``."""
    stacks = stacks or Stacks(store.project)
    while True:
        current = view(store, sweep, stacks=stacks)
        if on_poll is not None:
            on_poll(current)
        if done(current):
            return current
        time.sleep(gke.POLL_SECONDS)


def pause(
    store: ExperimentStore,
    sweep: SweepDir,
    *,
    observer: UpdateObserver | None = None,
    stacks: Stacks | None = None,
    wait: bool = True,
) -> SweepStatus:
    """Suspend the Job (``tfcli:suspend: true``, ``up``) and wait (up to the experiments' ``PAUSE_TIMEOUT`` in all)
    for each running trial's checkpoint: a *new* ``result.json`` (another generation than before the update)."""
    stacks = stacks or Stacks(store.project)
    state = gke.deployed_state(stacks, sweep)
    if not state.outputs.get("suspended"):
        base = remote_results(store.project, state.outputs)
        readings = read_deployed(store.project, state.outputs, sweep.trials())
        running = [reading.trial.name for reading in readings if reading.state == "running"]
        before = {name: gke.result_generation(_trial_remote(base, name)) for name in running}
        stack = stacks.stack(sweep.name)
        stacks.set_config(stack, {SUSPEND_KEY: "true"}, secrets=stacks.credentials())
        stacks.up(stack, observer=observer, total=_total(store, sweep))
        deadline = time.monotonic() + gke.PAUSE_TIMEOUT
        for name, generation in before.items() if wait else ():
            remote = _trial_remote(base, name)
            if generation is None and not remote.poll():
                continue  # it never trained: there is nothing to checkpoint
            gke.wait_for_result(
                remote,
                lambda r: r.get("status") in ("paused", *FINAL),
                initial=generation,
                timeout=max(0.0, deadline - time.monotonic()),
            )
    return view(store, sweep, stacks=stacks).status


def download(store: ExperimentStore, sweep: SweepDir, *, stacks: Stacks | None = None) -> list[Path]:
    """Copy every trial's ``gs://<bucket>/<sweep>/<trial>/`` to ``experiments/<trial>/results/`` (only what
    changed); once stopped, the earlier downloads are what there is."""
    stacks = stacks or Stacks(store.project)
    state = stacks.state(sweep.name)
    trials = trial_dirs(store, sweep)
    if not state.deployed:
        if sweep.run_record().get("stopped"):
            return [experiment.results for _, experiment in trials if gke.has_results(experiment)]
        raise TfcliError(
            f"sweep '{sweep.name}' is not deployed on GKE, so it has no results bucket",
            hint=f"start it with `tfcli experiment start -s {sweep.name}`",
        )
    return [path for _, experiment in trials if (path := download_trial(store, experiment, state.outputs)) is not None]


def download_trial(store: ExperimentStore, experiment: ExperimentDir, outputs: dict[str, Any]) -> Path | None:
    """One trial's results from the sweep's bucket (None when it wrote nothing yet)."""
    from tfcli.gke.download import download_prefix
    from tfcli.gke.results import gcs_errors

    remote = _trial_remote(remote_results(store.project, outputs), experiment.name)
    with gcs_errors(store.project, f"download gs://{remote.bucket}/{remote.prefix}/"):
        report = download_prefix(remote.client, remote.bucket, remote.prefix, experiment.results)
    return experiment.results if report.downloaded or report.unchanged else None


def stop(
    store: ExperimentStore,
    sweep: SweepDir,
    *,
    download_results: bool = True,
    observer: UpdateObserver | None = None,
    stacks: Stacks | None = None,
) -> SweepStatus:
    """Checkpoint (pause, if it still trains), download every trial, destroy the stack; mark everything stopped."""
    stacks = stacks or Stacks(store.project)
    state = stacks.state(sweep.name)
    if state.deployed and download_results:
        current = view(store, sweep, stacks=stacks).status.state
        if current not in ("completed", "failed") and not state.outputs.get("suspended"):
            pause(store, sweep, observer=observer, stacks=stacks)
        download(store, sweep, stacks=stacks)
    if state.may_have_resources:  # a failed update leaves resources (a cluster!) without outputs
        stacks.destroy(stacks.stack(sweep.name), observer=observer, total=_total(store, sweep))
    stopped = {"backend": "gke", "stopped": True, "stopped_at": gke.now()}
    sweep.write_run_record({**sweep.run_record(), **stopped})
    for _, experiment in trial_dirs(store, sweep):
        experiment.write_run_record({**experiment.run_record(), **stopped, "sweep": sweep.name})
    return view(store, sweep, stacks=stacks).status
