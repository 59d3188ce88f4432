"""The user's own packages as a layer on the built trainer image (``image: {requirements: requirements.txt}`` in
tfcli.yaml): a build context of two files — a Dockerfile ``FROM`` the trainer image (by digest, a build argument)
and the requirements file — packed as deterministically as the trainer's (:mod:`infra.image_context`), whose digest
names the layer, so the same requirements never build twice.

The layer installs as root into the image's ``/opt/venv`` (pip from ``ensurepip``: the trainer image has none) and
runs as uid 1000 again, as the manifests run it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

from trainer.kernel.errors import InvalidInput

DOCKERFILE = "Dockerfile"
REQUIREMENTS = "requirements.txt"
LAYER_DOCKERFILE = """\
# The project's own packages on the tfcli trainer image (tfcli.yaml: image.requirements), built by its image stack.
ARG BASE
# hadolint ignore=DL3006
FROM ${BASE}
USER 0:0
COPY requirements.txt /tmp/tfcli-requirements.txt
RUN python -m ensurepip --default-pip \\
    && python -m pip install --no-cache-dir --requirement /tmp/tfcli-requirements.txt \\
    && rm /tmp/tfcli-requirements.txt
USER 1000:1000
"""
MAX_REQUIREMENTS_BYTES = 256 * 1024


@dataclass(frozen=True)
class LayerContext:
    archive: bytes
    digest: str  # of the tar

    @property
    def short(self) -> str:
        return self.digest[:16]


def read_requirements(path: Path, *, where: str) -> bytes:
    """The requirements file's bytes; a missing, non-regular or oversized file is an :class:`InvalidInput`."""
    if not path.is_file():
        raise InvalidInput(f"{where}: {path} is not a file")
    if path.stat().st_size > MAX_REQUIREMENTS_BYTES:
        raise InvalidInput(f"{where}: {path} is over {MAX_REQUIREMENTS_BYTES // 1024} KiB")
    return path.read_bytes()


def layer_context(requirements: Path, *, where: str = "image.requirements") -> LayerContext:
    """The layer's build context: ``Dockerfile`` and ``requirements.txt``, mtime 0, uid/gid 0, mode 0644."""
    raw = io.BytesIO()
    files = {DOCKERFILE: LAYER_DOCKERFILE.encode(), REQUIREMENTS: read_requirements(requirements, where=where)}
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return LayerContext(gzip.compress(raw.getvalue(), mtime=0), hashlib.sha256(raw.getvalue()).hexdigest())
