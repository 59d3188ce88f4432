"""``progress.jsonl``: one JSON line per finished episode, appended and flushed as it happens.

Lines: ``{"worker", "episode", "timesteps", "return", "length", "wall_seconds"}`` with ``episode`` numbered across
all environments from 1 and ``wall_seconds`` since the run began (resumed segments included).

A run killed after its last checkpoint has written lines for episodes the resumed run will play again. On resume
the file is cut back to the checkpoint's episode count (and a half-written last line is dropped), so each episode
number appears once and the file always agrees with the checkpoint the run continues from.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TextIO

from trainer.files import atomic_write_text
from trainer.hooks import Hook
from trainer.state import Episode, RunState

log = logging.getLogger(__name__)

FILENAME = "progress.jsonl"


def _read(path: Path) -> list[tuple[Episode, str]]:
    """Each episode with its line, up to the first line that does not parse (a write cut off by a crash)."""
    found: list[tuple[Episode, str]] = []
    if not path.is_file():
        return found
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            found.append((Episode.from_json(json.loads(line)), line))
        except (ValueError, KeyError, TypeError):
            break
    return found


def read_episodes(path: Path) -> list[Episode]:
    """The episodes in a progress file."""
    return [episode for episode, _ in _read(path)]


def rewind(path: Path, episodes: int) -> list[Episode]:
    """Cut the file back to its first ``episodes`` episodes (those a checkpoint counts) and return them."""
    kept = [(episode, line) for episode, line in _read(path) if episode.episode <= episodes]
    text = "".join(line if line.endswith("\n") else line + "\n" for _, line in kept)
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        log.info("%s: dropping episodes after %d (they are played again after the resume)", path.name, episodes)
        atomic_write_text(path, text)
    if len(kept) < episodes:
        log.warning("%s holds %d of the %d episodes the checkpoint counts", path.name, len(kept), episodes)
    return [episode for episode, _ in kept]


class ProgressLog(Hook):
    def __init__(self, path: Path) -> None:
        self._file: TextIO | None = path.open("a", encoding="utf-8")

    def on_episode(self, episode: Episode, state: RunState) -> None:
        if self._file is not None:
            self._file.write(json.dumps(episode.as_json()) + "\n")
            self._file.flush()

    def on_end(self, state: RunState, status: str) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
