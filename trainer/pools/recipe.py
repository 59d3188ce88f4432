"""How every pool makes and steps its environments, so that in-process, subprocess and remote stepping agree.

An *agent step* applies one action ``repeat_actions`` times (stopping early when the episode ends) and sums the
rewards; timesteps, budgets and ``max_timesteps_per_episode`` all count agent steps. The environment adapter counts
its own ``execute`` calls, so it is made with ``repeat_actions`` times the experiment's episode limit, and a pool
reports its limit back in agent steps. Environment ``i`` of a run is seeded with ``seed + i`` so that parallel
environments do not replay the same episodes.

Nothing here imports TensorFlow: subprocess and env-worker processes use this module too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from trainer.environments import make_environment
from trainer.kernel.spec import Experiment
from trainer.kernel.spec.environment import CustomEnvironment, GymnasiumEnvironment, TensorforceEnvironment
from trainer.pools.base import RUNNING, Step


@dataclass(frozen=True)
class EnvironmentRecipe:
    """Everything needed to make environment ``i`` of an experiment (picklable, for subprocesses)."""

    spec: GymnasiumEnvironment | TensorforceEnvironment | CustomEnvironment
    seed: int | None = None
    max_timesteps_per_episode: int | None = None  # in agent steps; None: the environment's own limit
    repeat_actions: int = 1

    @classmethod
    def of(cls, experiment: Experiment) -> EnvironmentRecipe:
        return cls(
            spec=experiment.environment,
            seed=experiment.seed,
            max_timesteps_per_episode=experiment.max_timesteps_per_episode,
            repeat_actions=experiment.repeat_actions,
        )

    @property
    def imports_tensorflow(self) -> bool:
        """TensorForce's own environments import TensorFlow (so they are kept out of subprocesses by default)."""
        return isinstance(self.spec, TensorforceEnvironment)

    def make(self, index: int) -> Any:
        """Environment ``index`` (TensorForce's environment interface, see :mod:`trainer.environments`)."""
        limit = self.max_timesteps_per_episode
        return make_environment(
            self.spec,
            seed=None if self.seed is None else self.seed + index,
            max_episode_timesteps=None if limit is None else limit * self.repeat_actions,
        )

    def agent_limit(self, environment: Any) -> int | None:
        """The environment's episode limit in agent steps."""
        limit = environment.max_episode_timesteps()
        return None if limit is None else math.ceil(limit / self.repeat_actions)

    def step(self, environment: Any, action: Any) -> Step:
        """One agent step: the action ``repeat_actions`` times, rewards summed, stopping when the episode ends."""
        total = 0.0
        states, terminal = None, RUNNING
        for _ in range(self.repeat_actions):
            states, terminal, reward = environment.execute(action)
            total += float(reward)
            if terminal != RUNNING:
                break
        return Step(states=states, terminal=int(terminal), reward=total)
