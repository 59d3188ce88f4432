"""The Cloud Build v1 REST API, the two calls the trainer image's build needs: ``projects.builds.create`` (returns a
long-running Operation whose ``metadata.build`` is the queued Build) and ``projects.builds.get`` (polled until the
Build's ``status`` is final). The request and the states are the API reference's ("REST Resource: projects.builds"):
QUEUED/PENDING -> WORKING -> SUCCESS, FAILURE, INTERNAL_ERROR, TIMEOUT, CANCELLED or EXPIRED; a pushed image's digest
is in ``results.images[].digest``; the log is ``log-<id>.txt`` in ``logsBucket``, each line prefixed ``Step #N``.

Called through google-auth's ``AuthorizedSession`` (a ``requests`` session that adds the caller's OAuth token):
google-auth is already installed with the storage client, and two JSON calls do not justify google-api-python-client's
discovery machinery at run time. ``TFCLI_CLOUD_BUILD_HOST`` (``http://127.0.0.1:PORT``) points it at a stand-in with
no credentials, as ``STORAGE_EMULATOR_HOST`` does the storage client.

Errors a user can fix keep Google's own words ("Cloud Build API has not been used in project P before or it is
disabled", "Permission 'cloudbuild.builds.create' denied", "Quota exceeded for quota metric"), which tfcli's Pulumi
error translation (tfcli/gke/pulumi_errors.py) turns into the command that fixes them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from trainer.kernel.errors import TfcliError

API = "https://cloudbuild.googleapis.com/"
HOST_VAR = "TFCLI_CLOUD_BUILD_HOST"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
FINAL = ("SUCCESS", "FAILURE", "INTERNAL_ERROR", "TIMEOUT", "CANCELLED", "EXPIRED")
LOG_LINES = 15  # of the failing step, shown when a build fails


class BuildFailed(TfcliError):
    """A build that ended in another state than SUCCESS."""


def session() -> tuple[Any, str]:
    """An authorized ``requests`` session and the API's root: Application Default Credentials (or the key file of
    ``GOOGLE_APPLICATION_CREDENTIALS``), or none against ``TFCLI_CLOUD_BUILD_HOST``."""
    from google.auth.transport.requests import AuthorizedSession

    host = os.environ.get(HOST_VAR)
    if host:
        from google.auth.credentials import AnonymousCredentials

        return AuthorizedSession(AnonymousCredentials()), host.rstrip("/") + "/"
    import google.auth

    credentials, _ = google.auth.default(scopes=[SCOPE])
    return AuthorizedSession(credentials), API


def api_error(response: Any, what: str) -> TfcliError:
    """A non-2xx answer as one error in Google's own words (``Error 403: Cloud Build API has not been used in project
    P before or it is disabled ...``, ``Permission 'cloudbuild.builds.create' denied ...``, ``Error 429: Quota
    exceeded for quota metric ...``): the message reaches tfcli through the Pulumi engine as text, and
    :func:`tfcli.gke.pulumi_errors.translate`, the one place that maps Google's errors to the command that fixes
    them, reads it there as it reads pulumi-gcp's."""
    try:
        error = response.json().get("error", {})
    except ValueError:
        error = {}
    message = error.get("message") or response.text[:300] or response.reason
    return TfcliError(f"cannot {what}: Error {response.status_code}: {message}")


@dataclass(frozen=True)
class BuildRequest:
    """One image built from a context archive in Cloud Storage and pushed (``images``) by Cloud Build."""

    project: str
    bucket: str  # holds the context (``object``) and the build's log
    object: str
    image: str  # repository:tag
    build_args: Mapping[str, str]
    dockerfile: str = "trainer/Dockerfile"
    machine_type: str = "E2_HIGHCPU_8"
    timeout_seconds: int = 3600

    def body(self) -> dict[str, Any]:
        """The Build of ``projects.builds.create``: a docker build of the context, the image pushed by Cloud Build."""
        args = ["build", "--file", self.dockerfile, "--tag", self.image]
        for key, value in sorted(self.build_args.items()):
            args += ["--build-arg", f"{key}={value}"]
        return {
            "source": {"storageSource": {"bucket": self.bucket, "object": self.object}},
            "steps": [{"name": "gcr.io/cloud-builders/docker", "args": [*args, "."]}],
            "images": [self.image],
            "logsBucket": f"gs://{self.bucket}",
            "options": {"machineType": self.machine_type, "logging": "GCS_ONLY"},
            "timeout": f"{self.timeout_seconds}s",
            "tags": ["tfcli-trainer"],
        }


def submit(http: Any, root: str, request: BuildRequest) -> dict[str, Any]:
    """``projects.builds.create``: the queued Build (from the Operation's metadata)."""
    response = http.post(f"{root}v1/projects/{request.project}/builds", json=request.body(), timeout=60)
    if not response.ok:
        raise api_error(response, f"submit the trainer image's build in project {request.project}")
    build = response.json().get("metadata", {}).get("build")
    if not isinstance(build, dict) or not build.get("id"):
        raise TfcliError(f"Cloud Build answered without a build: {response.text[:300]}")
    return build


def get(http: Any, root: str, project: str, build_id: str) -> dict[str, Any]:
    response = http.get(f"{root}v1/projects/{project}/builds/{build_id}", timeout=60)
    if not response.ok:
        raise api_error(response, f"read build {build_id} of project {project}")
    result: dict[str, Any] = response.json()
    return result


def wait(
    http: Any,
    root: str,
    project: str,
    build: dict[str, Any],
    *,
    interval: float = 5.0,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Poll the build until its status is final; ``report`` sees the build as submitted and after every poll."""
    if report is not None:
        report(build)
    while build.get("status") not in FINAL:
        time.sleep(interval)
        build = get(http, root, project, build["id"])
        if report is not None:
            report(build)
    return build


def image_digest(build: dict[str, Any], image: str) -> str:
    """``sha256:...`` of ``image`` in a successful build's ``results.images``."""
    for built in build.get("results", {}).get("images", []):
        if built.get("name") == image and str(built.get("digest", "")).startswith("sha256:"):
            return str(built["digest"])
    raise TfcliError(f"build {build.get('id')} succeeded but reports no digest for {image}")


def failing_step(build: dict[str, Any]) -> int | None:
    """The index of the first step whose status is not SUCCESS (None when none says)."""
    for index, step in enumerate(build.get("steps", [])):
        if step.get("status") not in (None, "SUCCESS", "QUEUED", "PENDING"):
            return index
    return None


def log_tail(log: str, step: int | None, lines: int = LOG_LINES) -> list[str]:
    """The last ``lines`` lines of step ``step`` in a Cloud Build log (``Step #N: ...`` / ``Step #N - "id": ...``),
    or of the whole log when the step is unknown."""
    rows = log.splitlines()
    if step is not None:
        prefix = f"Step #{step}"
        rows = [row for row in rows if row.startswith((f"{prefix}:", f"{prefix} "))]
    return rows[-lines:]


def failure(build: dict[str, Any], log: str | None) -> BuildFailed:
    """A build that did not succeed: its status and detail, and the failing step's last log lines."""
    status, detail = build.get("status"), build.get("statusDetail") or ""
    step = failing_step(build)
    where = f" at step #{step}" if step is not None else ""
    lines = [f"Cloud Build build {build.get('id')} ended {status}{where}" + (f": {detail}" if detail else "")]
    if log:
        lines += [f"  {row}" for row in log_tail(log, step)]
    elif build.get("logUrl"):
        lines.append(f"  log: {build['logUrl']}")
    return BuildFailed("\n".join(lines))
