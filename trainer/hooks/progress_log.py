"""``progress.jsonl``: one JSON line per finished episode, appended and flushed as it happens.

Lines: ``{"worker", "episode", "timesteps", "return", "length", "wall_seconds"}`` with ``episode`` numbered across
all environments from 1 and ``wall_seconds`` since the run began (resumed segments included).

A run killed after its last checkpoint has written lines for episodes the resumed run will play again. On resume
the file is cut back to the checkpoint's episode count, so each episode number appears once and the file always
agrees with the checkpoint the run continues from. Nothing else is dropped: a damaged line (a disk error, a hand
edit) is skipped with a warning — the records after it are kept — and moved to ``progress.jsonl.damaged`` beside
the file rather than deleted; only a half-written last line (a write cut off by a crash) goes quietly.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TextIO

from tfcli.errors import io_failure
from trainer.files import atomic_write_text
from trainer.hooks import Hook
from trainer.state import Episode, RunState

log = logging.getLogger(__name__)

FILENAME = "progress.jsonl"
DAMAGED_SUFFIX = ".damaged"


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
    def __init__(self, path: Path) -> None:
        self._path = path
        self._file: TextIO | None = path.open("a", encoding="utf-8")

    def on_episode(self, episode: Episode, state: RunState) -> None:
        if self._file is not None:
            try:
                self._file.write(json.dumps(episode.as_json()) + "\n")
                self._file.flush()
            except OSError as error:  # a full disk: say which file, and the space left
                failure = io_failure(error, f"writing {self._path.name}", self._path)
                if failure is None:
                    raise
                raise failure from error

    def on_end(self, state: RunState, status: str) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
