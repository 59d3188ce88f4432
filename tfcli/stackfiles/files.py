"""A project's stack files, ``stacks/Pulumi.<stack>.yaml``: written by tfcli, read by Pulumi (and by people).

One file per experiment (``tfcli:experiment``) and one per shared cluster (``tfcli:cluster``); the keys are those
:mod:`infra.stack_config` reads, built by :mod:`infra.stack_files`. A stack file is shared with Pulumi, which adds
its own entries (``encryptionsalt``, secret values such as ``gcp:credentials``, anything set with ``pulumi config
set``), so tfcli updates only the keys it owns and keeps everything else, comments at the top included:

- ``tfcli:experiment`` (or ``tfcli:cluster``): the fully resolved spec; an experiment on a shared cluster carries
  that cluster's spec as its ``cluster``, so the learner is sized for the nodes it runs on;
- ``tfcli:sharedClusterStack``: the shared cluster the experiment runs on (kept until ``start -c`` changes it);
- ``gcp:project`` and ``gcp:region``/``gcp:zone``: from ``tfcli.yaml`` when it names a GCP project;
- ``tfcli:code``: the project's code folders the pods import (``code:`` in tfcli.yaml, default ``envs``), and
  ``tfcli:image`` when tfcli.yaml names an image (else a value set here is kept); else, with a GCP project and the
  trainer's source at hand (a checkout or an editable install), ``tfcli:imageStack``: the project's image stack,
  whose trainer built from this source the Jobs pull.

Without a GCP project (a project that trains on this machine only) the file is still written, with the
placeholder project :data:`PLACEHOLDER_PROJECT` and a comment saying so, so that ``plan``/``render`` work offline and
``pulumi up -s NAME`` fails with a clear message rather than deploying somewhere unexpected. ``tfcli experiment
start`` on GKE rewrites it with the real project. Nothing here imports Pulumi or talks to the cloud.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tfcli.project import ProjectDir
from trainer.kernel.config_keys import (
    CLUSTER_KEY,
    CODE_KEY,
    EXPERIMENT_KEY,
    IMAGE_KEY,
    IMAGE_STACK_KEY,
    LOCATION_KEYS,
    PROJECT_KEY,
    REGION_KEY,
    SHARED_CLUSTER_STACK_KEY,
    SUSPEND_KEY,
    SWEEP_KEY,
    ZONE_KEY,
)
from trainer.kernel.errors import InvalidInput
from trainer.kernel.files import atomic_write_text
from trainer.kernel.spec.documents import display_path, parse, read_text
from trainer.kernel.spec.suggest import did_you_mean

if TYPE_CHECKING:
    from trainer.kernel.spec import Cluster, Experiment

# A stack file holds resolved specs (a sweep's every trial, within the 1 MiB ConfigMap limit) and is never bigger.
MAX_STACK_FILE_BYTES = 16 * 1024 * 1024
PLACEHOLDER_PROJECT = "my-gcp-project"  # infra.stack_files.EXAMPLE_PROJECT: the committed examples use it too
PLACEHOLDER_NOTE = (
    "gcp:project is a placeholder: set gcp_project in tfcli.yaml (tfcli init -r PROJECT_ID), or here, "
    "before `pulumi up`."
)


def stack_path(project: ProjectDir, stack: str) -> Path:
    return project.stacks / f"Pulumi.{stack}.yaml"


@dataclass
class StackFile:
    """One ``Pulumi.<stack>.yaml``: its leading comment lines and its top-level mapping (``config:`` and Pulumi's)."""

    path: Path
    header: list[str] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)

    @property
    def stack(self) -> str:
        return self.path.name.removeprefix("Pulumi.").rsplit(".", 1)[0]

    @property
    def config(self) -> dict[str, Any]:
        config = self.document.setdefault("config", {})
        if not isinstance(config, dict):
            raise InvalidInput(f"{display_path(self.path)}: config: expected a mapping")
        return config

    @property
    def kind(self) -> str:
        """``experiment``, ``cluster``, ``sweep`` or ``other`` (a stack tfcli did not write)."""
        config = self.document.get("config")
        if isinstance(config, dict) and EXPERIMENT_KEY in config:
            return "experiment"
        if isinstance(config, dict) and CLUSTER_KEY in config:
            return "cluster"
        if isinstance(config, dict) and SWEEP_KEY in config:
            return "sweep"
        return "other"

    @classmethod
    def read(cls, path: Path) -> StackFile | None:
        """The file, or None when there is none; a file that is not readable YAML text (binary, oversized, hostile)
        is an ``InvalidInput`` naming it."""
        if not path.exists():
            return None
        shown = display_path(path)
        text = read_text(path, shown, limit=MAX_STACK_FILE_BYTES)
        data = parse(text, shown, as_json=False) or {}
        if not isinstance(data, dict):
            raise InvalidInput(f"{shown}: expected a mapping with a 'config:' key")
        header = []
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            header.append(line)
        return cls(path, header, data)

    def text(self) -> str:
        body = yaml.safe_dump(self.document, sort_keys=False, default_flow_style=False, width=120)
        return "".join(f"{line}\n" for line in self.header) + body

    def write(self) -> bool:
        """Write the file when its text changed; True when it did."""
        text = self.text()
        try:
            if self.path.read_text(encoding="utf-8") == text:
                return False
        except FileNotFoundError:
            pass
        atomic_write_text(self.path, text)
        return True


