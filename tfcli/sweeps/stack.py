"""A sweep's stack file ``stacks/Pulumi.<sweep>.yaml`` (``tfcli:sweep``: the stored sweep definition) and its offline
plan: the resources ``pulumi up -s SWEEP`` declares and what they cost (:mod:`infra.sweep_program`).

Written when the sweep is created, as an experiment's is, so the sweep deploys without tfcli; the trials get no stack
files of their own. Without a GCP project the placeholder project stands in and the file says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tfcli.errors import InvalidInput
from tfcli.gke.stack_files import (
    PLACEHOLDER_PROJECT,
    SHARED_KEY,
    SWEEP_KEY,
    StackFile,
    _location_arguments,
    _new_file,
    _update_project,
    stack_path,
)
from tfcli.project import ProjectDir
from tfcli.spec.documents import display_path
from tfcli.sweeps.model import SweepFile

if TYPE_CHECKING:
    from infra.plan import Plan

SUSPEND_KEY = "tfcli:suspend"
PARALLELISM_KEY = "tfcli:parallelism"


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
        _update_project(existing, project)
        return existing
    location = _location_arguments(project)
    config: dict[str, Any] = {"gcp:project": location["project"], "gcp:region": location["region"]}
    if location["zone"]:
        config["gcp:zone"] = location["zone"]
    config[SUSPEND_KEY] = False
    config[SWEEP_KEY] = sweep.model_dump(mode="json")
    header = [
        f"# The sweep {sweep.name} (tfcli experiment sweep): one Indexed Job, one pod per trial.",
        f"# `pulumi up -s {sweep.name}` deploys it; tfcli:parallelism sets the trials at a time.",
    ]
    return _new_file(path, project, header, config)


def deploy_stack(
    project: ProjectDir, sweep: SweepFile, *, shared_cluster: str | None = None, parallelism: int | None = None
) -> tuple[StackFile, str | None]:
    """The sweep's stack file as ``start -s`` deploys it (not written) and the shared cluster it runs on (None: its
    own). ``shared_cluster`` moves it onto that cluster; without it the file's choice is kept while that cluster's
    stack file exists. ``parallelism`` sets ``tfcli:parallelism``; without it the file's value (or the default,
    what the learner pool holds) stays."""
    stack_file = sweep_stack(project, sweep)
    config = stack_file.config
    shared = shared_cluster
    if shared is None and (kept := config.get(SHARED_KEY)) and StackFile.read(stack_path(project, str(kept))):
        shared = str(kept)
    if shared is not None:
        config[SHARED_KEY] = shared
    else:
        config.pop(SHARED_KEY, None)
    if parallelism is not None:
        config[PARALLELISM_KEY] = parallelism
    return stack_file, shared


@dataclass(frozen=True)
class SweepPlanTarget:
    """What ``plan -s`` shows above the resources (the placeholder project note)."""

    name: str
    placeholder: bool

    def note(self) -> str | None:
        if not self.placeholder:
            return None
        return (
            f"GCP project: the placeholder '{PLACEHOLDER_PROJECT}' (tfcli.yaml names none); names, images and "
            "accounts use it. Set one with `tfcli init -r PROJECT_ID` before deploying."
        )


def plan_sweep_stack(
    project: ProjectDir, sweep: SweepFile, *, shared_cluster: str | None = None
) -> tuple[SweepPlanTarget, Plan]:
    from infra.plan import plan_stack
    from infra.sweep_config import sweep_settings_from_config

    config = dict(sweep_stack(project, sweep).config)
    if shared_cluster:
        config["tfcli:sharedClusterStack"] = shared_cluster
    sweep_settings_from_config(config, stack=sweep.name)  # every mistake before Pulumi runs, exit code 2
    target = SweepPlanTarget(sweep.name, config.get("gcp:project") == PLACEHOLDER_PROJECT)
    return target, plan_stack(config, stack=sweep.name)
