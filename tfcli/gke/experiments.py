"""The GKE backend: an experiment is its Pulumi stack (``stacks/Pulumi.<name>.yaml``), its results are in GCS.

- start, in the order a first deploy needs: the stack file (all tfcli keys, the project's GCP project and location;
  ``-c`` a shared cluster), ``stack init`` with its secrets provider (passphrase on self-managed backends, unless
  ``$PULUMI_SECRETS_PROVIDER`` or the stack file names another), config (``tfcli:suspend`` false) and secrets (the
  key as ``gcp:credentials`` when ``credentials: key-file``, a distributed run's ``tfcli:transportToken``) in one
  ``config set-all``, then ``pulumi up`` — the cluster too when it is the experiment's own;
- pause / resume: ``tfcli:suspend`` true / false and ``up`` (the Jobs' ``suspend``: the trainer checkpoints on
  SIGTERM and continues from it);
- stop: checkpoint (pause) if it still trains, download, ``destroy`` (workloads, bucket and, when it is the
  experiment's own, the cluster);
- status: the stack's outputs and last operation, and ``result.json``/``progress.jsonl`` in the bucket — never a
  local file that may be stale (only a stopped experiment, whose bucket is gone, is described by its download).

``run.json`` records ``backend: gke`` (so later commands pick this backend) and the shared cluster, if any.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tfcli.errors import InvalidInput, TfcliError
from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.status import Status, status_from
from tfcli.experiments.store import ExperimentDir, RunFolder
from tfcli.gke.automation import Stacks, StackState, planned_total
from tfcli.gke.events import UpdateObserver
from tfcli.gke.results import RemoteResults, remote_results
from tfcli.gke.stack_files import LOCATION_KEYS, SUSPEND_KEY, StackFile, experiment_stack, stack_path
from tfcli.locking import exclusive
from tfcli.project import ProjectDir

TRANSPORT_TOKEN_KEY = "tfcli:transportToken"  # secret: authenticates the distributed run's workers to the learner
POLL_SECONDS = 15.0  # how often --wait and pause read the bucket
PAUSE_TIMEOUT = 180.0  # the Jobs give the trainer 120 s to checkpoint after SIGTERM
FINAL = ("completed", "failed")


@dataclass(frozen=True)
class Deployment:
    """What ``start`` deployed: the stack's outputs (empty when there was nothing to do)."""

    outputs: dict[str, Any]
    shared_cluster: str | None
    nothing_to_run: bool = False
    result_generation: int | None = None  # result.json's generation before the update (``--wait`` waits for another)

    @property
    def own_cluster(self) -> bool:
        return self.shared_cluster is None


def require_gcp(project: ProjectDir) -> str:
    if not project.settings.gcp_project:
        raise TfcliError(
            "this project names no GCP project, so it cannot run on GKE",
            hint="set one with `tfcli init -r PROJECT_ID`, or run on this machine with --local",
        )
    return project.settings.gcp_project


def cluster_lock(project: ProjectDir, cluster: str, *, shared: bool = False) -> Any:
    """The lock of a shared cluster: exclusive for cluster commands, shared for experiments starting on it."""
    return exclusive(project.root / ".tfcli" / "clusters" / f"{cluster}.lock", f"cluster '{cluster}'", shared=shared)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def has_results(experiment: ExperimentDir) -> bool:
    return experiment.results.is_dir() and any(experiment.results.iterdir())


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


def _where(outputs: dict[str, Any]) -> str:
    shared = outputs.get("sharedClusterStack")
    return f"the shared cluster '{shared}'" if shared else "a cluster of its own"


