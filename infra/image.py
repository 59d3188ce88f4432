"""The trainer image a stack runs when ``tfcli:image`` does not name one — built here and nowhere else."""

from __future__ import annotations

import functools
import importlib.metadata

from infra.naming import region_of

REPOSITORY = "tfcli"
IMAGE = "trainer"
DISTRIBUTION = "tfcli"  # the installed package whose version tags the image (infra ships in it)


@functools.cache
def tfcli_version() -> str:
    """tfcli's version, from the installed distribution's metadata: infra may import nothing of tfcli but its specs
    and errors, and the metadata is what ``pip``/``uv`` installed, so it is the version of the code that runs."""
    return importlib.metadata.version(DISTRIBUTION)


def default_image(*, project: str, location: str, gpu: bool, version: str | None = None) -> str:
    """``<region>-docker.pkg.dev/<project>/tfcli/trainer:<version>-gpu`` (or ``-cpu``), in the cluster's region;
    ``version`` defaults to tfcli's.

    The GPU variant is for a learner that gets a GPU; everything else (env workers, CPU learners) runs ``-cpu``.
    """
    variant = "gpu" if gpu else "cpu"
    tag = version if version is not None else tfcli_version()
    return f"{region_of(location)}-docker.pkg.dev/{project}/{REPOSITORY}/{IMAGE}:{tag}-{variant}"
