"""The counters of one training run: what a checkpoint restores and what every output file reports.

Timesteps are agent steps (one ``act`` per environment; with ``repeat_actions`` each one is several environment
frames) and count across all environments. An episode counts when its environment ends it (terminated or cut by
the episode time limit); episodes the trainer itself cuts short — the budget ran out mid-episode, the run was
paused, an environment worker was lost — are not counted, so ``episodes`` equals the lines in ``progress.jsonl``.
Wall seconds add up over resumed segments of one run: they measure training time, not time between restarts.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

RECENT_EPISODES = 100  # ``mean_return_last_100`` in result.json


@dataclass(frozen=True)
class Episode:
    """One finished episode, as ``progress.jsonl`` records it (``wall_seconds`` since the run began)."""

    worker: int
    episode: int
    timesteps: int
    length: int
    wall_seconds: float
    # ``return`` is a keyword in Python, hence the field name; ``as_json`` writes it as "return".
    episode_return: float
    start: int = 0  # which start of the trainer trained it (RunState.starts): readers count node time by it

    def as_json(self) -> dict[str, Any]:
        return {
            "worker": self.worker,
            "episode": self.episode,
            "timesteps": self.timesteps,
            "return": self.episode_return,
            "length": self.length,
            "wall_seconds": round(self.wall_seconds, 3),
            "start": self.start,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Episode:
        return cls(
            worker=int(data["worker"]),
            episode=int(data["episode"]),
            timesteps=int(data["timesteps"]),
            length=int(data["length"]),
            wall_seconds=float(data["wall_seconds"]),
            episode_return=float(data["return"]),
            start=int(data.get("start", 0)),
        )


@dataclass
class RunState:
    """Counters of the run so far, including segments before a resume."""

    timesteps: int = 0
    episodes: int = 0
    updates: int = 0
    earlier_wall_seconds: float = 0.0  # training time of the segments before this process
    starts: int = 0  # times the trainer started on the run, this process included once it counts itself (run.py)
    recent_returns: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_EPISODES))
    started: float = field(default_factory=time.monotonic)  # when this process's segment began

    @property
    def wall_seconds(self) -> float:
        return self.earlier_wall_seconds + (time.monotonic() - self.started)

    @property
    def mean_recent_return(self) -> float | None:
        return sum(self.recent_returns) / len(self.recent_returns) if self.recent_returns else None

    def counters(self) -> dict[str, Any]:
        """What a checkpoint's ``state.json`` holds (the counters; returns come back from ``progress.jsonl``)."""
        return {
            "timesteps": self.timesteps,
            "episodes": self.episodes,
            "updates": self.updates,
            "wall_seconds": round(self.wall_seconds, 3),
            "starts": self.starts,
        }

    @classmethod
    def resumed(cls, counters: dict[str, Any], returns: list[float]) -> RunState:
        """The state a checkpoint's counters and the kept ``progress.jsonl`` episodes describe."""
        state = cls(
            timesteps=int(counters["timesteps"]),
            episodes=int(counters["episodes"]),
            updates=int(counters.get("updates", 0)),
            earlier_wall_seconds=float(counters["wall_seconds"]),
            starts=int(counters.get("starts", 0)),
        )
        state.recent_returns.extend(returns[-RECENT_EPISODES:])
        return state
