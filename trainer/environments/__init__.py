"""Environments for the trainer: every spec becomes an object with TensorForce's environment interface.

``states()``, ``actions()``, ``reset() -> states``, ``execute(actions) -> (states, terminal, reward)`` with
terminal 0 running / 1 terminated / 2 cut off by a time limit, ``max_episode_timesteps()`` and ``close()``.
"""

from __future__ import annotations

from typing import Any

from trainer.environments.custom import make_custom_environment
from trainer.environments.gym_adapter import RUNNING, TERMINATED, TRUNCATED, GymnasiumAdapter
from trainer.environments.tensorforce_env import make_tensorforce_environment
from trainer.kernel.spec.environment import CustomEnvironment, GymnasiumEnvironment, TensorforceEnvironment

__all__ = ["RUNNING", "TERMINATED", "TRUNCATED", "GymnasiumAdapter", "make_environment"]


def make_environment(
    spec: GymnasiumEnvironment | TensorforceEnvironment | CustomEnvironment,
    *,
    seed: int | None = None,
    max_episode_timesteps: int | None = None,
) -> Any:
    """A running environment for a validated environment spec.

    ``seed`` seeds a gymnasium level's first reset and its action space (TensorForce's own environments draw
    from numpy's global RNG, which the agent's ``config.seed`` seeds). ``max_episode_timesteps`` overrides the
    level's own episode limit, counted in agent steps.
    """
    if isinstance(spec, GymnasiumEnvironment):
        return GymnasiumAdapter(spec, seed=seed, max_episode_timesteps=max_episode_timesteps)
    if isinstance(spec, CustomEnvironment):
        return make_custom_environment(spec, seed=seed, max_episode_timesteps=max_episode_timesteps)
    return make_tensorforce_environment(spec, max_episode_timesteps=max_episode_timesteps)
