"""A pool whose calls start and stop the run's stall clock (:mod:`trainer.stall`).

A call that gets at least one live answer (a state from ``reset``, a step that was not aborted) stops the clock; one
that hangs, or whose environments are all lost (a dead env-worker: aborted steps, ``None`` resets), leaves it
running from the first such call, so a run whose every environment is gone fails after ``step_timeout`` instead of
retrying for ever.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trainer.pools.base import EnvironmentPool, Step
from trainer.stall import StallWatch


class WatchedPool:
    def __init__(self, pool: EnvironmentPool, watch: StallWatch) -> None:
        self.pool = pool
        self._watch = watch

    @property
    def size(self) -> int:
        return self.pool.size

    def states(self) -> dict[str, Any]:
        return self.pool.states()

    def actions(self) -> dict[str, Any]:
        return self.pool.actions()

    def max_episode_timesteps(self) -> int | None:
        return self.pool.max_episode_timesteps()

    def reset(self, indices: Sequence[int]) -> list[Any | None]:
        self._watch.waiting()
        states = self.pool.reset(indices)
        if any(state is not None for state in states):
            self._watch.answered()
        return states

    def step(self, indices: Sequence[int], actions: Sequence[Any]) -> list[Step]:
        self._watch.waiting()
        steps = self.pool.step(indices, actions)
        if any(not step.aborted for step in steps):
            self._watch.answered()
        return steps

    def close(self) -> None:
        self.pool.close()
