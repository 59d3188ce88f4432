"""The trainer image's build through the Cloud Build v1 REST API, against the stand-in (tests/gke/fake_cloud_build.py,
every request checked against the API's discovery document): upload once per context, submit, poll, digest; failed,
timed-out and cancelled builds show the failing step's last lines; a disabled API, a missing permission and a quota
keep Google's words; the build's progress goes to stderr, where the engine picks it up."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from infra import cloud_build
from infra.image_build import TrainerBuildProvider, context_object, run_build
from infra.image_context import build_context
from trainer.kernel.errors import TfcliError

PROJECT = "my-project"
BUCKET = "tfcli-builds-test"
IMAGE = "us-central1-docker.pkg.dev/my-project/tfcli/trainer"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "trainer").mkdir(parents=True)
    (root / ".dockerignore").write_text("*\n!pyproject.toml\n!trainer/\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'tfcli'\n")
    (root / "trainer" / "Dockerfile").write_text("FROM debian:bookworm-slim\n")
    (root / "trainer" / "run.py").write_text("print('train')\n")
    return root


def props(source: Path, variant: str = "cpu") -> dict[str, Any]:
    context = build_context(source).short
    return {"project": PROJECT, "bucket": BUCKET, "image": f"{IMAGE}:{context}-{variant}", "variant": variant,
            "context": context, "source": str(source)}  # fmt: skip


@pytest.fixture
def bucket(gcs: Any) -> Any:
    return gcs.create_bucket(BUCKET)


def test_a_build_uploads_the_context_submits_and_outputs_the_pushed_digest(cloud_build: Any, bucket: Any,
                                                                          source: Path) -> None:  # fmt: skip
    outs = run_build(props(source), interval=0)
    assert outs["digest"].startswith("sha256:") and outs["pinned"] == f"{IMAGE}@{outs['digest']}"
    (request,) = cloud_build.created
    assert request["images"] == [props(source)["image"]]
    assert "--build-arg" in request["steps"][0]["args"] and "VARIANT=cpu" in request["steps"][0]["args"]
    assert request["source"]["storageSource"] == {
        "bucket": BUCKET,
        "object": context_object(build_context(source).digest),
    }
    assert cloud_build.problems == []  # nothing output-only sent
    assert [b.name for b in bucket.list_blobs(prefix="contexts/")] == [request["source"]["storageSource"]["object"]]
    build = cloud_build.builds[outs["buildId"]]
    assert build["status"] == "SUCCESS" and build["results"]["images"][0]["digest"] == outs["digest"]


def test_the_same_context_is_uploaded_once_and_the_variants_differ(cloud_build: Any, bucket: Any, source: Path) -> None:
    cpu = run_build(props(source, "cpu"), interval=0)
    gpu = run_build(props(source, "gpu"), interval=0)
    assert cpu["digest"] != gpu["digest"]
    assert len(list(bucket.list_blobs(prefix="contexts/"))) == 1


def test_an_unchanged_context_is_no_change_and_a_changed_one_a_replacement(source: Path) -> None:
    provider = TrainerBuildProvider()
    old = props(source)
    assert not provider.diff("id", old, {**old, "source": "/elsewhere"}).changes  # another checkout, same trainer
    (source / "trainer" / "run.py").write_text("print('other')\n")
    new = props(source)
    diff = provider.diff("id", old, new)
    assert diff.changes and set(diff.replaces or []) == {"context", "image"}


@pytest.mark.parametrize("status", ["FAILURE", "TIMEOUT", "CANCELLED"])
def test_a_build_that_fails_shows_the_failing_steps_last_lines(cloud_build: Any, bucket: Any, source: Path,
                                                               status: str) -> None:  # fmt: skip
    lines = [f"line {n}" for n in range(30)] + ["ERROR: pip could not install tensorflow==9.9"]
    cloud_build.fail_next(status, lines)
    with pytest.raises(cloud_build_module().BuildFailed) as caught:
        run_build(props(source), interval=0)
    text = str(caught.value)
    assert f"ended {status} at step #0" in text
    assert "Step #0: ERROR: pip could not install tensorflow==9.9" in text
    assert "line 15" not in text and "line 16" in text  # the last 15 lines of the step, no more


def test_a_context_whose_dockerfile_is_missing_fails_in_the_build(cloud_build: Any, bucket: Any, source: Path) -> None:
    (source / ".dockerignore").write_text("*\n!pyproject.toml\n!trainer/run.py\n")
    with pytest.raises(TfcliError, match="no such file or directory"):
        run_build(props(source), interval=0)


def test_a_source_that_changed_since_the_program_read_it_is_refused(cloud_build: Any, bucket: Any,
                                                                   source: Path) -> None:  # fmt: skip
    stale = props(source)
    (source / "trainer" / "run.py").write_text("print('other')\n")
    with pytest.raises(TfcliError, match="changed during the update"):
        run_build(stale, interval=0)
    assert cloud_build.created == []


@pytest.mark.parametrize(
    ("code", "reason", "words"),
    [(403, "SERVICE_DISABLED", f"Cloud Build API has not been used in project {PROJECT} before or it is disabled"),
     (403, "IAM_PERMISSION_DENIED", "Permission 'cloudbuild.builds.create' denied"),
     (429, "RATE_LIMIT_EXCEEDED", "Quota exceeded for quota metric 'Build and Operation Create requests'")],
)  # fmt: skip
def test_project_problems_keep_googles_words(cloud_build: Any, bucket: Any, source: Path, code: int, reason: str,
                                             words: str) -> None:  # fmt: skip
    """Google's own message and code, which tfcli/gke/pulumi_errors.py turns into the fix (test_image_errors.py)."""
    cloud_build.error(code, reason, PROJECT)
    with pytest.raises(TfcliError) as caught:
        run_build(props(source), interval=0)
    assert f"Error {code}: {words}" in str(caught.value)
    assert cloud_build.builds == {}