def start(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    restart: bool = False,
    shared_cluster: str | None = None,
    observer: UpdateObserver | None = None,
    stacks: Stacks | None = None,
) -> Deployment:
    """Deploy (or update, or resume) the experiment's stack; returns once ``pulumi up`` is done."""
    require_gcp(project)
    stacks = stacks or Stacks(project)
    name = experiment.name
    record = experiment.run_record()
    spec = experiment.spec()
    if record.get("backend") == "local" and has_results(experiment) and not restart:
        raise TfcliError(
            f"experiment '{name}' has results of a run on this machine, which GKE cannot continue",
            hint="continue it here with --local, or start it over on GKE with --restart (deletes those results)",
        )
    planned = experiment_stack(project, spec, shared_cluster=shared_cluster)
    _validate(planned.config, name)
    current = stacks.state(name)
    generation = None
    if current.deployed:
        refuse_changes(project, current, planned.config, planned.shared_cluster, restart=restart)
        remote = remote_results(project, current.outputs)
        before = remote.result_blob()
        if before is not None and remote.result(before).get("status") == "completed":
            return Deployment(current.outputs, planned.shared_cluster, nothing_to_run=True)
        generation = None if before is None else before.generation
    elif restart:
        for folder in (experiment.results, experiment.logs):
            shutil.rmtree(folder, ignore_errors=True)
    elif record.get("backend") == "gke" and record.get("stopped") and has_results(experiment):
        raise TfcliError(
            f"experiment '{name}' was stopped: its bucket was destroyed after its results were downloaded to "
            f"experiments/{name}/results/, and GKE cannot continue from a local copy",
            hint="--restart trains it again from the start on GKE; --local continues it on this machine",
        )
    with contextlib.ExitStack() as held:
        hold_shared_cluster(held, project, stacks, planned.shared_cluster)
        planned.file.write()
        stack = stacks.stack(name, create=True)
        # Recorded before the update: if it fails half-way, status and stop still look at the stack.
        experiment.write_run_record(
            {"backend": "gke", "stack": name, "shared_cluster": planned.shared_cluster, "started_at": now()}
        )
        stacks.set_config(
            stack, {SUSPEND_KEY: "false"}, secrets={**stacks.credentials(), **_token(project, spec, name)}
        )
        outputs = stacks.up(stack, observer=observer, total=planned_total(planned.config, name))
    return Deployment(outputs, planned.shared_cluster, result_generation=generation)


def refuse_changes(
    project: ProjectDir,
    current: StackState,
    config: dict[str, Any],
    shared_cluster: str | None,
    *,
    restart: bool,
    kind: str = "experiment",
) -> None:
    """What a deployed stack (an experiment's or a sweep's) cannot take: another cluster, another GCP project or
    location (the update would replace the cluster and the bucket), or ``--restart``."""
    name = current.name
    stop = f"`tfcli experiment stop -{kind[0]} {name}`"
    deployed_on = current.outputs.get("sharedClusterStack")
    if deployed_on != shared_cluster:
        raise TfcliError(
            f"{kind} '{name}' runs on {_where(current.outputs)}; it cannot move while deployed",
            hint=f"{stop} first (downloads its results), then start it again",
        )
    deployed_file = StackFile.read(stack_path(project, name))
    moved = [
        key
        for key in ("gcp:project", *LOCATION_KEYS)
        if deployed_file is not None and deployed_file.config.get(key) != config.get(key)
    ]
    if moved:
        raise TfcliError(
            f"tfcli.yaml moved {kind} '{name}' ({', '.join(moved)}) while it is deployed: "
            "an update would replace its cluster and bucket",
            hint=f"{stop} first (downloads its results), or restore tfcli.yaml",
        )
    if restart:
        raise TfcliError(
            f"{kind} '{name}' is deployed; --restart starts over only from a stopped {kind}",
            hint=f"{stop} first (downloads its results, destroys the stack)",
        )


def hold_shared_cluster(
    held: contextlib.ExitStack, project: ProjectDir, stacks: Stacks, shared_cluster: str | None
) -> None:
    """Take the shared cluster's lock (shared) for the rest of ``held`` and check that the cluster is up."""
    if shared_cluster is None:
        return
    held.enter_context(cluster_lock(project, shared_cluster, shared=True))
    if not stacks.state(shared_cluster).deployed:
        raise TfcliError(
            f"the shared cluster '{shared_cluster}' is not up",
            hint=f"create it with `tfcli cluster create -f SPEC -c {shared_cluster}`",
        )


