"""Apply the wrappers an environment spec lists, in order, around a gymnasium level.

Each wrapper spec's extra keys are the gymnasium wrapper's own keyword arguments, so the spec reads like
gymnasium's documentation. Frame stacking is the one place that does more than forward: gymnasium stacks along a
new first axis, ``(4, 84, 84)``, while TensorForce's ``conv2d`` wants channels last, so the stack is moved to the
last axis, ``(84, 84, 4)`` (colour frames ``(H, W, C)`` become ``(H, W, C * k)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces, wrappers

from tfcli.errors import InvalidInput, TfcliError
from tfcli.spec.environment import WrapperSpec


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


_WRAPPERS: dict[str, Callable[..., gymnasium.Env[Any, Any]]] = {
    "atari_preprocessing": wrappers.AtariPreprocessing,
    "frame_stack": _frame_stack,
    "clip_reward": _clip_reward,
    "flatten_observation": wrappers.FlattenObservation,
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
