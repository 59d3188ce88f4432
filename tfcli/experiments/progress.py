"""Reading a run's ``progress.jsonl`` (one JSON line per finished episode) as it grows."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MEAN_WINDOW = 100


@dataclass
class ProgressReader:
    """Follows ``progress.jsonl`` from where it last stopped; a half-written last line waits for the next read."""

    path: Path
    offset: int = 0
    episodes: int = 0
    timesteps: int = 0
    returns: deque[float] = field(default_factory=lambda: deque(maxlen=MEAN_WINDOW))

    def read(self) -> list[dict[str, Any]]:
        """The episodes finished since the last call."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        return self.feed(data)

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """The episodes in ``data``, the bytes of the log from ``offset`` on (a file, or an object in a bucket)."""
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        records = []
        for line in complete.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            records.append(record)
            self.episodes = max(self.episodes, int(record.get("episode", self.episodes)))
            self.timesteps = max(self.timesteps, int(record.get("timesteps", self.timesteps)))
            if "return" in record:
                self.returns.append(float(record["return"]))
        return records

    @property
    def mean_return(self) -> float | None:
        return sum(self.returns) / len(self.returns) if self.returns else None


def read_all(path: Path) -> list[dict[str, Any]]:
    """Every episode record of a finished or running experiment."""
    return ProgressReader(path).read()
