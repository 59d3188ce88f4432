"""The project's own code on GKE: its code folders (``code:`` in tfcli.yaml, default ``envs/``) travel with the run in
a ConfigMap, mounted read-only at :data:`CODE_MOUNT` in the learner's and the env-workers' pods, whose trainer puts
that folder first on ``sys.path`` (``--code``): ``envs.gridworld`` imports there as it does on this machine.

Why a ConfigMap and not the results bucket: it is applied with the Jobs in the same ``pulumi up``, needs no upload
step and no FUSE mount for the env-workers (which have no bucket access), and is read-only by construction. Its
limit is etcd's object size (1 MiB); :data:`LIMIT_BYTES` leaves room for the keys and metadata, and a project whose
code is bigger is told so (exit 2, naming the folders) — data belongs in the bucket, packages in an image built
``FROM`` the trainer image (docs/gke.md).

Only the project's own files travel, read without trusting the folder (it may be a clone of anything): a ``code:``
folder must be a relative path inside the project and not itself a link, and a link inside it must resolve inside
the project (a link to a folder there is followed, its files shipped under the link's name); one leading out (a
private key, ``/etc/passwd``), a name that is not UTF-8, a FIFO or device, or too much code is exit 2 naming the
stack key and the file, before any file is read. Each file keeps its permission bits (the volume item's ``mode``).

The digest of the files (paths, contents, modes) goes on the pod templates (:data:`CODE_DIGEST`), so changed code is
a new Job name: a restart replaces the Jobs and the new pods run the new code.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from trainer.kernel.errors import InvalidInput

CODE_MOUNT = "/opt/tfcli/code"
CODE_CONFIG_MAP = "project-code"
CODE_VOLUME = "code"
CODE_DIGEST = "tfcli/code-sha256"
LIMIT_BYTES = 768 * 1024
_SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_KEY_CHARACTERS = re.compile(r"[^-._a-zA-Z0-9]")


class CodeFile(NamedTuple):
    """One shipped file: its path relative to the project root, its bytes and its permission bits (kept, so a
    script that is executable here is executable in the pod)."""

    path: str
    content: bytes
    mode: int


@dataclass(frozen=True)
class CodeBundle:
    """The files of the code folders, sorted by path."""

    folders: tuple[str, ...]
    files: tuple[CodeFile, ...]

    @property
    def digest(self) -> str:
        hasher = hashlib.sha256()
        for path, content, mode in self.files:
            hasher.update(path.encode() + b"\0" + hashlib.sha256(content).digest() + mode.to_bytes(2, "big"))
        return hasher.hexdigest()[:16]

    def keys(self) -> list[tuple[str, str]]:
        """``(ConfigMap key, path)`` per file: a key holds only ``[-._a-zA-Z0-9]``, so a numbered, flattened path."""
        return [
            (f"{index:04d}-{_KEY_CHARACTERS.sub('_', file.path)}"[:253], file.path)
            for index, file in enumerate(self.files)
        ]

    def config_map(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """The ConfigMap: text files under ``data``, others under ``binaryData`` (base64)."""
        import base64

        data: dict[str, str] = {}
        binary: dict[str, str] = {}
        for (key, _), file in zip(self.keys(), self.files, strict=True):
            try:
                data[key] = file.content.decode("utf-8")
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(file.content).decode()
        config_map: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
        if binary:
            config_map["binaryData"] = binary
        return config_map

    def volume(self) -> dict[str, Any]:
        """The pods' volume: each item at its path with its file's mode (``KeyToPath.mode``, 0-0777; without it
        every file gets the volume's ``defaultMode``, 0644, and an executable script loses its ``x``). The pods'
        ``fsGroup`` makes the kubelet OR the group bits with ``rw-rw----`` (PodSecurityContext.fsGroup), so a file
        private to its owner here is still readable by the trainer's user there."""
        items = [
            {"key": key, "path": path, "mode": file.mode}
            for (key, path), file in zip(self.keys(), self.files, strict=True)
        ]
        return {"name": CODE_VOLUME, "configMap": {"name": CODE_CONFIG_MAP, "items": items}}


MOUNT = {"name": CODE_VOLUME, "mountPath": CODE_MOUNT, "readOnly": True}
ARGS = ["--code", CODE_MOUNT]


def _shown(path: str) -> str:
    """A relative path as a message can print it, even one whose bytes are not UTF-8 (``\\xff`` for such a byte)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class _Found:
    path: str  # relative to the project root, as the pods see it under CODE_MOUNT
    source: str  # where to read it (a link's path: opening it reads its target, checked to be in the project)
    size: int
    mode: int


class _Walk:
    """The files of one code folder, walked without trusting it: every link is resolved and must stay inside the
    project (a link out of it would ship whatever it names, a private key or ``/etc/passwd``, to the cluster);
    links to folders inside it are followed as the folder's own files (a loop is refused); a name that is not
    UTF-8 cannot be a ConfigMap item's path, and a FIFO or device would block or stream forever, so each is refused
    naming the file. Only ``stat`` is called here: nothing is read until the sizes are known to fit."""

    def __init__(self, root: Path, where: str) -> None:
        self.root = root
        self.where = where

    def refuse(self, path: str, problem: str) -> InvalidInput:
        return InvalidInput(f"{self.where}: {_shown(path)}: {problem}")

    def inside(self, path: str, source: str) -> Path:
        """The real path ``source`` names; refused when it leads out of the project."""
        target = Path(os.path.realpath(source))
        if not target.is_relative_to(self.root):
            raise self.refuse(
                path,
                f"is a link to {_shown(str(target))}, outside the project ({self.root}); only the project's own "
                "files are shipped to GKE: copy what the code needs into the folder",
            )
        return target

    def files(self, folder: str, source: str, chain: frozenset[Path]) -> Iterator[_Found]:
        with os.scandir(source) as entries:
            listed = sorted(entries, key=lambda entry: entry.name)
        for entry in listed:
            if entry.name in _SKIPPED_DIRS or entry.name.startswith(".") or entry.name.endswith(".pyc"):
                continue
            path = f"{folder}/{entry.name}"
            try:
                path.encode("utf-8")
            except UnicodeEncodeError:
                raise self.refuse(
                    path, "the file name is not UTF-8; rename it (a ConfigMap item's path is text)"
                ) from None
            real = self.inside(path, entry.path) if entry.is_symlink() else Path(entry.path)
            try:
                status = os.stat(entry.path)
            except OSError as error:
                raise self.refuse(path, f"cannot be read ({error.strerror})") from None
            if stat.S_ISDIR(status.st_mode):
                real = real.resolve()
                if real in chain:
                    raise self.refuse(path, "is a link to a folder that contains it (a loop)")
                yield from self.files(path, entry.path, chain | {real})
            elif stat.S_ISREG(status.st_mode):
                yield _Found(path, entry.path, status.st_size, stat.S_IMODE(status.st_mode) & 0o777)
            else:
                raise self.refuse(path, "is not a regular file or folder (a FIFO, socket or device cannot be shipped)")

    def folder(self, folder: str) -> Iterator[_Found]:
        """The files of a ``code:`` folder: relative, inside the project, and not itself a link."""
        path = self.root / folder
        if Path(folder).is_absolute() or ".." in Path(folder).parts:
            raise self.refuse(folder, "is not a folder inside the project (give a relative path such as envs)")
        if path.is_symlink():
            raise self.refuse(
                folder + "/", "is a link; list the folder it names instead (a code folder must be the project's own)"
            )
        real = self.inside(folder, str(path)) if path.exists() else path
        if not path.is_dir():
            raise self.refuse(folder + "/", f"no such folder in the project ({self.root})")
        yield from self.files(folder, str(path), frozenset({real.resolve()}))


def _too_big(where: str, sizes: dict[str, int]) -> InvalidInput:
    total = sum(sizes.values())
    listed = ", ".join(f"{folder}/ ({size / 1024:,.0f} KiB)" for folder, size in sizes.items())
    return InvalidInput(
        f"{where}: {listed}: {total / 1024:,.0f} KiB of code, over the {LIMIT_BYTES // 1024} KiB a run ships to "
        "GKE (a ConfigMap); keep data in the bucket, or build an image FROM the trainer image and set image: "
        "(docs/gke.md)"
    )


def read_code(root: Path, folders: list[str], *, where: str) -> CodeBundle | None:
    """The code folders' files under ``root`` (None when there are no folders); :class:`InvalidInput` naming
    ``where`` (the file and key that list them) and the file for a folder or file that is not the project's own
    (see :class:`_Walk`) or code over :data:`LIMIT_BYTES`. The sizes are summed from ``stat`` before any file is
    read, so a 3 GB file is refused without reading it, and a file that grows meanwhile is read no further than
    the limit."""
    if not folders:
        return None
    walk = _Walk(root.resolve(), where)
    found = [(folder, file) for folder in folders for file in walk.folder(folder)]
    sizes: dict[str, int] = {folder: 0 for folder in folders}
    for folder, file in found:
        sizes[folder] += file.size
    if sum(sizes.values()) > LIMIT_BYTES:
        raise _too_big(where, sizes)
    files: list[CodeFile] = []
    left = LIMIT_BYTES
    for _, file in found:
        try:
            with open(file.source, "rb") as stream:
                content = stream.read(left + 1)
        except OSError as error:
            raise walk.refuse(file.path, f"cannot be read ({error.strerror})") from None
        left -= len(content)
        if left < 0:
            raise _too_big(where, sizes)
        files.append(CodeFile(file.path, content, file.mode))
    return CodeBundle(tuple(folders), tuple(sorted(files)))
