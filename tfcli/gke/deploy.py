"""What every GKE run (an experiment's stack or a sweep's) does the same way: deploy, suspend, tear down.

- deploy, in the order a first deploy needs: the stack file, ``stack init`` with its secrets provider, the run
  records written *before* the update (if it fails half-way, ``status`` and ``stop`` still look at the stack), config
  (``tfcli:suspend`` false) and secrets (the key as ``gcp:credentials`` with ``credentials: key-file``, a distributed
  run's ``tfcli:transportToken``) piped one by one to ``config set --secret``, the plain values in one
  ``config set-all``, then ``pulumi up``;
- suspend (pause): ``tfcli:suspend`` true and ``up``: the Jobs' ``suspend``; the trainer checkpoints on SIGTERM;
- tear down (stop): ``destroy`` when the stack may hold resources, then every run record marked stopped.

A deployed stack refuses what would replace its cluster or bucket (:func:`refuse_changes`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tfcli.experiments.record import RunRecord
from tfcli.experiments.store import ExperimentDir, RunFolder
from tfcli.gke import waiting
from tfcli.gke.events import UpdateObserver
from tfcli.gke.handle import GkeHandle, gke_of
from tfcli.gke.image_stack import ensure_images, wanted_image_stack
from tfcli.gke.results import RemoteResults
from tfcli.gke.stacks import Stacks, StackState, planned_total
from tfcli.locking import exclusive
from tfcli.project import ProjectDir
from tfcli.runs import registry
from tfcli.stackfiles.files import StackFile, stack_path
from trainer.kernel.config_keys import LOCATION_KEYS, RERUN_KEY, SUSPEND_KEY
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec.documents import display_path


def cluster_lock(project: ProjectDir, cluster: str, *, shared: bool = False) -> Any:
    """The lock of a shared cluster: exclusive for cluster commands, shared for runs starting on it."""
    return exclusive(project.root / ".tfcli" / "clusters" / f"{cluster}.lock", f"cluster '{cluster}'", shared=shared)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def has_results(experiment: ExperimentDir) -> bool:
    return experiment.results.is_dir() and any(experiment.results.iterdir())


def where(outputs: dict[str, Any]) -> str:
    shared = outputs.get("sharedClusterStack")
    return f"the shared cluster '{shared}'" if shared else "a cluster of its own"


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
    if current.outputs.get("sharedClusterStack") != shared_cluster:
        raise TfcliError(
            f"{kind} '{name}' runs on {where(current.outputs)}; it cannot move while deployed",
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
    refuse_rollback(project, current, config)
    if restart:
        raise TfcliError(
            f"{kind} '{name}' is deployed; --restart starts over only from a stopped {kind}",
            hint=f"{stop} first (downloads its results, destroys the stack)",
        )


def refuse_rollback(project: ProjectDir, current: StackState, config: dict[str, Any]) -> None:
    """A ``tfcli:rerun`` below the deployed sweep's (its ``rerun`` output) is a stack file from before a resume made
    a new Job — an older checkout's: its Job would run again what that resume left as it ended. Exit 2."""
    wanted, deployed = int(config.get(RERUN_KEY) or 0), int(current.outputs.get("rerun") or 0)
    if wanted < deployed:
        raise InvalidInput(
            f"{display_path(stack_path(project, current.name))}: {RERUN_KEY}: {wanted} is below the deployed "
            f"sweep's {deployed}: this stack file is older than the deployed sweep (another checkout's?) and would "
            "roll its Job back",
            hint=f"use the stack file the sweep was last deployed with ({RERUN_KEY}: {deployed})",
        )


def refuse_stopped(folder: RunFolder, members: list[ExperimentDir], *, restart: bool) -> None:
    """A stopped run's bucket is gone; GKE cannot continue from the local copy its stop downloaded."""
    record = folder.run_record()
    if restart or not (record.backend == GkeHandle.KEY and record.stopped and any(map(has_results, members))):
        return
    what = (
        f"experiment '{folder.name}' was stopped: its bucket was destroyed after its results were downloaded to "
        f"experiments/{folder.name}/results/"
        if folder.kind == "experiment"
        else f"sweep '{folder.name}' was stopped: its bucket was destroyed after its trials' results were downloaded"
    )
    raise TfcliError(
        f"{what}, and GKE cannot continue from a local copy",
        hint=f"--restart {'trains' if folder.kind == 'experiment' else 'runs'} it again from the start on GKE; --local "
        "continues it on this machine",
    )


