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
    # (timesteps, wall seconds) at the ends of the last episodes: the run's recent speed
    clock: deque[tuple[int, float]] = field(default_factory=lambda: deque(maxlen=MEAN_WINDOW))
    start: int = 0  # the trainer start that trained the last episode (its line's ``start``; 0 in older logs)

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
            if isinstance(record.get("start"), int):
                self.start = max(self.start, record["start"])
            if "return" in record:
                self.returns.append(float(record["return"]))
            if "wall_seconds" in record and "timesteps" in record:
                self.clock.append((int(record["timesteps"]), float(record["wall_seconds"])))
        return records

    @property
    def wall_seconds(self) -> float | None:
        """Training time at the end of the last finished episode."""
        return self.clock[-1][1] if self.clock else None

    @property
    def timesteps_per_second(self) -> float | None:
        """The speed over the last episodes (up to 100): what the run does now, after warm-up and replay start."""
        if len(self.clock) < 2:
            return None
        (t0, w0), (t1, w1) = self.clock[0], self.clock[-1]
        return (t1 - t0) / (w1 - w0) if w1 > w0 and t1 > t0 else None

    @property
    def mean_return(self) -> float | None:
        return sum(self.returns) / len(self.returns) if self.returns else None


def read_all(path: Path) -> list[dict[str, Any]]:
    """Every episode record of a finished or running experiment."""
    return ProgressReader(path).read()
