"""The interface between the training loop and the environments it steps.

Index ``i`` of a pool is TensorForce's parallel index ``i`` (``agent.act(..., parallel=[i, ...])``), so one
agent with ``parallel_interactions = pool.size`` acts for every environment in one batched call.

A pool may lose an environment (an env-worker process died or its connection broke). It never raises for that:
``step`` reports the episode as aborted and ``reset`` answers ``None`` for an index that is not available yet;
the loop ends the agent's side of an aborted episode and asks again later, while the pool reconnects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

RUNNING, TERMINATED, TRUNCATED = 0, 1, 2


@dataclass(frozen=True)
class Step:
    """What one agent step gave: rewards are summed over ``repeat_actions`` repeats of the action."""

    states: Any
    terminal: int  # RUNNING, TERMINATED or TRUNCATED (time limit)
    reward: float
    aborted: bool = False  # the environment was lost mid-episode; ``states`` is None


class EnvironmentPool(Protocol):
    """``size`` environments of one spec, stepped together."""

    @property
    def size(self) -> int: ...

    def states(self) -> dict[str, Any]:
        """TensorForce's ``states`` spec (the same for every environment of the pool)."""
        ...

    def actions(self) -> dict[str, Any]:
        """TensorForce's ``actions`` spec."""
        ...

    def max_episode_timesteps(self) -> int | None:
        """The episode limit in agent steps (None: unlimited)."""
        ...

    def reset(self, indices: Sequence[int]) -> list[Any | None]:
        """Start an episode in each environment; ``None`` for one that is not available right now."""
        ...

    def step(self, indices: Sequence[int], actions: Sequence[Any]) -> list[Step]:
        """Apply ``actions[k]`` to environment ``indices[k]`` (repeated ``repeat_actions`` times), all at once."""
        ...

    def close(self) -> None:
        """Stop the environments (and any processes or connections behind them)."""
        ...