def _token(project: ProjectDir, spec: Any, stack: str) -> dict[str, str]:
    """A distributed experiment's transport token, made once (a new random one) and kept as a secret in its stack
    file, so `pulumi up -s NAME` without tfcli deploys the same one."""
    if spec.run_mode != "distributed":
        return {}
    stack_file = StackFile.read(stack_path(project, stack))
    if stack_file is not None and TRANSPORT_TOKEN_KEY in stack_file.config:
        return {}
    return {TRANSPORT_TOKEN_KEY: secrets.token_hex(32)}


def deployed_state(stacks: Stacks, folder: RunFolder) -> StackState:
    """The stack of an experiment (or a sweep) that must be deployed for what comes next."""
    state = stacks.state(folder.name)
    if not state.deployed:
        raise TfcliError(
            f"{folder.kind} '{folder.name}' is not deployed on GKE",
            hint=f"start it with `tfcli experiment start -{folder.kind[0]} {folder.name}`",
        )
    return state


_UNREAD = object()


def result_generation(remote: RemoteResults) -> int | None:
    """The generation of ``result.json`` now (None when there is none): a later result has another one."""
    blob = remote.result_blob()
    return None if blob is None else blob.generation


def wait_for_result(
    remote: RemoteResults,
    done: Callable[[dict[str, Any]], bool],
    *,
    initial: Any = _UNREAD,
    timeout: float | None,
    on_poll: Callable[[RemoteResults], None] | None = None,
    poll_seconds: float | None = None,
) -> dict[str, Any]:
    """Poll the bucket until a *new* ``result.json`` (another generation than ``initial``, read before the update
    that changed the run) satisfies ``done``. Returns the last result read ({} on timeout).
    """
    interval = POLL_SECONDS if poll_seconds is None else poll_seconds
    if initial is _UNREAD:
        initial = result_generation(remote)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        remote.poll()
        if on_poll is not None:
            on_poll(remote)
        blob = remote.result_blob()
        if blob is not None and blob.generation != initial:
            result = remote.result(blob)
            if done(result):
                return result
        if deadline is not None and time.monotonic() >= deadline:
            return {}
        time.sleep(interval)


def _total(project: ProjectDir, experiment: ExperimentDir) -> int | None:
    """The progress bar's estimate; an experiment whose spec no longer validates still pauses and stops."""
    try:
        return planned_total(experiment_stack(project, experiment.spec()).config, experiment.name)
    except TfcliError:
        return None


def pause(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    observer: UpdateObserver | None = None,
    stacks: Stacks | None = None,
    wait: bool = True,
) -> dict[str, Any]:
    """Suspend the Jobs (``tfcli:suspend: true``, ``up``) and wait for the trainer's checkpoint (``result.json``)."""
    stacks = stacks or Stacks(project)
    state = deployed_state(stacks, experiment)
    remote = remote_results(project, state.outputs)
    before = remote.result_blob()
    if state.outputs.get("suspended"):
        return remote.result(before) or {"status": "paused", "timesteps": 0}
    stack = stacks.stack(experiment.name)
    stacks.set_config(stack, {SUSPEND_KEY: "true"}, secrets=stacks.credentials())
    stacks.up(stack, observer=observer, total=_total(project, experiment))
    if not wait:
        return {"status": "pausing"}
    if before is None and not remote.poll():
        return {"status": "paused", "timesteps": 0}  # it never trained: there is nothing to checkpoint
    initial = None if before is None else before.generation
    result = wait_for_result(
        remote, lambda r: r.get("status") in ("paused", *FINAL), initial=initial, timeout=PAUSE_TIMEOUT
    )
    return result or {"status": "pausing", "timesteps": remote.progress.timesteps}


