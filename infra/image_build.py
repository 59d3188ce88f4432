"""TrainerBuild: one variant of the trainer image, built by Cloud Build in the user's own project, as a Pulumi
resource (pulumi-gcp has no resource for a Cloud Build *build*, only for triggers, so this is a dynamic provider).

Its inputs say what is built: the project, the staging bucket, the image ``<repository>:<context>-<variant>`` and the
context's digest (:mod:`infra.image_context`). ``create`` uploads the deterministic context archive with the storage
client (once per digest: the object's name is the digest), submits the build through the Cloud Build v1 REST API
(:mod:`infra.cloud_build`), polls it and outputs the pushed image's ``digest`` and ``pinned``
(``<repository>@sha256:...``), which the Jobs pull. The engine diffs the inputs: the same context digest is no
change, so an unchanged trainer never builds again; another one replaces the resource (a new build; the old image stays
in the repository for the runs that still pull it, until the repository's cleanup policy deletes it). ``delete``
therefore deletes nothing.

The source folder travels as an input but is not part of the diff: another checkout of the same trainer is the same
image.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi.dynamic

from infra import cloud_build
from infra.image_context import build_context
from infra.image_progress import BuildProgress
from trainer.kernel.errors import TfcliError

# Inputs whose change is a new image (``source`` and ``requirements`` are where the context is read from, not what it
# is; a layer's ``base`` is the trainer image it is built on).
IMAGE_INPUTS = ("project", "bucket", "image", "variant", "context", "base")


def context_object(digest: str) -> str:
    return f"contexts/{digest}.tar.gz"


def storage_client(project: str) -> Any:
    """The storage client of the provider's credentials (anonymous against ``STORAGE_EMULATOR_HOST``)."""
    from google.cloud import storage

    return storage.Client(project=project)


def read_context(props: dict[str, Any]) -> Any:
    """The build's context: the trainer's (``source``), or a layer's (``requirements``, :mod:`infra.image_layer`)."""
    if props.get("base"):
        from infra.image_layer import layer_context

        return layer_context(Path(props["requirements"]))
    return build_context(Path(props["source"]))


def build_request(props: dict[str, Any], name: str) -> cloud_build.BuildRequest:
    """The trainer's build (its Dockerfile, ``VARIANT``) or a layer's (its own Dockerfile, ``BASE``: the trainer)."""
    common = {"project": props["project"], "bucket": props["bucket"], "object": name, "image": props["image"]}
    if props.get("base"):
        from infra.image_layer import DOCKERFILE

        return cloud_build.BuildRequest(**common, build_args={"BASE": props["base"]}, dockerfile=DOCKERFILE)
    return cloud_build.BuildRequest(**common, build_args={"VARIANT": props["variant"]})


def upload_context(client: Any, bucket: str, props: dict[str, Any]) -> str:
    """Upload the context archive unless an object of its digest is there; returns the object's name. A context that
    changed since the program read it is refused (the image would not be the one its name says)."""
    context = read_context(props)
    expected = props["context"]
    if context.short != expected:
        raise TfcliError(
            f"the build context of {props['image']} changed during the update (context {context.short}, "
            f"expected {expected}): run the update again"
        )
    blob = client.bucket(bucket).blob(context_object(context.digest))
    if not blob.exists():
        blob.upload_from_string(context.archive, content_type="application/gzip")
    return str(blob.name)


def read_log(client: Any, bucket: str, build_id: str) -> str | None:
    """The build's log (``log-<id>.txt`` in its logs bucket), or None when it cannot be read."""
    try:
        return str(client.bucket(bucket).blob(f"log-{build_id}.txt").download_as_text())
    except Exception:  # a log is a courtesy: the build's status says what happened
        return None


class ProgressLines:
    """A build's progress on the provider's stderr (:mod:`infra.image_progress`: the engine forwards it as diagnostic
    events): a line when the status or the running step changes, and every ``heartbeat`` seconds while it runs, so
    the elapsed time moves. The step comes from the build's log, which Cloud Build writes to the logs bucket while it
    runs (``read_log``; gcloud's log tailer reads it the same way)."""

    def __init__(
        self,
        image: str,
        read_log: Callable[[str], str | None],
        *,
        heartbeat: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.image, self.read_log, self.heartbeat, self.clock = image, read_log, heartbeat, clock
        self.started = self.written = clock()
        self.last: BuildProgress | None = None

    def __call__(self, build: dict[str, Any]) -> None:
        now = self.clock()
        log = self.read_log(str(build.get("id"))) if build.get("status") == "WORKING" else None
        progress = BuildProgress.of(build, self.image, now - self.started, log)
        if progress.changed_from(self.last) or now - self.written >= self.heartbeat:
            print(progress.line(), file=sys.stderr, flush=True)
            self.last, self.written = progress, now


def run_build(props: dict[str, Any], *, interval: float = 5.0) -> dict[str, Any]:
    """Upload, submit, wait: the outputs of a successful build, or :class:`cloud_build.BuildFailed`."""
    project, bucket, image = props["project"], props["bucket"], props["image"]
    storage = storage_client(project)
    name = upload_context(storage, bucket, props)
    http, root = cloud_build.session()
    build = cloud_build.submit(http, root, build_request(props, name))
    progress = ProgressLines(image, lambda build_id: read_log(storage, bucket, build_id))
    build = cloud_build.wait(http, root, project, build, interval=interval, report=progress)
    if build.get("status") != "SUCCESS":
        raise cloud_build.failure(build, read_log(storage, bucket, build["id"]))
    digest = cloud_build.image_digest(build, image)
    repository = image.rsplit(":", 1)[0]
    return {**props, "buildId": build["id"], "digest": digest, "pinned": f"{repository}@{digest}"}


class TrainerBuildProvider(pulumi.dynamic.ResourceProvider):
    """Builds on create; a changed context replaces; nothing to delete (the repository keeps or cleans images)."""

    poll_seconds = 5.0

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        changed = [key for key in IMAGE_INPUTS if olds.get(key) != news.get(key)]
        return pulumi.dynamic.DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        outs = run_build(props, interval=self.poll_seconds)
        return pulumi.dynamic.CreateResult(id_=outs["buildId"], outs=outs)

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


@dataclass(frozen=True)
class TrainerBuildArgs:
    """The trainer (``source``) or, with ``base``, a layer of the project's packages on it (``requirements``)."""

    project: str
    bucket: pulumi.Input[str]
    image: str  # <repository>:<context>-<variant> (a layer: <repository>:<trainer context>-<layer>-<variant>)
    variant: str
    context: str  # the context's short digest
    source: str = ""  # the folder the trainer's context is read from
    base: pulumi.Input[str] | None = None  # a layer's: the trainer image it is built FROM, by digest
    requirements: str = ""  # a layer's: the requirements file


class TrainerBuild(pulumi.dynamic.Resource):
    """One built and pushed variant; ``pinned`` is ``<repository>@sha256:...``."""

    image: pulumi.Output[str]
    digest: pulumi.Output[str]
    pinned: pulumi.Output[str]
    buildId: pulumi.Output[str]

    def __init__(self, name: str, args: TrainerBuildArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {
            "project": args.project,
            "bucket": args.bucket,
            "image": args.image,
            "variant": args.variant,
            "context": args.context,
            "source": args.source,
            "base": args.base,
            "requirements": args.requirements,
            "digest": None,
            "pinned": None,
            "buildId": None,
        }
        super().__init__(TrainerBuildProvider(), name, props, opts)
