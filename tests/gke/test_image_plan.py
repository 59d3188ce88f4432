"""What a run that pulls the built trainer shows and writes before anything is deployed: ``plan`` lists the image
stack's repository and builds with their cost (Cloud Build minutes at the machine type's price, registry storage per
GB-month); the run's stack file names the image stack, unless tfcli.yaml names a ready image."""

from __future__ import annotations

import json
from pathlib import Path

from gke_testkit import GCP_PROJECT, READY_IMAGE, make_gke_project, stack_config
from typer.testing import CliRunner

from infra.prices import BUILD_MINUTE, REGISTRY_GB_MONTH, image_build_estimate
from tfcli.cli.app import app

runner = CliRunner()


def new(project: Path, **settings: str | None) -> None:
    make_gke_project(project, **settings)
    result = runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo", "-n", "si1"])
    assert result.exit_code == 0, result.stderr


def test_plan_lists_the_repository_and_the_builds_with_their_cost(project: Path) -> None:
    new(project, image=None)
    result = runner.invoke(app, ["experiment", "plan", "-e", "si1"])
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert f"Trainer image (stack image.{GCP_PROJECT}" in text
    assert "gcp:Repository trainer-repository" in text and "pulumi-python:Resource trainer-gpu" in text
    estimate = image_build_estimate()
    assert f"{estimate.minutes:g} build-minutes on E2_HIGHCPU_8 at ${BUILD_MINUTE['E2_HIGHCPU_8']}/min" in text
    assert f"${REGISTRY_GB_MONTH}/GB-month" in text

    data = json.loads(runner.invoke(app, ["experiment", "plan", "-e", "si1", "--json"]).stdout)
    assert data["image"]["cost"]["usd"] == estimate.usd == estimate.minutes * BUILD_MINUTE["E2_HIGHCPU_8"]
    assert {row["type"] for row in data["image"]["resources"]} >= {"gcp:artifactregistry/repository:Repository"}
    jobs = [
        r["inputs"]["spec"]["template"]["spec"] for r in data["resources"] if r["type"] == "kubernetes:batch/v1:Job"
    ]
    assert jobs and all("@sha256:" in c["image"] for job in jobs for c in job["containers"])  # by digest
    assert stack_config(project, "si1")["tfcli:imageStack"] == f"image.{GCP_PROJECT}"


def test_a_ready_image_skips_the_image_stack(project: Path) -> None:
    new(project)  # tfcli.yaml names READY_IMAGE
    data = json.loads(runner.invoke(app, ["experiment", "plan", "-e", "si1", "--json"]).stdout)
    assert "image" not in data
    config = stack_config(project, "si1")
    assert config["tfcli:image"] == READY_IMAGE and "tfcli:imageStack" not in config
