"""Shared clusters: long-lived GKE clusters, each its own Pulumi stack (``tfcli:cluster``), that experiments run on
with ``tfcli experiment start -c NAME`` (their stacks read the cluster's outputs through a StackReference).

One command per cluster at a time (``.tfcli/clusters/<name>.lock``; experiments starting on it hold it shared).
A cluster in use by a deployed experiment is never deleted. One with a ``ttl`` is destroyed by ``experiment reap``
once it is idle past it (:func:`reap_clusters`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tfcli.experiments.store import ExperimentStore, checked_flag
from tfcli.gke.deploy import cluster_lock
from tfcli.gke.events import UpdateObserver
from tfcli.gke.gcp_project import require_gcp
from tfcli.gke.pulumi_cli import PulumiMissing
from tfcli.gke.stacks import Stacks, StackState, has_no_state, planned_total
from tfcli.project import ProjectDir
from tfcli.runs.reaping import Reaped, cluster_reap_reason
from tfcli.stackfiles.files import (
    CLUSTER_KEY,
    StackFile,
    cluster_names,
    cluster_spec,
    cluster_stack,
    experiments_on,
    stack_path,
    unknown_cluster,
)
from trainer.kernel.errors import InvalidInput, TfcliError


@dataclass(frozen=True)
class Created:
    name: str
    outputs: dict[str, Any]
    usd_per_hour: float | None


@dataclass(frozen=True)
class ClusterInfo:
    """One row of ``cluster list``."""

    name: str
    location: str
    nodes: str
    gpus: str
    spot: bool
    status: str
    usd_per_hour: float | None
    experiments: list[str] = field(default_factory=list)
    detail: str = ""

    def as_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _validated(stack_file: StackFile) -> Any:
    from infra.stack_config import settings_from_config

    return settings_from_config(stack_file.config, stack=stack_file.stack)


def _cost(stack_file: StackFile) -> float | None:
    try:
        from infra.plan import plan_stack

        return plan_stack(stack_file.config, stack=stack_file.stack).cost.usd_per_hour
    except Exception:  # an estimate for a listing: never a reason to fail
        return None


def create_cluster(
    store: ExperimentStore,
    source: str | None,
    overrides: dict[str, Any],
    *,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
) -> Created:
    """Resolve the cluster spec (flags override the file; no file: flags alone), write its stack file and
    ``pulumi up`` it."""
    from trainer.kernel.spec import ConfigLibrary, load_cluster, to_data
    from trainer.kernel.spec.loader import cluster_from_flags

    project = store.project
    if overrides.get("name") is not None:
        checked_flag(overrides["name"], "--cluster")
    if source is None:
        cluster = cluster_from_flags(overrides)
    else:
        cluster = load_cluster(source, library=ConfigLibrary.for_project(project.root), overrides=overrides).spec
    if store.dir(cluster.name).exists():
        raise InvalidInput(
            f"--cluster: '{cluster.name}' is the name of an experiment; stacks share one namespace",
            hint="name the cluster differently with -c",
        )
    require_gcp(project)
    with cluster_lock(project, cluster.name):
        existing = StackFile.read(stack_path(project, cluster.name))
        stack_file = cluster_stack(project, cluster)
        changed = existing is not None and existing.config.get(CLUSTER_KEY) != to_data(cluster)
        if changed and stacks.state(cluster.name).deployed:
            raise TfcliError(
                f"cluster '{cluster.name}' exists with a different spec",
                hint=f"delete it first (`tfcli cluster delete -c {cluster.name}`), or pick another name with -c",
            )
        _validated(stack_file)
        stack_file.write()
        try:
            stack = stacks.stack(cluster.name, create=True)
        except BaseException:  # no stack in Pulumi (no CLI, no backend): a first create leaves no file either
            if existing is None:
                stack_file.path.unlink(missing_ok=True)
            raise
        if secrets := stacks.credentials():
            stacks.set_config(stack, {}, secrets=secrets)
        outputs = stacks.up(stack, observer=observer, total=planned_total(stack_file.config, cluster.name))
    return Created(cluster.name, outputs, _cost(stack_file))


def _status(stacks: Stacks, name: str) -> tuple[str, str]:
    try:
        state = stacks.state(name)
    except TfcliError as error:
        return "unknown", error.message.splitlines()[0]
    if state.last_result == "in-progress":
        return ("creating" if state.last_kind == "update" else "deleting"), ""
    if state.deployed:
        return ("up" if state.last_result != "failed" else "up (last update failed)"), ""
    if not state.exists:
        return "not created", ""
    return ("failed" if state.last_result == "failed" else "down"), ""


def list_clusters(project: ProjectDir, *, stacks: Stacks) -> list[ClusterInfo]:
    """Every shared cluster of the project, with its shape, status (from its stack) and hourly cost."""
    rows = []
    for name in cluster_names(project):
        stack_file = StackFile.read(stack_path(project, name))
        assert stack_file is not None
        spec = cluster_spec(project, name)
        try:
            location = _validated(stack_file).location
        except InvalidInput:
            location = spec.location or project.settings.location
        nodes = str(spec.num_nodes)
        if (spec.min_nodes, spec.max_nodes) != (spec.num_nodes, spec.num_nodes):
            nodes += f" ({spec.min_nodes}..{spec.max_nodes})"
        gpus = f"{spec.gpus_per_node} x {spec.gpu_type}" if spec.gpus_per_node else "-"
        status, detail = _status(stacks, name)
        rows.append(
            ClusterInfo(
                name=name,
                location=location,
                nodes=nodes,
                gpus=gpus,
                spot=spec.spot,
                status=status,
                usd_per_hour=_cost(stack_file),
                experiments=experiments_on(project, name),
                detail=detail,
            )
        )
    return rows


def delete_clusters(
    store: ExperimentStore,
    names: list[str],
    *,
    observer: UpdateObserver | None = None,
    stacks: Stacks,
) -> list[str]:
    """Destroy and remove the stacks of these shared clusters; refused while a deployed experiment runs on one."""
    project = store.project
    known = cluster_names(project)
    for name in names:
        checked_flag(name, "--cluster")
        if name not in known:
            raise unknown_cluster(project, name)
    in_use = {
        name: users
        for name in names
        if (users := [e for e in experiments_on(project, name) if stacks.state(e).deployed])
    }
    if in_use:
        lines = [f"'{name}' runs {', '.join(users)}" for name, users in in_use.items()]
        raise TfcliError(
            "cannot delete a cluster experiments run on: " + "; ".join(lines),
            hint="stop them first: "
            + ", ".join(
                f"`tfcli experiment stop -{_flag(project, u)} {u}`" for users in in_use.values() for u in users
            ),
        )
    deleted = []
    for name in names:
        with cluster_lock(project, name):
            try:
                state = stacks.state(name)
            except PulumiMissing:
                if not has_no_state(project, name):
                    raise
                state = StackState(name, exists=False, outputs={})  # never created: only its file to remove
            if state.exists:
                stack = stacks.stack(name)
                stacks.destroy(stack, observer=observer, total=planned_total(_config(project, name), name))
                stacks.remove(stack)
            stack_path(project, name).unlink(missing_ok=True)
        deleted.append(name)
    return deleted


def reap_clusters(
    store: ExperimentStore, *, stacks: Stacks, now: datetime, observer: UpdateObserver | None = None
) -> list[Reaped]:
    """Destroy every deployed shared cluster with a ``ttl`` that nothing deployed runs on and whose stack has been up
    past it since its last update (:func:`tfcli.runs.reaping.cluster_reap_reason`), as ``cluster delete`` does; one
    that cannot be read or destroyed is reported and the others still reaped."""
    project = store.project
    reaped = []
    for name in cluster_names(project):
        try:
            ttl = cluster_spec(project, name).ttl
            state = stacks.state(name) if ttl is not None else None
            if ttl is None or state is None or not state.deployed:
                continue
            users = [user for user in experiments_on(project, name) if stacks.state(user).deployed]
            reason = cluster_reap_reason(users, last_update_ended=state.last_ended, ttl_seconds=ttl.seconds, now=now)
            if reason is not None:
                delete_clusters(store, [name], observer=observer, stacks=stacks)
                reaped.append(Reaped(name, reason, "destroyed (cluster delete)"))
        except TfcliError as error:
            reaped.append(Reaped(name, "could not be reaped", error=error.message.splitlines()[0]))
    return reaped


def _flag(project: ProjectDir, name: str) -> str:
    """``s`` for a sweep's stack, ``e`` for an experiment's: how ``experiment stop`` names it."""
    stack_file = StackFile.read(stack_path(project, name))
    return "s" if stack_file is not None and stack_file.kind == "sweep" else "e"


def _config(project: ProjectDir, name: str) -> dict[str, Any]:
    stack_file = StackFile.read(stack_path(project, name))
    return stack_file.config if stack_file is not None else {}
