"""The trainer image as part of the stack, through the CLI, the fake ``pulumi`` and the Cloud Build stand-in: a first
``start`` on a fresh GKE project makes the image stack (repository, bucket, a Cloud Build build per variant, each
build's status and step shown as it goes) and then the run's stack (cluster, Jobs pulling the built digest); a second
start with the trainer unchanged builds nothing; a failing build shows the failing step's last log lines and exits 1
(a project that cannot build yet: test_image_errors.py). ``tfcli image list|build|delete`` manage the stack by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_kit import invoke
from gke_testkit import GCP_PROJECT, FakePulumi, make_gke_project

from infra.image_choice import current_context

pytestmark = pytest.mark.slow
IMAGE_STACK = f"image.{GCP_PROJECT}"
REPOSITORY = f"us-central1-docker.pkg.dev/{GCP_PROJECT}/tfcli/trainer"


def fresh(project: Path) -> None:
    make_gke_project(project, image=None)  # nothing but a GCP project: no image named, none built
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")
    assert code == 0, stderr


def job_images(fake_pulumi: FakePulumi, stack: str) -> set[str]:
    jobs = fake_pulumi.stacks()[stack]["jobs"]
    return {c["image"] for job in jobs for c in job["spec"]["template"]["spec"]["containers"]}


def test_a_first_start_builds_the_trainer_then_runs_it_by_digest(
    project: Path, fake_pulumi: FakePulumi, cloud_build: Any
) -> None:
    fresh(project)
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 0, stdout + stderr
    for variant in ("cpu", "gpu"):  # the builds' progress, from the provider's lines in the engine events
        built = f"Cloud Build trainer:{current_context()}-{variant}"
        for state in ("QUEUED 0s", "WORKING 0s, step 1/1 docker build", "SUCCESS 0s"):
            assert f"{built} {state}" in stdout, stdout
    stacks = fake_pulumi.stacks()
    types = {type_ for type_, _ in stacks[IMAGE_STACK]["resources"]}
    assert {"gcp:artifactregistry/repository:Repository", "pulumi-python:dynamic:Resource"} <= types
    assert sorted(b["images"][0].rsplit("-", 1)[1] for b in cloud_build.created) == ["cpu", "gpu"]
    assert cloud_build.problems == []
    outputs = stacks[IMAGE_STACK]["outputs"]
    assert {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool"} <= {
        t for t, _ in stacks["si1"]["resources"]
    }
    assert job_images(fake_pulumi, "si1") == {outputs["images"]["cpu"]}  # a CPU learner: the cpu build, by digest
    assert outputs["images"]["cpu"].startswith(f"{REPOSITORY}@sha256:")
    order = [argv for argv in fake_pulumi.commands() if argv[:1] == ["up"]]
    assert [argv[argv.index("--stack") + 1] for argv in order] == [IMAGE_STACK, "si1"]  # the image first

    # Stopped and started again with the trainer unchanged: no build, not even an update of the image stack.
    assert invoke("experiment", "stop", "-e", "si1", "--no-download")[0] == 0
    fake_pulumi.clear()
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 0, stdout + stderr
    assert len(cloud_build.created) == 2
    ups = [argv[argv.index("--stack") + 1] for argv in fake_pulumi.commands() if argv[:1] == ["up"]]
    assert ups == ["si1"]
    assert job_images(fake_pulumi, "si1") == {outputs["images"]["cpu"]}

    code, stdout, _ = invoke("image", "list", "--json")
    listed = json.loads(stdout)
    assert code == 0 and listed["current"] and {row["variant"] for row in listed["images"]} == {"cpu", "gpu"}
    code, stdout, stderr = invoke("image", "build")  # by hand, unchanged: the engine sees no change, no build
    assert code == 0 and len(cloud_build.created) == 2 and outputs["images"]["gpu"] in stdout


def test_a_failing_build_shows_the_failing_steps_last_lines_and_exits_1(
    project: Path, fake_pulumi: FakePulumi, cloud_build: Any
) -> None:
    fresh(project)
    cloud_build.fail_next("FAILURE", ["Collecting tensorflow==2.12.1", "ERROR: No matching distribution found"])
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 1, stdout + stderr
    assert "ended FAILURE at step #0" in stderr and "Step #0: ERROR: No matching distribution found" in stderr
    assert "Traceback" not in stderr
    assert "si1" not in fake_pulumi.stacks()  # the run's stack was never made: nothing to pull


def test_image_delete_destroys_the_stack(project: Path, fake_pulumi: FakePulumi, cloud_build: Any) -> None:
    fresh(project)
    code, stdout, stderr = invoke("image", "build")
    assert code == 0, stdout + stderr
    code, stdout, stderr = invoke("image", "delete", "--yes")
    assert code == 0, stdout + stderr
    assert IMAGE_STACK not in fake_pulumi.stacks()
    assert not (project / "stacks" / f"Pulumi.{IMAGE_STACK}.yaml").exists()


def test_the_projects_packages_are_a_layer_built_once_per_change(
    project: Path, fake_pulumi: FakePulumi, cloud_build: Any
) -> None:
    """``image: {requirements: requirements.txt}``: the trainer, then a layer FROM it (by digest) with the packages;
    the Jobs pull the layer; changed requirements build the layers again, not the trainer."""
    (project / "requirements.txt").write_text("gym-minigrid==1.2.2\n")
    make_gke_project(project, image={"requirements": "requirements.txt"})
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 0, stdout + stderr
    trainers = {b["images"][0].rsplit("-", 1)[1]: b for b in cloud_build.created[:2]}
    layers = cloud_build.created[2:]
    assert sorted(trainers) == ["cpu", "gpu"] and len(layers) == 2
    builds = fake_pulumi.stacks()[IMAGE_STACK]["builds"]
    for layer in layers:
        args = layer["steps"][0]["args"]
        variant = layer["images"][0].rsplit("-", 1)[1]
        assert args[args.index("--file") + 1] == "Dockerfile"
        assert f"BASE={builds[f'trainer-{variant}']['pinned']}" in args  # FROM the trainer, by digest
    outputs = fake_pulumi.stacks()[IMAGE_STACK]["outputs"]
    assert outputs["images"]["cpu"] == builds["trainer-cpu-layer"]["pinned"]
    assert job_images(fake_pulumi, "si1") == {outputs["images"]["cpu"]}

    assert invoke("experiment", "stop", "-e", "si1", "--no-download")[0] == 0
    (project / "requirements.txt").write_text("gym-minigrid==1.2.2\nrequests==2.34.2\n")
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 0, stdout + stderr
    rebuilt = cloud_build.created[4:]
    assert len(rebuilt) == 2 and all(b["steps"][0]["args"][2] == "Dockerfile" for b in rebuilt)  # layers only
    assert job_images(fake_pulumi, "si1") == {fake_pulumi.stacks()[IMAGE_STACK]["outputs"]["images"]["cpu"]}
    assert job_images(fake_pulumi, "si1") != {outputs["images"]["cpu"]}
