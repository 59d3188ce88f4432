"""The GCP project a GKE command needs: tfcli.yaml's ``gcp_project``, or one error that says how to set it."""

from __future__ import annotations

from tfcli.project import ProjectDir
from trainer.kernel.errors import TfcliError


def require_gcp(project: ProjectDir) -> str:
    if not project.settings.gcp_project:
        raise TfcliError(
            "this project names no GCP project, so it cannot run on GKE",
            hint="set one with `tfcli init -r PROJECT_ID`, or run on this machine with --local",
        )
    return project.settings.gcp_project
