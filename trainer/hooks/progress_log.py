"""``progress.jsonl``: one JSON line per finished episode, appended and flushed as it happens.

Lines: ``{"worker", "episode", "timesteps", "return", "length", "wall_seconds"}`` with ``episode`` numbered across
all environments from 1 and ``wall_seconds`` since the run began (resumed segments included).

A run killed after its last checkpoint has written lines for episodes the resumed run will play again. On resume
the file is cut back to the checkpoint's episode count, so each episode number appears once and the file always
agrees with the checkpoint the run continues from. Nothing else is dropped: a damaged line (a disk error, a hand
edit) is skipped with a warning — the records after it are kept — and moved to ``progress.jsonl.damaged`` beside
the file rather than deleted; only a half-written last line (a write cut off by a crash) goes quietly.

Publication (docs/design.md §6.2). Each line is flushed as it is written, so a local reader follows the run live.
On GKE the folder is a GCS FUSE mount, which publishes a file only when it is closed (``flush`` and ``fsync`` of a
new file reach no one), so the file is also closed and opened again for appending at the first episode at least
``publish_seconds`` (60; ``TFCLI_PUBLISH_SECONDS``) after it was last opened: the bucket holds every episode older
than that, and a killed pod loses at most that much. One file, one layout: every reader (``read_episodes``,
tfcli's progress readers, the bucket reads from an offset) reads it as before. The price is one new generation of
the object a minute: gcsfuse stages the existing object on the reopen (one read of it) and uploads it whole on the
close (only the appended bytes past 2 MB) — 60 writes an hour against GCS's one per second per object, and the
whole file re-sent once a minute while it is under 2 MB (about 20,000 episodes). A reader on another mount that
holds the previous generation gets ``ESTALE`` and must open the file again.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from trainer.hooks import Hook
from trainer.kernel.errors import io_failure
from trainer.kernel.files import atomic_write_text, strict_json_dumps
from trainer.kernel.state import Episode, RunState

log = logging.getLogger(__name__)

FILENAME = "progress.jsonl"
DAMAGED_SUFFIX = ".damaged"
PUBLISH_SECONDS = 60.0  # at most this much of the file is unpublished on a GCS FUSE mount
PUBLISH_VARIABLE = "TFCLI_PUBLISH_SECONDS"


def parse_publish_seconds(text: str | None) -> float | None:
    """``TFCLI_PUBLISH_SECONDS``: seconds between publications (None when unset); ValueError naming it otherwise."""
    if text is None or not text.strip():
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{PUBLISH_VARIABLE}: '{text}' is not a number of seconds above 0 (e.g. 60)")
    return seconds


def _read(path: Path) -> tuple[list[tuple[Episode, str]], list[tuple[int, str]]]:
    """Each episode with its line, and the damaged lines with their line numbers (a half-written last line, which
    a crash leaves, is neither)."""
    found: list[tuple[Episode, str]] = []
    damaged: list[tuple[int, str]] = []
    if not path.is_file():
        return found, damaged
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True), 1):
        try:
            found.append((Episode.from_json(json.loads(line)), line))
        except (ValueError, KeyError, TypeError):
            if line.endswith("\n"):
                damaged.append((number, line))
    return found, damaged


def read_episodes(path: Path) -> list[Episode]:
    """The episodes in a progress file (damaged lines skipped)."""
    return [episode for episode, _ in _read(path)[0]]


def rewind(path: Path, episodes: int) -> list[Episode]:
    """Cut the file back to the episodes a checkpoint counts (numbers up to ``episodes``) and return them.

    Damaged lines are skipped and reported, and appended to ``<file>.damaged``: never deleted.
    """
    found, damaged = _read(path)
    kept = [(episode, line) for episode, line in found if episode.episode <= episodes]
    if damaged:
        aside = path.with_name(path.name + DAMAGED_SUFFIX)
        log.warning(
            "%s: skipping %d damaged line(s) (line %s); kept in %s",
            path.name,
            len(damaged),
            ", ".join(str(number) for number, _ in damaged[:10]) + (", ..." if len(damaged) > 10 else ""),
            aside.name,
        )
        previous = aside.read_text(encoding="utf-8", errors="replace") if aside.is_file() else ""
        atomic_write_text(aside, previous + "".join(line for _, line in damaged))
    text = "".join(line if line.endswith("\n") else line + "\n" for _, line in kept)
    if path.is_file() and path.read_text(encoding="utf-8", errors="replace") != text:
        if len(kept) < len(found) and not episodes:
            log.info(
                "%s: no checkpoint was ever made: starting from zero, dropping its %d uncheckpointed episode(s)",
                path.name,
                len(found),
            )
        elif len(kept) < len(found):
            log.info("%s: dropping episodes after %d (they are played again after the resume)", path.name, episodes)
        atomic_write_text(path, text)
    if len(kept) < episodes:
        log.warning("%s holds %d of the %d episodes the checkpoint counts", path.name, len(kept), episodes)
    return [episode for episode, _ in kept]


class ProgressLog(Hook):
    """Appends each episode's line, flushed; closes and reopens the file every ``publish_seconds`` (module doc)."""

    def __init__(
        self, path: Path, publish_seconds: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._path = path
        self._publish_seconds = PUBLISH_SECONDS if publish_seconds is None else publish_seconds
        self._clock = clock
        self._file: TextIO | None = None
        self._opened = 0.0
        self._open()

    def _open(self) -> None:
        self._file = self._path.open("a", encoding="utf-8")
        self._opened = self._clock()

    def on_episode(self, episode: Episode, state: RunState) -> None:
        if self._file is not None:
            try:
                self._file.write(strict_json_dumps(episode.as_json()) + "\n")
                self._file.flush()
                if self._clock() - self._opened >= self._publish_seconds:
                    self._file.close()  # what publishes the file on a GCS FUSE mount
                    self._file = None
                    self._open()
            except OSError as error:  # a full disk: say which file, and the space left
                failure = io_failure(error, f"writing {self._path.name}", self._path)
                if failure is None:
                    raise
                raise failure from error

    def on_end(self, state: RunState, status: str) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