def location_config(location: str) -> dict[str, str]:
    """``gcp:region`` (and ``gcp:zone`` for a zone) for a region or zone from ``tfcli.yaml``."""
    from infra.naming import is_zone, region_of

    return {REGION_KEY: region_of(location), ZONE_KEY: location} if is_zone(location) else {REGION_KEY: location}


def location_arguments(project: ProjectDir) -> dict[str, Any]:
    """``project``, ``region`` and ``zone`` for :mod:`infra.stack_files`' builders, from ``tfcli.yaml``."""
    location = location_config(project.settings.location)
    return {
        "project": project.settings.gcp_project or PLACEHOLDER_PROJECT,
        "region": location[REGION_KEY],
        "zone": location.get(ZONE_KEY),
    }


def new_file(path: Path, project: ProjectDir, header: list[str], config: dict[str, Any]) -> StackFile:
    if not project.settings.gcp_project:
        header = [*header, f"# {PLACEHOLDER_NOTE}"]
    return StackFile(path, header, {"config": config})


def update_project(stack_file: StackFile, project: ProjectDir) -> None:
    """An existing file: the gcp: keys follow tfcli.yaml once it names a GCP project; until then they are kept."""
    config = stack_file.config
    settings = project.settings
    if not settings.gcp_project:
        config.setdefault(PROJECT_KEY, PLACEHOLDER_PROJECT)
        return
    config[PROJECT_KEY] = settings.gcp_project
    wanted = location_config(settings.location)
    for key in LOCATION_KEYS:
        if key in wanted:
            config[key] = wanted[key]
        else:
            config.pop(key, None)
    note = f"# {PLACEHOLDER_NOTE}"
    if note in stack_file.header:
        stack_file.header.remove(note)


def set_project_code(config: dict[str, Any], project: ProjectDir) -> None:
    """A run's ``tfcli:code`` (its project's code folders, read at ``up``) and ``tfcli:image`` from tfcli.yaml."""
    folders = project.code_folders()
    if folders:
        config[CODE_KEY] = folders
    else:
        config.pop(CODE_KEY, None)
    ready = project.settings.image if isinstance(project.settings.image, str) else None  # else a layer of packages
    if ready:
        config[IMAGE_KEY] = ready
    from infra.image_context import has_source

    if ready or not project.settings.gcp_project or not has_source():
        config.pop(IMAGE_STACK_KEY, None)  # a named image; no GCP project; no source to build (the release's image)
    else:  # the trainer the project's image stack builds from this source (tfcli.gke.image_stack)
        from infra.image import image_stack_name

        config[IMAGE_STACK_KEY] = image_stack_name(project.settings.gcp_project)


def _refuse_other_kind(stack_file: StackFile | None, wanted: str, name: str) -> None:
    if stack_file is None or stack_file.kind in (wanted, "other"):
        return
    owner = "shared cluster" if stack_file.kind == "cluster" else stack_file.kind
    raise InvalidInput(
        f"{display_path(stack_file.path)} is the stack of the {owner} '{name}'; "
        f"{'an' if wanted == 'experiment' else 'a'} {wanted} cannot have the same name",
        hint=f"pick another name with {'-n' if wanted == 'experiment' else '-c'}",
    )


@dataclass(frozen=True)
class ExperimentStack:
    """The stack file an experiment deploys with, and what tfcli decided for it."""

    file: StackFile
    shared_cluster: str | None
    placeholder_project: bool

    @property
    def config(self) -> dict[str, Any]:
        return self.file.config


def cluster_spec(project: ProjectDir, name: str) -> Cluster:
    """The spec of the shared cluster ``name`` (from its stack file); an ``InvalidInput`` lists the known ones."""
    from trainer.kernel.spec import resolve_cluster

    stack_file = StackFile.read(stack_path(project, name))
    if stack_file is None or stack_file.kind != "cluster":
        raise unknown_cluster(project, name)
    return resolve_cluster(stack_file.config[CLUSTER_KEY], shown=f"{display_path(stack_file.path)}: {CLUSTER_KEY}")


def unknown_cluster(project: ProjectDir, name: str) -> InvalidInput:
    """The answer to a ``--cluster`` naming no shared cluster of the project: the close names, then all of them."""
    names = cluster_names(project)
    return InvalidInput(
        f"--cluster: no shared cluster named '{name}'{did_you_mean(name, names)} in this project"
        f" (known: {', '.join(names) or 'none yet'})",
        hint="create one with `tfcli cluster create -f SPEC -c NAME`",
    )


