"""The trainer image's names — built here and nowhere else: the repository, the image stack, the staging bucket, a
built image (named by its build context's digest) and the released one (named by tfcli's version)."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata

from infra.naming import region_of

REPOSITORY = "tfcli"
IMAGE = "trainer"
DISTRIBUTION = "tfcli"  # the installed package whose version tags the image (infra ships in it)
VARIANTS = ("cpu", "gpu")
IMAGE_STACK_PREFIX = "image."  # a stack name no run can take: runs are DNS labels, which have no "."


@functools.cache
def tfcli_version() -> str:
    """tfcli's version, from the installed distribution's metadata: infra may import nothing of tfcli but its specs
    and errors, and the metadata is what ``pip``/``uv`` installed, so it is the version of the code that runs."""
    return importlib.metadata.version(DISTRIBUTION)


def repository(*, project: str, location: str) -> str:
    """``<region>-docker.pkg.dev/<project>/tfcli/trainer``: the Artifact Registry repository's trainer package, in
    the region of ``location`` (a zone or a region)."""
    return f"{region_of(location)}-docker.pkg.dev/{project}/{REPOSITORY}/{IMAGE}"


def variant_of(*, gpu: bool) -> str:
    """The GPU variant is for a learner that gets a GPU; everything else (env workers, CPU learners) runs ``cpu``."""
    return "gpu" if gpu else "cpu"


def default_image(*, project: str, location: str, gpu: bool, version: str | None = None) -> str:
    """``<repository>:<version>-gpu`` (or ``-cpu``): the image the release workflow pushes; ``version`` defaults to
    tfcli's. Stacks without an image stack (``tfcli:imageStack``) and without ``tfcli:image`` run it."""
    tag = version if version is not None else tfcli_version()
    return f"{repository(project=project, location=location)}:{tag}-{variant_of(gpu=gpu)}"


def built_image(*, project: str, location: str, context: str, variant: str) -> str:
    """``<repository>:<context>-<variant>``: the image built from the context of that (short) digest."""
    return f"{repository(project=project, location=location)}:{context}-{variant}"


def layer_image(*, project: str, location: str, context: str, layer: str, variant: str) -> str:
    """``<repository>:<context>-<layer>-<variant>``: the project's packages (a layer of that digest) on the trainer."""
    return f"{repository(project=project, location=location)}:{context}-{layer}-{variant}"


def image_stack_name(project: str) -> str:
    """The image stack of a GCP project: ``image.<project>`` (one per project; a run's name never has a ".")."""
    return f"{IMAGE_STACK_PREFIX}{project}"


def is_image_stack(stack: str) -> bool:
    return stack.startswith(IMAGE_STACK_PREFIX)


def build_bucket(project: str) -> str:
    """The bucket that stages build contexts and keeps build logs: ``tfcli-builds-<digest of the project>`` (bucket
    names are global and may not contain "google", so the project's id is not spelled out)."""
    return f"tfcli-builds-{hashlib.sha256(project.encode()).hexdigest()[:12]}"
