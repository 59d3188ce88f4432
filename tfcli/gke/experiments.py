"""The GKE backend of an experiment: its Pulumi stack (``stacks/Pulumi.<name>.yaml``), its results in GCS.

- start: :func:`tfcli.gke.deploy.deploy` with the experiment's stack file (``-c`` a shared cluster) and, for a
  distributed run, its transport token — the cluster too when it is the experiment's own;
- pause / resume: ``tfcli:suspend`` true / false and ``up`` (the Jobs' ``suspend``: the trainer checkpoints on
  SIGTERM and continues from it);
- stop: checkpoint (pause) if it still trains, download, ``destroy`` (workloads, bucket and, when it is the
  experiment's own, the cluster);
- status: the stack's outputs and last operation, and ``result.json``/``progress.jsonl`` in the bucket — never a
  local file that may be stale (only a stopped experiment, whose bucket is gone, is described by its download).

``run.json`` records ``backend: gke`` (so later commands pick this backend) and the shared cluster, if any.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.record import RunRecord
from tfcli.experiments.status import Status, reported_state, status_from
from tfcli.experiments.store import ExperimentDir
from tfcli.gke import states, waiting
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
from tfcli.gke.results import RemoteResults, remote_results
from tfcli.gke.results import download_results as copy_results
from tfcli.gke.stacks import Stacks
from tfcli.project import ProjectDir
from tfcli.stackfiles.files import StackFile, cluster_spec, experiment_stack, stack_path
from trainer.kernel.config_keys import TRANSPORT_TOKEN_KEY
from trainer.kernel.errors import InvalidInput, TfcliError


def _validate(config: dict[str, Any], name: str) -> None:
    """The stack config as the program will read it, checked offline (exit code 2 for a mistake)."""
    from infra.stack_config import settings_from_config

    try:
        settings_from_config(config, stack=name)
    except InvalidInput as error:
        if "names no cluster" in error.message:
            raise InvalidInput(
                error.problems,
                hint=f"give it a cluster (`tfcli experiment new -f SPEC -n {name} -c single-node-gpu`) or run it "
                f"on a shared cluster (`tfcli experiment start -e {name} -c CLUSTER`)",
            ) from None
        raise


def start(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    restart: bool = False,
    shared_cluster: str | None = None,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
) -> Deployment:
    """Deploy (or update, or resume) the experiment's stack; returns once ``pulumi up`` is done."""
    require_gcp(project)
    name = experiment.name
    spec = experiment.spec()
    spec_data = experiment.spec_view()  # a completed run whose budget was raised goes on
    refuse_local_results(experiment, [experiment], restart=restart)
    planned = experiment_stack(project, spec, shared_cluster=shared_cluster)
    on_shared = planned.shared_cluster is not None
    cluster = cluster_spec(project, planned.shared_cluster) if planned.shared_cluster is not None else spec.cluster
    fix_prices(project, planned.config, [spec.model_copy(update={"cluster": cluster}) if on_shared else spec])
    _validate(planned.config, name)

    def completed(outputs: dict[str, Any]) -> tuple[bool, int | None]:
        remote = remote_results(project, outputs)
        before = remote.result_blob()
        done = before is not None and reported_state(spec_data, remote.result(before)) == "completed"
        return done, None if before is None else before.generation

    record = RunRecord(backend=GkeHandle.KEY, started_at=now())
    record = record.with_handle(GkeHandle(stack=name, shared_cluster=planned.shared_cluster))
    start = StackStart(
        experiment,
        [experiment],
        planned.file,
        planned.shared_cluster,
        {experiment: record},
        _token(project, spec, name),
    )
    return start_stack(stacks, start, restart=restart, completed=completed, observer=observer)


