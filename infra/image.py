"""The trainer image a stack runs when ``tfcli:image`` does not name one — built here and nowhere else."""

from __future__ import annotations

import tfcli
from infra.naming import region_of

REPOSITORY = "tfcli"
IMAGE = "trainer"


def default_image(*, project: str, location: str, gpu: bool, version: str = tfcli.__version__) -> str:
    """``<region>-docker.pkg.dev/<project>/tfcli/trainer:<version>-gpu`` (or ``-cpu``), in the cluster's region.

    The GPU variant is for a learner that gets a GPU; everything else (env workers, CPU learners) runs ``-cpu``.
    """
    variant = "gpu" if gpu else "cpu"
    return f"{region_of(location)}-docker.pkg.dev/{project}/{REPOSITORY}/{IMAGE}:{version}-{variant}"