def shared_cluster_of(
    project: ProjectDir, existing: StackFile | None, requested: str | None, *, own_cluster: bool = False
) -> str | None:
    """The shared cluster a run's stack deploys onto: ``requested`` (``-c``); else the one its stack file already
    names, while that cluster's stack file exists (``own_cluster`` drops it); else None, a cluster of its own."""
    if requested is not None or existing is None or own_cluster:
        return requested
    kept = existing.config.get(SHARED_CLUSTER_STACK_KEY)
    if kept and StackFile.read(stack_path(project, str(kept))) is not None:
        return str(kept)
    return None


def set_shared_cluster(config: dict[str, Any], shared: str | None) -> None:
    if shared is not None:
        config[SHARED_CLUSTER_STACK_KEY] = shared
    else:
        config.pop(SHARED_CLUSTER_STACK_KEY, None)


def experiment_stack(
    project: ProjectDir, spec: Experiment, *, shared_cluster: str | None = None, own_cluster: bool = False
) -> ExperimentStack:
    """The experiment's stack file as it should be (not written): the existing one updated, or a new one.

    ``shared_cluster`` moves the experiment onto that shared cluster; without it, the file's choice is kept
    (``own_cluster`` drops it). A shared cluster whose stack file is gone is dropped too.
    """
    from infra.stack_files import experiment_stack_config

    path = stack_path(project, spec.name)
    existing = StackFile.read(path)
    _refuse_other_kind(existing, "experiment", spec.name)
    shared = shared_cluster_of(project, existing, shared_cluster, own_cluster=own_cluster)
    if shared is not None:
        spec = spec.model_copy(update={"cluster": cluster_spec(project, shared)})
    generated = experiment_stack_config(spec, **location_arguments(project), shared_cluster_stack=shared)
    if existing is None:
        header = [
            f"# Experiment stack '{spec.name}', written by tfcli: `pulumi up -s {spec.name}` deploys it as is.",
            "# tfcli rewrites tfcli:experiment, tfcli:sharedClusterStack and the gcp: keys; others are kept.",
        ]
        stack_file = new_file(path, project, header, generated)
    else:
        stack_file = existing
        update_project(stack_file, project)
        config = stack_file.config
        config[EXPERIMENT_KEY] = generated[EXPERIMENT_KEY]
        config.setdefault(SUSPEND_KEY, False)
        set_shared_cluster(config, shared)
    set_project_code(stack_file.config, project)
    placeholder = stack_file.config.get(PROJECT_KEY) == PLACEHOLDER_PROJECT
    return ExperimentStack(stack_file, shared, placeholder)


def cluster_stack(project: ProjectDir, cluster: Cluster) -> StackFile:
    """A shared cluster's stack file as it should be (not written)."""
    from infra.stack_files import cluster_stack_config

    path = stack_path(project, cluster.name)
    existing = StackFile.read(path)
    _refuse_other_kind(existing, "cluster", cluster.name)
    generated = cluster_stack_config(cluster, **location_arguments(project))
    if existing is None:
        header = [
            f"# Shared cluster stack '{cluster.name}', written by `tfcli cluster create`.",
            f"# Experiment stacks run on it with `tfcli:sharedClusterStack: {cluster.name}`.",
        ]
        return new_file(path, project, header, generated)
    update_project(existing, project)
    existing.config[CLUSTER_KEY] = generated[CLUSTER_KEY]
    return existing


def fill_placeholder_project(project: ProjectDir) -> list[StackFile]:
    """Once tfcli.yaml names a GCP project (``init -r``), the stack files written before it, which hold the
    placeholder, take it (and tfcli.yaml's location) as :func:`update_project` does; a file naming any other
    project is the user's choice and stays as it is. The files changed."""
    if not project.settings.gcp_project:
        return []
    changed = []
    for stack_file in stack_files(project):
        if stack_file.config.get(PROJECT_KEY) == PLACEHOLDER_PROJECT:
            update_project(stack_file, project)
            if stack_file.write():
                changed.append(stack_file)
    return changed


def stack_files(project: ProjectDir) -> list[StackFile]:
    folder = project.stacks
    if not folder.is_dir():
        return []
    found = (StackFile.read(path) for path in sorted(folder.glob("Pulumi.*.yaml")))
    return [stack_file for stack_file in found if stack_file is not None]


def cluster_names(project: ProjectDir) -> list[str]:
    """The shared clusters of the project (their stack files)."""
    return [stack_file.stack for stack_file in stack_files(project) if stack_file.kind == "cluster"]


def experiments_on(project: ProjectDir, cluster: str) -> list[str]:
    """The experiments and sweeps whose stack file runs them on the shared cluster ``cluster``."""
    return [
        stack_file.stack
        for stack_file in stack_files(project)
        if stack_file.kind in ("experiment", "sweep") and stack_file.config.get(SHARED_CLUSTER_STACK_KEY) == cluster
    ]
