"""A tfcli project: the folder holding ``tfcli.yaml``, ``configs/``, ``experiments/``, ``stacks/`` and ``Pulumi.yaml``.

``tfcli.yaml`` records the GCP project and location, the Pulumi state backend and how to authenticate. With no
GCP project, experiments run on this machine (the local backend) — what a newcomer without a cloud account gets.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec.base import DnsName
from trainer.kernel.spec.documents import display_path, read_document
from trainer.kernel.spec.errors import problems_of
from trainer.kernel.spec.library import PROJECT_FILE, find_project_root

DEFAULT_LOCATION = "us-central1"
DEFAULT_CODE_FOLDER = "envs"  # what `tfcli init` scaffolds: the project's own environments
_GCP_PROJECT = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")


class ImageLayer(BaseModel):
    """``image: {requirements: requirements.txt}``: the project's own packages, built by its image stack as a layer
    on the trainer image (a path inside the project)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requirements: str

    @field_validator("requirements")
    @classmethod
    def _inside(cls, value: str) -> str:
        clean = value.strip()
        if not clean or Path(clean).is_absolute() or ".." in Path(clean).parts:
            raise ValueError(f"'{value}' is not a file inside the project (give a relative path)")
        return Path(clean).as_posix()


class Project(BaseModel):
    """The settings in ``tfcli.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: DnsName
    gcp_project: str | None = Field(default=None, description="None: run experiments on this machine")
    location: str = DEFAULT_LOCATION
    state_backend: str = Field(default="file://./.pulumi", description="file://... or gs://bucket[/prefix]")
    credentials: Literal["application-default", "key-file"] = "application-default"
    key_file: str | None = Field(default=None, description="path only; the key itself goes in as a Pulumi secret")
    code: list[str] | None = Field(
        default=None, description="folders of the project's own code shipped to GKE runs; None: envs/ when present"
    )
    image: str | ImageLayer | None = Field(
        default=None, description="a ready trainer image of GKE runs, or {requirements: FILE}: packages on tfcli's"
    )
    backend: str | None = Field(
        default=None, description="where runs train when `start` is not told; None: gke with a GCP project, else local"
    )

    @field_validator("image", mode="before")
    @classmethod
    def _no_dockerfile_layer(cls, value: object) -> object:
        """``image: {dockerfile: ...}`` is refused on purpose (docs/gke.md "Your own packages")."""
        if isinstance(value, dict) and "dockerfile" in value:
            raise ValueError(
                "a Dockerfile is not built by tfcli (it could change what the trainer runs as, its entrypoint or its "
                "Python, which tfcli cannot check before a 20-minute build): list Python packages in "
                "image: {requirements: FILE}, or build your own image FROM the trainer and name it (image: "
                "REGISTRY/IMAGE@sha256:...)"
            )
        return value

    @field_validator("code")
    @classmethod
    def _code_folders(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        folders = []
        for folder in value:
            clean = folder.strip().strip("/")
            parts = Path(clean).parts
            if not clean or Path(folder).is_absolute() or ".." in parts:
                raise ValueError(f"'{folder}' is not a folder inside the project (give a relative path such as envs)")
            folders.append(Path(clean).as_posix())
        return folders

    @field_validator("gcp_project")
    @classmethod
    def _project_id(cls, value: str | None) -> str | None:
        if value is not None and not _GCP_PROJECT.match(value):
            raise ValueError(
                f"'{value}' is not a GCP project ID (6-30 characters: lowercase letters, digits and '-', "
                "starting with a letter)"
            )
        return value

    @field_validator("state_backend")
    @classmethod
    def _backend(cls, value: str) -> str:
        if not value.startswith(("file://", "gs://")):
            raise ValueError(f"'{value}' is not a Pulumi state backend this tool supports (file://... or gs://...)")
        return value

    @property
    def default_backend(self) -> str:
        """Where ``experiment start`` runs when not told: ``backend:`` when set (a registered backend's name, checked
        where it is used: ``tfcli.backends``), else GKE once a GCP project is configured, else this machine."""
        return self.backend or ("gke" if self.gcp_project else "local")


class ProjectDir:
    """A project on disk: its settings and where everything lives."""

    def __init__(self, root: Path, settings: Project) -> None:
        self.root = root
        self.settings = settings

    @property
    def experiments(self) -> Path:
        return self.root / "experiments"

    @property
    def stacks(self) -> Path:
        return self.root / "stacks"

    @property
    def configs(self) -> Path:
        return self.root / "configs"

    def experiment_dir(self, name: str) -> Path:
        return self.experiments / name

    def code_folders(self) -> list[str]:
        """The folders of the project's own code (``code:`` in tfcli.yaml; default ``envs`` when it exists), as
        paths relative to the root. The root is what the trainer puts on ``sys.path``, here and (as the code's
        mount) on GKE, so a module is imported by the same name in both places."""
        if self.settings.code is not None:
            return list(self.settings.code)
        return [DEFAULT_CODE_FOLDER] if (self.root / DEFAULT_CODE_FOLDER).is_dir() else []


def read_settings(path: Path) -> Project:
    """Validate ``tfcli.yaml``; problems come back as ``tfcli.yaml: <field>: <message>`` lines."""
    data = read_document(path)
    if not isinstance(data, dict):
        raise InvalidInput(f"{display_path(path)}: expected a mapping of project settings")
    try:
        return Project.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems_of(error, Project, display_path(path), {})) from None


def settings_yaml(settings: Project) -> str:
    """``tfcli.yaml`` with a comment per setting, so the file explains itself."""
    data = settings.model_dump(mode="json")
    if data.get("backend") is None:
        data.pop("backend", None)  # written once chosen: without it the rule of `default_backend` holds
    comments = {
        "gcp_project": "GCP project ID; null runs every experiment on this machine (tfcli experiment start --local)",
        "location": "GCP region or zone for clusters that name none",
        "state_backend": "Pulumi state: file://./.pulumi (this folder) or gs://BUCKET/PREFIX (shared by a team)",
        "credentials": "application-default (gcloud auth application-default login) or key-file",
        "key_file": "with credentials: key-file, the key's path; tfcli passes it to Pulumi as a secret, never plain",
        "code": "folders of your own code (environments) shipped to GKE runs; null: envs/ when it exists",
        "image": "a ready trainer image of GKE runs; null: tfcli's own, built in your GCP project; "
        "{requirements: requirements.txt}: tfcli's with your packages",
        "backend": "where `tfcli experiment start` trains when not told --backend/--local (local, gke, ...)",
    }
    lines = ["# tfcli project settings (written by `tfcli init`)."]
    for key, value in data.items():
        if key in comments:
            lines.append(f"# {comments[key]}")
        lines.append(yaml.safe_dump({key: value}, default_flow_style=False).rstrip())
    return "\n".join(lines) + "\n"


def open_project(start: Path | None = None) -> ProjectDir:
    """The project containing ``start`` (default: the current folder); an error says how to make one."""
    root = find_project_root(start)
    if root is None:
        raise TfcliError(
            f"{display_path(start or Path.cwd())} is not inside a tfcli project (no {PROJECT_FILE} here or above)",
            hint="create one with `tfcli init`",
        )
    return ProjectDir(root, read_settings(root / PROJECT_FILE))