def _token(project: ProjectDir, spec: Any, stack: str) -> dict[str, str]:
    """A distributed experiment's transport token, made once (a new random one) and kept as a secret in its stack
    file, so `pulumi up -s NAME` without tfcli deploys the same one."""
    if spec.run_mode != "distributed":
        return {}
    stack_file = StackFile.read(stack_path(project, stack))
    if stack_file is not None and TRANSPORT_TOKEN_KEY in stack_file.config:
        return {}
    return {TRANSPORT_TOKEN_KEY: secrets.token_hex(32)}


def pause(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
    wait: bool = True,
) -> dict[str, Any]:
    """Suspend the Jobs (``tfcli:suspend: true``, ``up``) and wait for the trainer's checkpoint (``result.json``)."""
    state = deployed_state(stacks, experiment)
    remote = remote_results(project, state.outputs)
    if state.outputs.get("suspended"):
        return remote.result() or {"status": "paused", "timesteps": 0}
    (result,) = suspend_and_wait(stacks, experiment.name, [remote], observer=observer, wait=wait)
    if not wait:
        return {"status": "pausing"}
    if result is None:
        return {"status": "paused", "timesteps": 0}  # it never trained: there is nothing to checkpoint
    return result or {"status": "pausing", "timesteps": remote.progress.timesteps}


def stop(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    download: bool = True,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
) -> Path | None:
    """Checkpoint (if it still trains), download, destroy the stack; returns where the results are (None when not
    downloaded). A stack with nothing in it is only marked stopped."""
    state = stacks.state(experiment.name)
    where: Path | None = None
    if state.deployed and download:
        remote = remote_results(project, state.outputs)
        if remote.result().get("status") not in waiting.FINAL and not state.outputs.get("suspended"):
            pause(experiment, project, observer=observer, stacks=stacks)
        where = download_results(experiment, project, stacks=stacks, remote=remote)
    elif not state.deployed and has_results(experiment):
        where = experiment.results  # downloaded by an earlier stop
    tear_down(stacks, state, observer=observer)
    mark_stopped(experiment, now())
    return where


def download_results(
    experiment: ExperimentDir, project: ProjectDir, *, stacks: Stacks, remote: RemoteResults | None = None
) -> Path:
    """Copy ``gs://<bucket>/<experiment>/`` to ``experiments/<name>/results/`` (only what changed)."""
    if remote is None:
        state = stacks.state(experiment.name)
        if not state.deployed:
            if has_results(experiment) and experiment.run_record().stopped:
                return experiment.results  # downloaded when it was stopped; the bucket is gone
            raise TfcliError(
                f"experiment '{experiment.name}' is not deployed on GKE, so it has no results bucket",
                hint=f"start it with `tfcli experiment start -e {experiment.name}`",
            )
        remote = remote_results(project, state.outputs)
    copy_results(project, remote, experiment.results)
    return experiment.results


def status(experiment: ExperimentDir, project: ProjectDir, *, stacks: Stacks) -> Status:
    """The experiment's state from its stack and its bucket."""
    spec = experiment.spec_view()
    state = stacks.state(experiment.name)
    detail = ""
    if state.last_result == "failed":
        detail = f"the last pulumi {state.last_kind or 'update'} failed; run the command again to see why"
    if state.deployed:
        remote = remote_results(project, state.outputs)
        result = remote.result()
        remote.poll()
        reader = remote.progress
        reported = {**result, "status": reported_state(spec, result)} if result else result
        current = states.deployed_state(reported, suspended=bool(state.outputs.get("suspended")))
        if states.paused_at_max_cost(result):
            detail = str(result["reason"])
        if current == "failed" and result.get("error"):
            detail = str(result["error"])
    else:
        result = experiment.result()
        reader = ProgressReader(experiment.results / "progress.jsonl")
        reader.read()
        current = states.undeployed_state(experiment.run_record(), state)
    final = current in ("completed", "failed", "paused", "stopped") and bool(result)
    current_status = status_from(
        experiment.name, spec, backend="gke", state=current, result=result, reader=reader, final=final, detail=detail
    )
    if not state.deployed:
        return current_status
    from tfcli.gke.watch import observe

    return observe(current_status, state.outputs, project, spec)
