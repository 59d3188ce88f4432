"""Apply the wrappers an environment spec lists, in order, around a gymnasium level.

Each wrapper spec's extra keys are the gymnasium wrapper's own keyword arguments, so the spec reads like
gymnasium's documentation. Frame stacking is the one place that does more than forward: gymnasium stacks along a
new first axis, ``(4, 84, 84)``, while TensorForce's ``conv2d`` wants channels last, so the stack is moved to the
last axis, ``(84, 84, 4)`` (colour frames ``(H, W, C)`` become ``(H, W, C * k)``).

``bound_observation``, ``drop_observation_indices`` and ``terminal_reward`` are TensorForce 0.6.5's OpenAIGym
arguments ``min_value``/``max_value``, ``drop_states_indices`` and ``terminal_reward``, with its meaning: the
bounds replace only the unbounded entries (beyond 1e6, TensorForce's cut-off) and observations are clipped to the
result, so TensorForce normalizes them; indices are dropped from a flat observation; the extra reward is paid when
the level itself ends an episode (gymnasium's ``terminated``), never at a time limit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces, wrappers

from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec.environment import WrapperSpec


def _channels_last(stacked: np.ndarray) -> np.ndarray:
    """``(k, *frame)`` -> ``(*frame, k)``; a colour frame's channels and the stack share the last axis."""
    moved = np.moveaxis(stacked, 0, -1)
    if moved.ndim == 4:
        moved = moved.reshape(*moved.shape[:2], -1)
    return np.ascontiguousarray(moved)


def _frame_stack(env: gymnasium.Env[Any, Any], **arguments: Any) -> gymnasium.Env[Any, Any]:
    stacked = wrappers.FrameStackObservation(env, **arguments)
    space = stacked.observation_space
    if not isinstance(space, spaces.Box):
        raise InvalidInput(f"environment.wrappers: frame_stack needs array observations, not {space}")
    low, high = _channels_last(space.low), _channels_last(space.high)
    box = spaces.Box(low=low, high=high, shape=low.shape, dtype=space.dtype)
    return wrappers.TransformObservation(stacked, _channels_last, box)


def _clip_reward(env: gymnasium.Env[Any, Any], **arguments: Any) -> gymnasium.Env[Any, Any]:
    # DQN's clipping to [-1, 1] unless the spec says otherwise (gymnasium has no default bounds).
    return wrappers.ClipReward(env, **{"min_reward": -1.0, "max_reward": 1.0, **arguments})


UNBOUNDED = 1e6  # TensorForce's cut-off for "no bound" (trainer/environments/spaces.py uses it too)


def _box(env: gymnasium.Env[Any, Any], what: str) -> spaces.Box:
    space = env.observation_space
    if not isinstance(space, spaces.Box):
        raise ValueError(f"{what} needs array observations, not {space}")
    return space


def _bound_observation(env: gymnasium.Env[Any, Any], *, min_value: float, max_value: float) -> gymnasium.Env[Any, Any]:
    space = _box(env, "bound_observation")
    if not min_value < max_value:
        raise ValueError(f"min_value {min_value} must be below max_value {max_value}")
    low = np.where(np.asarray(space.low, dtype=np.float64) <= -UNBOUNDED, min_value, space.low).astype(np.float32)
    high = np.where(np.asarray(space.high, dtype=np.float64) >= UNBOUNDED, max_value, space.high).astype(np.float32)
    box = spaces.Box(low=low, high=high, shape=space.shape, dtype=np.float32)

    def clip(observation: Any) -> np.ndarray:
        return np.clip(observation, low, high).astype(np.float32)

    return wrappers.TransformObservation(env, clip, box)


def _drop_observation_indices(env: gymnasium.Env[Any, Any], *, indices: list[int]) -> gymnasium.Env[Any, Any]:
    space = _box(env, "drop_observation_indices")
    if len(space.shape) != 1:
        raise ValueError(f"drops entries of flat observations only (TensorForce's rule), not of shape {space.shape}")
    size = space.shape[0]
    outside = [index for index in indices if not 0 <= index < size]
    if outside or len(set(indices)) >= size:
        raise ValueError(f"indices {indices} must be distinct, below {size}, and leave at least one entry")
    keep = np.array([index for index in range(size) if index not in set(indices)])
    box = spaces.Box(low=space.low[keep], high=space.high[keep], dtype=space.dtype)
    return wrappers.TransformObservation(env, lambda observation: np.asarray(observation)[keep], box)


class TerminalReward(gymnasium.Wrapper[Any, Any, Any, Any]):
    """``reward`` added to the last step of an episode the level ends itself (not one a time limit cuts)."""

    def __init__(self, env: gymnasium.Env[Any, Any], *, reward: float) -> None:
        super().__init__(env)
        self.extra = float(reward)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated:
            reward = float(reward) + self.extra
        return observation, reward, terminated, truncated, info


_WRAPPERS: dict[str, Callable[..., gymnasium.Env[Any, Any]]] = {
    "atari_preprocessing": wrappers.AtariPreprocessing,
    "frame_stack": _frame_stack,
    "clip_reward": _clip_reward,
    "flatten_observation": wrappers.FlattenObservation,
    "bound_observation": _bound_observation,
    "drop_observation_indices": _drop_observation_indices,
    "terminal_reward": TerminalReward,
}


def apply_wrappers(env: gymnasium.Env[Any, Any], specs: list[WrapperSpec]) -> gymnasium.Env[Any, Any]:
    """Wrap ``env`` in each spec's wrapper, innermost first; a bad argument is the user's mistake."""
    for index, spec in enumerate(specs):
        where = f"environment.wrappers.{index}"
        try:
            env = _WRAPPERS[spec.type](env, **(spec.model_extra or {}))
        except gymnasium.error.DependencyNotInstalled as error:
            raise TfcliError(f"{where}: {spec.type} needs a package that is not installed: {error}") from error
        except (TypeError, ValueError) as error:
            raise InvalidInput(f"{where}: {spec.type}: {error}") from error
    return env
