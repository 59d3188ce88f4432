"""The project's own code on GKE: its code folders (``code:`` in tfcli.yaml, default ``envs/``) travel with the run in
a ConfigMap, mounted read-only at :data:`CODE_MOUNT` in the learner's and the env-workers' pods, whose trainer puts
that folder first on ``sys.path`` (``--code``): ``envs.gridworld`` imports there as it does on this machine.

Why a ConfigMap and not the results bucket: it is applied with the Jobs in the same ``pulumi up``, needs no upload
step and no FUSE mount for the env-workers (which have no bucket access), and is read-only by construction. Its
limit is etcd's object size (1 MiB); :data:`LIMIT_BYTES` leaves room for the keys and metadata, and a project whose
code is bigger is told so (exit 2, naming the folders) — data belongs in the bucket, packages in an image built
``FROM`` the trainer image (docs/gke.md).

The digest of the files goes on the pod templates (:data:`CODE_DIGEST`), so changed code is a new Job name: a
restart replaces the Jobs and the new pods run the new code.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcli.errors import InvalidInput

CODE_MOUNT = "/opt/tfcli/code"
CODE_CONFIG_MAP = "project-code"
CODE_VOLUME = "code"
CODE_DIGEST = "tfcli/code-sha256"
LIMIT_BYTES = 768 * 1024
_SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_KEY_CHARACTERS = re.compile(r"[^-._a-zA-Z0-9]")


@dataclass(frozen=True)
class CodeBundle:
    """The files of the code folders: ``(path relative to the project root, bytes)``, sorted by path."""

    folders: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...]

    @property
    def digest(self) -> str:
        hasher = hashlib.sha256()
        for path, content in self.files:
            hasher.update(path.encode() + b"\0" + hashlib.sha256(content).digest())
        return hasher.hexdigest()[:16]

    def keys(self) -> list[tuple[str, str]]:
        """``(ConfigMap key, path)`` per file: a key holds only ``[-._a-zA-Z0-9]``, so a numbered, flattened path."""
        return [
            (f"{index:04d}-{_KEY_CHARACTERS.sub('_', path)}"[:253], path) for index, (path, _) in enumerate(self.files)
        ]

    def config_map(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """The ConfigMap: text files under ``data``, others under ``binaryData`` (base64)."""
        import base64

        data: dict[str, str] = {}
        binary: dict[str, str] = {}
        for (key, _), (_, content) in zip(self.keys(), self.files, strict=True):
            try:
                data[key] = content.decode("utf-8")
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(content).decode()
        config_map: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
        if binary:
            config_map["binaryData"] = binary
        return config_map

    def volume(self) -> dict[str, Any]:
        items = [{"key": key, "path": path} for key, path in self.keys()]
        return {"name": CODE_VOLUME, "configMap": {"name": CODE_CONFIG_MAP, "items": items}}


MOUNT = {"name": CODE_VOLUME, "mountPath": CODE_MOUNT, "readOnly": True}
ARGS = ["--code", CODE_MOUNT]


def _files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part in _SKIPPED_DIRS or part.startswith(".") for part in parts) or path.suffix == ".pyc":
            continue
        if path.is_file():
            found.append(path)
    return found


def read_code(root: Path, folders: list[str], *, where: str) -> CodeBundle | None:
    """The code folders' files under ``root`` (None when there are no folders); :class:`InvalidInput` naming
    ``where`` (the file and key that list them) for a missing folder or code over :data:`LIMIT_BYTES`."""
    if not folders:
        return None
    files: list[tuple[str, bytes]] = []
    sizes: dict[str, int] = {}
    for folder in folders:
        path = root / folder
        if not path.is_dir():
            raise InvalidInput(f"{where}: {folder}/: no such folder in the project ({root})")
        for file in _files(path):
            content = file.read_bytes()
            files.append((file.relative_to(root).as_posix(), content))
            sizes[folder] = sizes.get(folder, 0) + len(content)
    total = sum(sizes.values())
    if total > LIMIT_BYTES:
        listed = ", ".join(f"{folder}/ ({size / 1024:,.0f} KiB)" for folder, size in sizes.items())
        raise InvalidInput(
            f"{where}: {listed}: {total / 1024:,.0f} KiB of code, over the {LIMIT_BYTES // 1024} KiB a run ships to "
            "GKE (a ConfigMap); keep data in the bucket, or build an image FROM the trainer image and set image: "
            "(docs/gke.md)"
        )
    return CodeBundle(tuple(folders), tuple(sorted(files)))
