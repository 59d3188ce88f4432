"""A sweep's stack file ``stacks/Pulumi.<sweep>.yaml`` (``tfcli:sweep``: the stored sweep definition) and its offline
deployment: what ``start -s`` hands to Pulumi (:mod:`infra.sweep_program` reads it).

Written when the sweep is created, as an experiment's is, so the sweep deploys without tfcli; the trials get no stack
files of their own. Without a GCP project the placeholder project stands in and the file says so.
"""

from __future__ import annotations

from typing import Any

from tfcli.project import ProjectDir
from tfcli.stackfiles.files import (
    SUSPEND_KEY,
    SWEEP_KEY,
    StackFile,
    location_arguments,
    new_file,
    set_project_code,
    set_shared_cluster,
    shared_cluster_of,
    stack_path,
    update_project,
)
from trainer.kernel.config_keys import PARALLELISM_KEY, PROJECT_KEY, REGION_KEY, ZONE_KEY
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.documents import display_path
from trainer.kernel.spec.parallel import resolved_parallel
from trainer.kernel.spec.sweep import SweepFile


def sweep_stack(project: ProjectDir, sweep: SweepFile) -> StackFile:
    """The sweep's stack file with its current definition (not yet written)."""
    path = stack_path(project, sweep.name)
    existing = StackFile.read(path)
    if existing is not None and existing.kind not in ("sweep", "other"):
        raise InvalidInput(
            f"{display_path(path)} is the stack of {existing.kind} '{sweep.name}'; a sweep cannot have the same name",
            hint="pick another name with -n",
        )
    if existing is not None and existing.kind == "sweep":
        existing.config[SWEEP_KEY] = sweep.model_dump(mode="json")
        update_project(existing, project)
        set_project_code(existing.config, project)
        return existing
    location = location_arguments(project)
    config: dict[str, Any] = {PROJECT_KEY: location["project"], REGION_KEY: location["region"]}
    if location["zone"]:
        config[ZONE_KEY] = location["zone"]
    config[SUSPEND_KEY] = False
    config[SWEEP_KEY] = sweep.model_dump(mode="json")
    header = [
        f"# The sweep {sweep.name} (tfcli experiment sweep): one Indexed Job, one pod per trial.",
        f"# `pulumi up -s {sweep.name}` deploys it; trials at a time: tfcli:parallelism, else the sweep's parallel.",
    ]
    set_project_code(config, project)
    return new_file(path, project, header, config)


def deploy_stack(
    project: ProjectDir, sweep: SweepFile, *, shared_cluster: str | None = None, parallelism: int | None = None
) -> tuple[StackFile, str | None]:
    """The sweep's stack file as ``start -s`` deploys it (not written) and the shared cluster it runs on (None: its
    own). ``shared_cluster`` moves it onto that cluster; without it the file's choice is kept while that cluster's
    stack file exists. ``tfcli:parallelism`` is set to the trials at a time in effect, ``parallelism`` (the flag)
    over the sweep's ``parallel`` (:func:`trainer.kernel.spec.parallel.resolved_parallel`, as locally); when neither
    says, the stack file's value stays (one a user set, or the default: what the learner pool holds)."""
    stack_file = sweep_stack(project, sweep)
    config = stack_file.config
    shared = shared_cluster_of(project, stack_file, shared_cluster)
    set_shared_cluster(config, shared)
    chosen = resolved_parallel(parallelism, sweep.parallel, file=f"experiments/{sweep.name}/sweep.yaml")
    if chosen is not None:
        config[PARALLELISM_KEY] = chosen
    return stack_file, shared
