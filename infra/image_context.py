"""The trainer image's build context: the files ``docker build -f trainer/Dockerfile .`` sends, as one deterministic
``tar.gz`` and its digest, which names the image (``infra.image_names``) — so an unchanged trainer never rebuilds.

The context is the source root (the folder holding ``pyproject.toml``, ``trainer/Dockerfile`` and ``.dockerignore``)
less what ``.dockerignore`` excludes, read by Docker's rules (the Dockerfile reference, ".dockerignore file", and
moby's ``patternmatcher``): lines trimmed, ``#`` lines and blank ones skipped, ``!`` an exception; a pattern is
cleaned as Go's ``filepath.Clean`` does (a leading ``/`` dropped) and matches a path when it matches the path or one
of its parent folders; ``*`` and ``?`` stop at ``/``, ``**`` matches any number of folders; the last matching line
decides. The tar holds regular files only, in sorted order, with mtime 0, uid/gid 0, no user names and the mode's
execute bit kept (0755 or 0644); gzip's header carries no name and mtime 0. The same files give the same tar, so
the digest (of the tar) is of the content alone: a file outside the context (``docs/``, ``experiments/``) changes
nothing.

Stdlib only: the release workflow runs ``python3 -m infra.image_context`` before anything is installed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import posixpath
import re
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from trainer.kernel.errors import TfcliError

DOCKERFILE = "trainer/Dockerfile"
IGNORE_FILE = ".dockerignore"
# What a source root must hold to be the trainer's build context.
REQUIRED = ("pyproject.toml", DOCKERFILE, IGNORE_FILE)


@dataclass(frozen=True)
class IgnoreRule:
    pattern: re.Pattern[str]
    exception: bool
    text: str = ""  # the cleaned pattern, as moby's ``Pattern.String()``: what decides whether a folder is walked


def _glob_regex(pattern: str) -> str:
    """Go's ``filepath.Match`` plus ``**`` as a regular expression over ``/``-separated paths."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                raise ValueError(f"unterminated character class in {pattern!r}")
            body = pattern[i + 1 : end]
            if body in ("", "^"):
                raise ValueError(f"empty character class in {pattern!r}")
            out.append(f"[{body}]")  # Go's negation is ^, as a regular expression's
            i = end + 1
        elif char == "\\":
            if i + 1 >= len(pattern):
                raise ValueError(f"trailing backslash in {pattern!r}")
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def parse_ignore(text: str, *, where: str = IGNORE_FILE) -> list[IgnoreRule]:
    """A ``.dockerignore`` file's rules, in order; a line Docker refuses is a :class:`TfcliError` naming it."""
    rules = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        line = line[1:].strip() if exception else line
        cleaned = posixpath.normpath(line).lstrip("/")
        if not cleaned or cleaned == ".":
            raise TfcliError(f"{where}: line {number}: {raw.strip()!r} is not a pattern")
        try:
            rules.append(IgnoreRule(re.compile(_glob_regex(cleaned) + r"\Z"), exception, cleaned))
        except (ValueError, re.error) as error:
            raise TfcliError(f"{where}: line {number}: {error}") from None
    return rules


def excluded(rules: list[IgnoreRule], path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is left out: the last rule matching it or a parent decides."""
    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    result = False
    for rule in rules:
        if any(rule.pattern.match(candidate) for candidate in candidates):
            result = not rule.exception
    return result


@dataclass(frozen=True)
class BuildContext:
    """The context's files (sorted relative paths), its ``tar.gz`` and the sha256 of the tar inside (not of the gzip
    stream, whose bytes depend on the zlib that made it)."""

    files: tuple[str, ...]
    archive: bytes
    digest: str  # hex

    @property
    def short(self) -> str:
        """The first 16 hex digits: the image tag's part (64 bits: no two trainers of one project collide)."""
        return self.digest[:16]


def source_root() -> Path:
    """Where the trainer's source is: the folder above the ``infra`` package that runs this (a checkout, or an
    editable install). A wheel installed elsewhere has no Dockerfile beside it: then the user names a ready image."""
    return Path(__file__).resolve().parents[1]


def has_source(root: Path | None = None) -> bool:
    """Whether the trainer's source is there to build from (a checkout or an editable install; a wheel installed
    into site-packages has no ``pyproject.toml`` or ``.dockerignore`` beside its packages)."""
    root = root or source_root()
    return all((root / name).is_file() for name in REQUIRED)


def context_files(root: Path) -> list[str]:
    """The context's regular files, relative and sorted; a missing part is a :class:`TfcliError`."""
    missing = [name for name in REQUIRED if not (root / name).is_file()]
    if missing:
        raise TfcliError(
            f"the trainer's build context is incomplete: {', '.join(missing)} missing in {root}",
            hint="run tfcli from a checkout of its source, or set `image:` in tfcli.yaml to a ready trainer image",
        )
    rules = parse_ignore((root / IGNORE_FILE).read_text(encoding="utf-8"))
    files = []
    for folder, folders, names in os.walk(root):  # links to folders are not followed, as Docker's walk
        base = Path(folder).relative_to(root).as_posix()
        prefix = "" if base == "." else f"{base}/"
        folders[:] = [name for name in folders if not _skipped_folder(rules, prefix + name)]
        for name in names:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink() and not excluded(rules, prefix + name):
                files.append(prefix + name)
    return sorted(files)


def _skipped_folder(rules: list[IgnoreRule], relative: str) -> bool:
    """Whether the walk leaves out the folder ``relative`` and all it holds, as Docker's does (moby's
    ``pkg/archive.TarWithOptions``): an excluded folder is skipped unless an exception's pattern starts with its path
    (``!dir/file`` keeps ``dir`` walked). So ``.venv`` under ``*`` and ``!tfcli/`` is never read, and an exception
    such as ``!**/keep.txt`` brings back nothing from a skipped folder, in Docker's context as in this one."""
    if not excluded(rules, relative):
        return False
    folder = f"{relative}/"
    return not any(rule.exception and f"{rule.text}/".startswith(folder) for rule in rules)


def build_context(root: Path | None = None) -> BuildContext:
    """The deterministic ``tar.gz`` of the context at ``root`` (default :func:`source_root`)."""
    root = root or source_root()
    files = context_files(root)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:  # PAX, tarfile's default format
        for relative in files:
            data = (root / relative).read_bytes()
            info = tarfile.TarInfo(relative)
            info.size = len(data)
            info.mtime = 0
            info.mode = 0o755 if (root / relative).stat().st_mode & 0o111 else 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    archive = gzip.compress(raw.getvalue(), mtime=0)
    return BuildContext(tuple(files), archive, hashlib.sha256(raw.getvalue()).hexdigest())


def main(argv: list[str]) -> int:
    """``python3 -m infra.image_context [ROOT]``: print the context's digest (the release workflow tags with it)."""
    context = build_context(Path(argv[0]) if argv else None)
    print(context.short)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