def test_the_stand_in_refuses_what_the_discovery_document_does_not_have(cloud_build: Any, bucket: Any) -> None:
    http, root = cloud_build_module().session()
    body = {"steps": [{"name": "gcr.io/cloud-builders/docker", "argz": ["build"]}]}
    answer = http.post(f"{root}v1/projects/{PROJECT}/builds", json=body)
    assert answer.status_code == 400 and 'Unknown name "argz"' in answer.json()["error"]["message"]
    answer = http.post(f"{root}v1/projects/{PROJECT}/builds", json={"steps": [{"name": "x"}], "timeout": "1h"})
    assert answer.status_code == 400 and "Duration" in answer.json()["error"]["message"]
    answer = http.post(
        f"{root}v1/projects/{PROJECT}/builds", json={"steps": [{"name": "x"}], "options": {"machineType": "HUGE"}}
    )
    assert answer.status_code == 400
    answer = http.get(f"{root}v1/projects/{PROJECT}/builds/x", params={"verbose": "1"})
    assert answer.status_code == 400
    assert http.post(f"{root}v2/projects/{PROJECT}/builds", json={}).status_code == 404


def test_the_request_tfcli_sends_is_valid_by_the_discovery_document() -> None:
    from fake_cloud_build import Discovery

    ignored: list[str] = []
    request = cloud_build.BuildRequest(PROJECT, BUCKET, "contexts/x.tar.gz", f"{IMAGE}:abc-cpu", {"VARIANT": "cpu"})
    Discovery().check(request.body(), {"$ref": "Build"}, "build", ignored)
    assert ignored == []


def cloud_build_module() -> Any:
    return cloud_build


def test_a_build_writes_its_progress_on_stderr_for_the_engine(cloud_build: Any, bucket: Any, source: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """QUEUED when submitted, WORKING with the step its log has reached (the stand-in's log has step #0 from WORKING
    on), then the final status: each a line infra/image_progress.py reads back."""
    from infra.image_progress import parse

    outs = run_build(props(source), interval=0)
    lines = [parse(line) for line in capsys.readouterr().err.splitlines()]
    assert None not in lines
    said = [(p.status, p.step) for p in lines if p is not None]
    assert said == [("QUEUED", ""), ("WORKING", "step 1/1 docker build"), ("SUCCESS", "")]
    assert {p.build for p in lines if p is not None} == {outs["buildId"]}


def test_progress_is_written_on_a_change_and_every_heartbeat() -> None:
    from infra.image_build import ProgressLines

    now = [0.0]
    report = ProgressLines(f"{IMAGE}:abc-cpu", lambda _id: "Step #0: x\n", heartbeat=30, clock=lambda: now[0])
    build = {"id": "b", "status": "WORKING", "steps": [{"name": "gcr.io/cloud-builders/docker", "args": ["build"]}]}
    stream = io.StringIO()
    with contextlib.redirect_stderr(stream):
        for now[0] in (0.0, 5.0, 29.0, 30.0, 45.0, 61.0):
            report(build)
        report({**build, "status": "SUCCESS"})
    written = stream.getvalue().splitlines()
    assert [line.rsplit(": ", 1)[1] for line in written] == [
        "WORKING 0s, step 1/1 docker build",
        "WORKING 30s, step 1/1 docker build",
        "WORKING 1m01s, step 1/1 docker build",
        "SUCCESS 1m01s",
    ]
