"""The GKE backend of a sweep: the sweep is ONE Pulumi stack (``stacks/Pulumi.<sweep>.yaml``,
:mod:`infra.sweep_program`): one Indexed Job, pod ``k`` trains trial ``<sweep>-k`` into ``gs://<bucket>/<sweep>/<sweep>-k/``.

It takes the experiment backend's steps (:mod:`tfcli.gke.deploy`, :mod:`tfcli.gke.waiting`, :mod:`tfcli.gke.states`):

- start: the stack file (``tfcli:sweep``, ``-c`` a shared cluster, ``--parallel`` or the sweep file's ``parallel`` as
  ``tfcli:parallelism``: :func:`trainer.kernel.spec.parallel.resolved_parallel`, the rule of the local queue too), then
  :func:`~tfcli.gke.deploy.deploy`. ``experiments/<sweep>/run.json`` records ``backend: gke``; each trial's records
  ``backend: gke`` and ``sweep: <sweep>``, so neither a local queue nor ``start -e <trial> --local`` runs a trial the
  cluster runs;
- pause / resume: ``tfcli:suspend`` true / false and ``up`` (the Job's ``spec.suspend``: each running trainer
  checkpoints on SIGTERM and continues from its checkpoint in the bucket);
- stop: pause if it still trains, download every trial's results to ``experiments/<sweep>-k/results/``, ``destroy``;
- status: each trial's ``result.json`` and ``progress.jsonl`` read from the bucket (:mod:`tfcli.gke.sweep_readings`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcli.experiments.record import RunRecord
from tfcli.experiments.store import ExperimentDir, ExperimentStore, RunFolder
from tfcli.gke import waiting
from tfcli.gke.bucket_reads import BucketReads
from tfcli.gke.deploy import (
    Deployment,
    StackStart,
    deployed_state,
    has_results,
    mark_stopped,
    now,
    refuse_local_results,
    start_stack,
    suspend_and_wait,
    tear_down,
)
from tfcli.gke.events import UpdateObserver
from tfcli.gke.gcp_project import require_gcp
from tfcli.gke.handle import GkeHandle
from tfcli.gke.price_source import fix_prices
from tfcli.gke.results import download_results as copy_results
from tfcli.gke.results import remote_results
from tfcli.gke.stacks import Stacks
from tfcli.gke.sweep_readings import SweepView, read_deployed, trial_remote, view
from tfcli.project import ProjectDir
from tfcli.stackfiles.files import cluster_spec
from tfcli.stackfiles.sweep import deploy_stack
from tfcli.sweeps.status import SweepStatus
from tfcli.sweeps.store import SweepDir, trial_dirs
from trainer.kernel.config_keys import HELD_TRIALS_KEY, RERUN_KEY
from trainer.kernel.errors import TfcliError


def start(
    store: ExperimentStore,
    sweep: SweepDir,
    *,
    parallel: int | None = None,
    restart: bool = False,
    shared_cluster: str | None = None,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
    resumed: Resumed | None = None,
) -> Deployment:
    """Deploy (or update, or resume) the sweep's stack; returns once ``pulumi up`` is done. ``resumed``: what
    ``resume -s`` sets (trials held, a new Job for one that ended)."""
    from infra.sweep_config import sweep_settings_from_config

    project = store.project
    require_gcp(project)
    name = sweep.name
    trials = [experiment for _, experiment in trial_dirs(store, sweep)]
    refuse_local_results(sweep, trials, restart=restart)
    if shared_cluster is not None:
        cluster_spec(project, shared_cluster)  # an unknown one is an InvalidInput listing the known ones
    stack_file, shared = deploy_stack(project, sweep.definition(), shared_cluster=shared_cluster, parallelism=parallel)
    held: tuple[int, ...] = ()
    if resumed is not None:
        held = resumed.held
        config = stack_file.config
        config[HELD_TRIALS_KEY] = ",".join(map(str, held))
        if resumed.new_job:
            config[RERUN_KEY] = int(config.get(RERUN_KEY) or 0) + 1
    settings = sweep_settings_from_config(stack_file.config, stack=name)  # every mistake before Pulumi, exit code 2
    fix_prices(project, stack_file.config, settings.trials)

    def completed(outputs: dict[str, Any]) -> tuple[bool, int | None]:
        readings = read_deployed(project, outputs, sweep.trials())
        # done: completed, held, or pruned unless this resume trains pruned trials on (--include-pruned)
        return all(
            reading.state == "completed"
            or reading.trial.index in held
            or (reading.state == "pruned" and resumed is None)
            for reading in readings
        ), None

    started = now()
    record = RunRecord(backend=GkeHandle.KEY, started_at=started)
    records: dict[RunFolder, RunRecord] = {sweep: record.with_handle(GkeHandle(stack=name, shared_cluster=shared))}
    records.update({trial: record.with_handle(GkeHandle(stack=name, sweep=name)) for trial in trials})
    plan = StackStart(sweep, trials, stack_file, shared, records)
    deployed = start_stack(stacks, plan, restart=restart, completed=completed, observer=observer)
    if not deployed.nothing_to_run and deployed.outputs.get("parallelism") is not None:
        sweep.write_run_record(sweep.run_record().but(parallel=int(deployed.outputs["parallelism"])))
    return deployed


@dataclass(frozen=True)
class Resumed:
    """``resume -s`` on GKE: the trials its Job leaves as they ended, and whether the Job must be a new one (the
    old one ended: a Job that is ``Failed`` or ``Complete`` starts no pod again)."""

    held: tuple[int, ...]
    new_job: bool


def release_trials(project: ProjectDir, outputs: dict[str, Any], trials: list[str]) -> None:
    """Release pruned trials to train on (``resume -s --include-pruned``): ``early_stop_released`` beside each one's
    ``result.json`` in the bucket (trainer/ended.py: without it a pruned trial's pod ends at once)."""
    from trainer.ended import RELEASED, release_note

    base = remote_results(project, outputs)
    for trial in trials:
        remote = trial_remote(base, trial)
        remote.write(RELEASED, release_note(remote.result()))


def wait_until(
    store: ExperimentStore,
    sweep: SweepDir,
    done: Callable[[SweepView], bool],
    *,
    on_poll: Callable[[SweepView], None] | None = None,
    stacks: Stacks,
) -> SweepView:
    """Poll the stack and the bucket (every :data:`tfcli.gke.waiting.POLL_SECONDS`) until ``done``; each poll after
    the first fetches only the objects that changed."""
    reads = BucketReads()
    while True:
        current = view(store, sweep, stacks=stacks, reads=reads)
        if on_poll is not None:
            on_poll(current)
        if done(current):
            return current
        time.sleep(waiting.POLL_SECONDS)


def pause(
    store: ExperimentStore,
    sweep: SweepDir,
    *,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
    wait: bool = True,
) -> SweepStatus:
    """Suspend the Job (``tfcli:suspend: true``, ``up``) and wait (up to ``PAUSE_TIMEOUT`` in all) for each running
    trial's checkpoint: a *new* ``result.json`` (another generation than before the update)."""
    state = deployed_state(stacks, sweep)
    if not state.outputs.get("suspended"):
        base = remote_results(store.project, state.outputs)
        readings = read_deployed(store.project, state.outputs, sweep.trials())
        running = [trial_remote(base, reading.trial.name) for reading in readings if reading.state == "running"]
        suspend_and_wait(stacks, sweep.name, running, observer=observer, wait=wait)
    return view(store, sweep, stacks=stacks).status


def download(store: ExperimentStore, sweep: SweepDir, *, stacks: Stacks) -> list[Path]:
    """Copy every trial's ``gs://<bucket>/<sweep>/<trial>/`` to ``experiments/<trial>/results/`` (only what
    changed); once stopped, the earlier downloads are what there is."""
    state = stacks.state(sweep.name)
    trials = [experiment for _, experiment in trial_dirs(store, sweep)]
    if not state.deployed:
        if sweep.run_record().stopped:
            return [experiment.results for experiment in trials if has_results(experiment)]
        raise TfcliError(
            f"sweep '{sweep.name}' is not deployed on GKE, so it has no results bucket",
            hint=f"start it with `tfcli experiment start -s {sweep.name}`",
        )
    return [path for experiment in trials if (path := download_trial(store, experiment, state.outputs)) is not None]


def download_trial(store: ExperimentStore, experiment: ExperimentDir, outputs: dict[str, Any]) -> Path | None:
    """One trial's results from the sweep's bucket (None when it wrote nothing yet)."""
    remote = trial_remote(remote_results(store.project, outputs), experiment.name)
    return experiment.results if copy_results(store.project, remote, experiment.results) else None


def stop(
    store: ExperimentStore,
    sweep: SweepDir,
    *,
    download_results: bool = True,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
) -> SweepStatus:
    """Checkpoint (pause, if it still trains), download every trial, destroy the stack; mark everything stopped,
    keeping how the cluster ended what it ended (a failed trial, a failed Job) for ``status`` once it is gone."""
    state = stacks.state(sweep.name)
    ended: dict[str, dict[str, str]] = {}
    if state.deployed:
        seen = view(store, sweep, stacks=stacks)
        if download_results:
            if seen.status.state not in waiting.FINAL and not state.outputs.get("suspended"):
                pause(store, sweep, observer=observer, stacks=stacks)
            download(store, sweep, stacks=stacks)
        ended = {
            reading.trial.name: {"ended_as": reading.state, "ended_reason": reading.detail}
            for reading in seen.readings
            if reading.state in ("failed", "paused") and reading.detail  # the cluster ended it so
        }
        if seen.status.state == "failed":
            ended[sweep.name] = {"ended_as": "failed", "ended_reason": seen.status.detail}
    tear_down(stacks, state, observer=observer)
    stopped_at = now()
    mark_stopped(sweep, stopped_at, **ended.get(sweep.name, {}))
    for _, experiment in trial_dirs(store, sweep):
        mark_stopped(experiment, stopped_at, sweep=sweep.name, **ended.get(experiment.name, {}))
    return view(store, sweep, stacks=stacks).status