def left_here(member: ExperimentDir) -> bool:
    """Whether the member has results on this machine that another backend left there (:func:`registry.results_here`:
    one that does not keep its runs, as ``local``; or one that did until its stop): GKE's own stopped runs are
    :func:`refuse_stopped`'s."""
    record = member.run_record()
    return record.backend != GkeHandle.KEY and registry.results_here(record) and has_results(member)


def refuse_local_results(folder: RunFolder, members: list[ExperimentDir], *, restart: bool) -> None:
    """Results of a run on this machine, whichever backend other than GKE left them there: GKE cannot continue them
    (``--restart`` deletes them); the hint names the flag of the backend that can (``--local``)."""
    local = [m for m in members if left_here(m)]
    if not local or restart:
        return
    flag = registry.flag(str(local[0].run_record().backend))
    if folder.kind == "experiment":
        raise TfcliError(
            f"experiment '{folder.name}' has results of a run on this machine, which GKE cannot continue",
            hint=f"continue it where it ran with {flag}, or start it over on GKE with --restart (deletes those "
            "results)",
        )
    raise TfcliError(
        f"trials of sweep '{folder.name}' have results of runs on this machine "
        f"({', '.join(m.name for m in local[:3])}), which GKE cannot continue",
        hint=f"continue the sweep where it ran with {flag}, or start it over on GKE with --restart (deletes those "
        "results)",
    )


def clear(*members: ExperimentDir) -> None:
    """``--restart``: the members' results, logs and run records go."""
    for experiment in members:
        shutil.rmtree(experiment.results, ignore_errors=True)
        shutil.rmtree(experiment.logs, ignore_errors=True)
        experiment.run_file.unlink(missing_ok=True)


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


def deployed_state(stacks: Stacks, folder: RunFolder) -> StackState:
    """The stack of an experiment (or a sweep) that must be deployed for what comes next."""
    state = stacks.state(folder.name)
    if not state.deployed:
        raise TfcliError(
            f"{folder.kind} '{folder.name}' is not deployed on GKE",
            hint=f"start it with `tfcli experiment start -{folder.kind[0]} {folder.name}`",
        )
    return state


def deploy(
    stacks: Stacks,
    stack_file: StackFile,
    *,
    shared_cluster: str | None,
    records: dict[RunFolder, RunRecord],
    secrets: dict[str, str] | None = None,
    observer: UpdateObserver | None = None,
) -> dict[str, Any]:
    """Write the stack file and ``records``, init the stack, set its config and secrets, ``pulumi up``; returns
    the stack's outputs."""
    name = stack_file.path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    if (images := wanted_image_stack(stack_file.config)) is not None:  # the trainer built first, once per change
        ensure_images(stacks, images, observer=observer, prompt=stacks.build_prompt)
    with contextlib.ExitStack() as held:
        hold_shared_cluster(held, stacks.project, stacks, shared_cluster)
        stack_file.write()
        stack = stacks.stack(name, create=True)
        for folder, record in records.items():
            folder.write_run_record(record)
        stacks.set_config(stack, {SUSPEND_KEY: "false"}, secrets={**stacks.credentials(), **(secrets or {})})
        return stacks.up(stack, observer=observer, total=planned_total(stack_file.config, name))


@dataclass(frozen=True)
class StackStart:
    """What starting a run's stack takes that differs between an experiment's and a sweep's: the run's folder and
    the experiments it trains, the stack file to deploy, the run records to write and the secrets to set."""

    folder: RunFolder
    members: list[ExperimentDir]
    stack_file: StackFile
    shared_cluster: str | None
    records: dict[RunFolder, RunRecord]
    secrets: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Deployment:
    """What starting a stack did: its outputs, the shared cluster it runs on (None: its own), nothing at all when
    every member had completed."""

    outputs: dict[str, Any]
    shared_cluster: str | None
    nothing_to_run: bool = False
    result_generation: int | None = None  # an experiment's result.json before the update (``--wait`` waits for another)

    @property
    def own_cluster(self) -> bool:
        return self.shared_cluster is None


