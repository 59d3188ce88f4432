"""Following a run on GKE (``start --wait``): progress read from its bucket until it ends, then its results here.

A run that completed on a cluster of its own is stopped (downloaded, its stack destroyed: nothing is left billing);
otherwise its results are downloaded and its stack stays. Ctrl-C stops following; the run goes on on GKE.
"""

from __future__ import annotations

import time

from tfcli.gke import waiting
from tfcli.gke.deploy import Deployment
from tfcli.gke.results import RemoteResults, remote_results
from tfcli.gke.stacks import Stacks
from tfcli.gke.sweep_readings import SweepView
from tfcli.gke.sweeps import wait_until
from tfcli.runs.backend import Backend, Watcher
from tfcli.runs.results import Ended, Started, exit_code
from trainer.kernel.spec.outcomes import EXIT_COMPLETED, EXIT_PAUSED

ENDED = ("completed", "failed", "paused")


def deployment_of(started: Started) -> Deployment:
    """What a GKE ``start`` deployed (its stack's outputs, the shared cluster it runs on)."""
    assert isinstance(started.launched, Deployment), started.launched
    return started.launched


def follow_experiment(backend: Backend, started: Started, watcher: Watcher) -> Ended:
    run = started.run
    name = run.name
    watcher.progress_detail("waiting for the learner…")

    def show(remote: RemoteResults) -> None:
        reader = remote.progress
        if reader.episodes:
            watcher.progress(reader.timesteps, reader.episodes, reader.mean_return)

    deployment = deployment_of(started)
    remote = remote_results(run.project, deployment.outputs)
    try:
        result = waiting.wait_for_result(
            remote,
            lambda r: r.get("status") in ENDED,
            initial=deployment.result_generation,
            timeout=None,
            on_poll=show,
        )
    except KeyboardInterrupt:
        watcher.progress_detail("no longer following")
        result = {}
    if not result:
        note = (
            f"{name} keeps running on GKE. Watch it with `tfcli experiment status -e {name}`; "
            "`pause` or `stop` it when you like."
        )
        return Ended(run, "running", 130, interrupted=True, report=False, notes=[note])
    status = str(result.get("status"))
    if status == "completed" and deployment.own_cluster:
        watcher.say(f"Downloading the results of {name} and tearing its cluster down…")
        backend.stop(run, download=True)
    else:
        backend.download(run)
    code = {"completed": EXIT_COMPLETED, "paused": EXIT_PAUSED}.get(status, 1)
    ended = Ended(run, status, exit_code(status, code), code)
    if status == "failed":
        ended.warnings.append(
            f"       its stack is still deployed (and billed): `tfcli experiment logs -e {name}` says how to read "
            f"its logs, `tfcli experiment stop -e {name}` tears it down"
        )
    elif status == "completed" and not deployment.own_cluster:
        ended.notes.append(
            f"  its workloads and bucket stay on the shared cluster until `tfcli experiment stop -e {name}`"
        )
    return ended


def follow_sweep(backend: Backend, started: Started, watcher: Watcher, stacks: Stacks) -> Ended:
    run = started.run
    began = time.monotonic()
    try:
        ended = wait_until(
            run.store,
            run.sweep(),
            lambda v: v.status.state in ENDED,
            on_poll=lambda v: watcher.trials(v.status),
            stacks=stacks,
        )
    except KeyboardInterrupt:
        watcher.say(f"{run.name} keeps running on GKE: `tfcli experiment status -s {run.name}` watches it.")
        return Ended(run, "running", 130, interrupted=True, report=False)
    return _sweep_ended(backend, started, ended, time.monotonic() - began, watcher)


def _sweep_ended(backend: Backend, started: Started, view: SweepView, seconds: float, watcher: Watcher) -> Ended:
    """A sweep that ended on a cluster of its own is stopped, failed or not (its trials' results downloaded, its
    reasons kept in their run records, the stack destroyed): nothing is left billing. On a shared cluster its
    results are downloaded and its workloads stay until ``stop -s``."""
    run, state = started.run, view.status.state
    if state in ("completed", "failed") and deployment_of(started).own_cluster:
        watcher.say(f"Downloading the results of {run.name}'s trials and tearing its cluster down…")
        backend.stop(run, download=True)
    else:
        backend.download(run)
    ended = Ended(run, state, {"completed": EXIT_COMPLETED, "paused": EXIT_PAUSED}.get(state, 1), seconds=seconds)
    if view.status.detail:
        ended.warnings.append(f"       {view.status.detail}")
    for trial, status in view.status.trials:
        if status.state in ("failed", "paused") and status.detail:
            ended.warnings.append(f"       {trial.name} {status.state}: {status.detail}")
    return ended