def stop(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    download: bool = True,
    observer: UpdateObserver | None = None,
    stacks: Stacks | None = None,
) -> Path | None:
    """Checkpoint (if it still trains), download, destroy the stack; returns where the results are (None when not
    downloaded). A stack with nothing in it is only marked stopped."""
    stacks = stacks or Stacks(project)
    name = experiment.name
    state = stacks.state(name)
    where: Path | None = None
    if state.deployed and download:
        remote = remote_results(project, state.outputs)
        if remote.result().get("status") not in FINAL and not state.outputs.get("suspended"):
            pause(experiment, project, observer=observer, stacks=stacks)
        where = download_results(experiment, project, outputs=state.outputs, remote=remote)
    elif not state.deployed and has_results(experiment):
        where = experiment.results  # downloaded by an earlier stop
    if state.may_have_resources:  # a failed update leaves resources (a cluster!) without outputs
        stacks.destroy(stacks.stack(name), observer=observer, total=_total(project, experiment))
    record = experiment.run_record()
    experiment.write_run_record({**record, "backend": "gke", "stopped": True, "stopped_at": now()})
    return where


def download_results(
    experiment: ExperimentDir,
    project: ProjectDir,
    *,
    outputs: dict[str, Any] | None = None,
    remote: RemoteResults | None = None,
    stacks: Stacks | None = None,
) -> Path:
    """Copy ``gs://<bucket>/<experiment>/`` to ``experiments/<name>/results/`` (only what changed)."""
    from tfcli.gke.download import download_prefix
    from tfcli.gke.results import gcs_errors

    if remote is None:
        if outputs is None:
            state = (stacks or Stacks(project)).state(experiment.name)
            if not state.deployed:
                if has_results(experiment) and experiment.run_record().get("stopped"):
                    return experiment.results  # downloaded when it was stopped; the bucket is gone
                raise TfcliError(
                    f"experiment '{experiment.name}' is not deployed on GKE, so it has no results bucket",
                    hint=f"start it with `tfcli experiment start -e {experiment.name}`",
                )
            outputs = state.outputs
        remote = remote_results(project, outputs)
    with gcs_errors(project, f"download gs://{remote.bucket}/{remote.prefix}/"):
        download_prefix(remote.client, remote.bucket, remote.prefix, experiment.results)
    return experiment.results


def _local_numbers(experiment: ExperimentDir) -> tuple[dict[str, Any], ProgressReader]:
    reader = ProgressReader(experiment.results / "progress.jsonl")
    reader.read()
    return experiment.result(), reader


def status(experiment: ExperimentDir, project: ProjectDir, *, stacks: Stacks | None = None) -> Status:
    """The experiment's state from its stack and its bucket."""
    stacks = stacks or Stacks(project)
    spec = experiment.spec_data()
    record = experiment.run_record()
    state = stacks.state(experiment.name)
    detail = ""
    if state.last_result == "failed":
        detail = f"the last pulumi {state.last_kind or 'update'} failed; run the command again to see why"
    if state.deployed:
        remote = remote_results(project, state.outputs)
        result = remote.result()
        remote.poll()
        reader = remote.progress
        reported = result.get("status")
        suspended = bool(state.outputs.get("suspended"))
        if reported in FINAL:
            current = str(reported)
        elif reported == "paused" and str(result.get("reason", "")).startswith("max_cost"):
            current = "paused"  # the trainer paused itself at max_cost; its Job has ended
            detail = str(result["reason"])
        elif suspended:
            current = "paused" if reported == "paused" else "pausing"
        else:
            current = "running"
        if current == "failed" and result.get("error"):
            detail = str(result["error"])
    else:
        result, reader = _local_numbers(experiment)
        if state.last_result == "in-progress":
            current = "deploying" if state.last_kind == "update" else "destroying"
        elif record.get("stopped") or state.last_kind == "destroy":
            current = "stopped"
        elif state.last_result == "failed":
            current = "failed"
        else:
            current = "new"
    final = current in ("completed", "failed", "paused", "stopped") and bool(result)
    current_status = status_from(
        experiment.name,
        spec,
        backend="gke",
        state=current,
        result=result,
        reader=reader,
        final=final,
        detail=detail,
    )
    if not state.deployed:
        return current_status
    from tfcli.gke.watch import observe

    return observe(current_status, state.outputs, project, spec)