def start_stack(
    stacks: Stacks,
    start: StackStart,
    *,
    restart: bool,
    completed: Callable[[dict[str, Any]], tuple[bool, int | None]],
    observer: UpdateObserver | None,
) -> Deployment:
    """Deploy a run's stack, or update a deployed one, or resume it: ``completed`` says, from a deployed stack's
    outputs, whether every member has completed (then nothing is done) and the ``result.json`` generation to wait
    past. A deployed stack refuses moves and ``--restart``; a stopped one continues only with ``--restart``."""
    folder, members = start.folder, start.members
    current = stacks.state(folder.name)
    generation = None
    if current.deployed:
        refuse_changes(
            stacks.project, current, start.stack_file.config, start.shared_cluster, restart=restart, kind=folder.kind
        )
        done, generation = completed(current.outputs)
        if done:
            return Deployment(current.outputs, start.shared_cluster, nothing_to_run=True)
    elif restart:
        clear(*members)
    refuse_stopped(folder, members, restart=restart)
    outputs = deploy(
        stacks,
        start.stack_file,
        shared_cluster=start.shared_cluster,
        records=start.records,
        secrets=start.secrets,
        observer=observer,
    )
    return Deployment(outputs, start.shared_cluster, result_generation=generation)


def suspend_and_wait(
    stacks: Stacks, name: str, running: list[RemoteResults], *, observer: UpdateObserver | None, wait: bool
) -> list[dict[str, Any] | None]:
    """Suspend the stack's Jobs and wait (``PAUSE_TIMEOUT`` in all) for a checkpoint of each run that was running:
    a *new* ``result.json`` (another generation than before the update). Returns each one's last result: {} when
    not waited for or not answered in time, None when it never trained (there is nothing to checkpoint)."""
    before = [waiting.result_generation(remote) for remote in running]
    suspend(stacks, name, observer=observer)
    deadline = time.monotonic() + waiting.PAUSE_TIMEOUT
    results: list[dict[str, Any] | None] = []
    for remote, generation in zip(running, before, strict=True):
        if not wait:
            results.append({})
            continue
        if generation is None and not remote.poll():
            results.append(None)
            continue
        remaining = max(0.0, deadline - time.monotonic())
        results.append(waiting.wait_for_result(remote, waiting.checkpointed, initial=generation, timeout=remaining))
    return results


def stack_total(stacks: Stacks, name: str) -> int | None:
    """The progress bar's estimate from the deployed stack file; a run whose spec no longer validates still pauses
    and stops."""
    stack_file = StackFile.read(stack_path(stacks.project, name))
    return None if stack_file is None else planned_total(stack_file.config, name)


def suspend(stacks: Stacks, name: str, *, observer: UpdateObserver | None) -> None:
    """``tfcli:suspend`` true and ``up``: the Jobs stop their pods, each trainer checkpoints on SIGTERM."""
    stack = stacks.stack(name)
    stacks.set_config(stack, {SUSPEND_KEY: "true"}, secrets=stacks.credentials())
    stacks.up(stack, observer=observer, total=stack_total(stacks, name))


def tear_down(stacks: Stacks, state: StackState, *, observer: UpdateObserver | None) -> None:
    """``destroy`` the stack when it may hold resources (a failed update leaves some, a cluster even, without
    outputs)."""
    if state.may_have_resources:
        stacks.destroy(stacks.stack(state.name), observer=observer, total=stack_total(stacks, state.name))


def mark_stopped(folder: RunFolder, stopped_at: str, **gke: str) -> None:
    """The folder's run stopped for good on GKE (its stack destroyed), with ``gke``'s fields of its handle."""
    record = folder.run_record()
    handle = dataclasses.replace(gke_of(record), **gke)
    folder.write_run_record(record.but(backend=GkeHandle.KEY, stopped=True, stopped_at=stopped_at).with_handle(handle))
