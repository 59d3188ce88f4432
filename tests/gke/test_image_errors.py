"""A GCP project that cannot build the trainer image yet says so in one message with the command that fixes it, exit 1
and no traceback: a disabled Cloud Build API, a missing Cloud Build permission and a used-up build-request quota
(answered by the Cloud Build stand-in as Google writes them, reaching tfcli through the build provider and the
engine), and a disabled Artifact Registry API or a missing permission to make the repository (pulumi-gcp's words,
injected into the fake ``pulumi up`` of the image stack)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project
from typer.testing import CliRunner

from tfcli.cli.app import app

pytestmark = pytest.mark.slow
IMAGE_STACK = f"image.{GCP_PROJECT}"
GRANT = f"gcloud projects add-iam-policy-binding {GCP_PROJECT} --member=user:YOUR_ACCOUNT --role="
AR_DISABLED = (
    "error: 1 error occurred:\n\t* Error creating Repository: googleapi: Error 403: Artifact Registry API has not been "
    f"used in project {GCP_PROJECT} before or it is disabled. Enable it by visiting https://console.developers.google"
    f".com/apis/api/artifactregistry.googleapis.com/overview?project={GCP_PROJECT} then retry. If you enabled this "
    "API recently, wait a few minutes for the action to propagate to our systems and retry."
)
AR_DENIED = (
    "error: 1 error occurred:\n\t* Error creating Repository: googleapi: Error 403: Permission "
    f"'artifactregistry.repositories.create' denied on resource '//artifactregistry.googleapis.com/projects/"
    f"{GCP_PROJECT}/locations/us-central1' (or it may not exist)."
)


def image_build() -> tuple[int, str]:
    result = CliRunner().invoke(app, ["image", "build"])
    return result.exit_code, result.stderr


def one_message(stderr: str, message: str, fix: str) -> None:
    flat = " ".join(stderr.split())
    assert message in flat and fix in flat, stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("code", "reason", "message", "fix"),
    [(403, "SERVICE_DISABLED", "the Cloud Build API (cloudbuild.googleapis.com) is not enabled",
      f"gcloud services enable cloudbuild.googleapis.com --project {GCP_PROJECT}"),
     (403, "IAM_PERMISSION_DENIED", "lacks a permission (cloudbuild.builds.create)",
      f"{GRANT}roles/cloudbuild.builds.editor"),
     (429, "RATE_LIMIT_EXCEEDED", "used up its quota 'Build and Operation Create requests'",
      f"https://console.cloud.google.com/iam-admin/quotas?project={GCP_PROJECT}")],
)  # fmt: skip
def test_cloud_builds_refusals_name_the_fix(project: Path, fake_pulumi: FakePulumi, cloud_build: Any, code: int,
                                            reason: str, message: str, fix: str) -> None:  # fmt: skip
    make_gke_project(project, image=None)
    cloud_build.error(code, reason, GCP_PROJECT)
    exit_code, stderr = image_build()
    assert exit_code == 1
    one_message(stderr, message, fix)
    assert cloud_build.builds == {}


@pytest.mark.parametrize(
    ("diagnostic", "message", "fix"),
    [(AR_DISABLED, "the Artifact Registry API (artifactregistry.googleapis.com) is not enabled",
      f"gcloud services enable artifactregistry.googleapis.com --project {GCP_PROJECT}"),
     (AR_DENIED, "lacks a permission (artifactregistry.repositories.create)", f"{GRANT}roles/artifactregistry.admin")],
)  # fmt: skip
def test_artifact_registrys_refusals_name_the_fix(project: Path, fake_pulumi: FakePulumi, cloud_build: Any,
                                                  diagnostic: str, message: str, fix: str) -> None:  # fmt: skip
    make_gke_project(project, image=None)
    fake_pulumi.fail("up", "error: update failed", stack=IMAGE_STACK, diagnostic=diagnostic)
    exit_code, stderr = image_build()
    assert exit_code == 1
    one_message(stderr, message, fix)


def test_a_repository_made_by_hand_is_named_with_the_import_that_adopts_it(project: Path, fake_pulumi: FakePulumi,
                                                                          cloud_build: Any) -> None:  # fmt: skip
    """pulumi-gcp's 409 for the repository ``tfcli`` that the older docs had users make by hand: one message with
    the ``pulumi import`` of it under the image stack's component (the Pulumi project's name from Pulumi.yaml)."""
    make_gke_project(project, image=None)
    exists = (
        "error: 1 error occurred:\n\t* Error creating Repository: googleapi: Error 409: the repository already exists."
    )
    fake_pulumi.fail("up", "error: update failed", stack=IMAGE_STACK, diagnostic=exists)
    exit_code, stderr = image_build()
    assert exit_code == 1
    parent = f"urn:pulumi:{IMAGE_STACK}::test::pulumi:pulumi:Stack$tfcli:infra:TrainerImages::trainer"
    command = (
        "pulumi import gcp:artifactregistry/repository:Repository trainer-repository "
        f"projects/{GCP_PROJECT}/locations/us-central1/repositories/tfcli --parent 'trainer={parent}' --protect=false "
        f"--generate-code=false --yes -s {IMAGE_STACK}"
    )
    one_message(stderr, "the Artifact Registry repository 'tfcli' already exists", command)
