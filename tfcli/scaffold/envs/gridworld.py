"""A small gymnasium environment to start from: walk from one corner of a grid to the other.

Replace it with your own problem. Any ``gymnasium.Env`` (or ``tensorforce.Environment``) subclass works: tfcli reads
its observation and action spaces, steps it in every run mode, and records ``play --video`` from
``render()`` when it supports ``render_mode="rgb_array"``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

MOVES = np.array([(0, 1), (1, 0), (0, -1), (-1, 0)])  # right, down, left, up (row, column)


class GridWorld(gymnasium.Env[np.ndarray, np.int64]):
    """The agent starts at the top-left cell and gets +1 for reaching the bottom-right one, -0.01 for every step.

    Observation: the agent's row and column, scaled to [0, 1]. Actions: 0 right, 1 down, 2 left, 3 up.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 8}  # noqa: RUF012 - gymnasium's own class attribute

    def __init__(self, size: int = 5, render_mode: str | None = None, cell_pixels: int = 16) -> None:
        if size < 2:
            raise ValueError(f"size must be at least 2, got {size}")
        self.size = size
        self.render_mode = render_mode
        self.cell_pixels = cell_pixels
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(4)
        self._position = np.zeros(2, dtype=np.int64)

    def _observation(self) -> np.ndarray:
        return (self._position / (self.size - 1)).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._position = np.zeros(2, dtype=np.int64)
        return self._observation(), {}

    def step(self, action: np.int64) -> tuple[np.ndarray, float, bool, bool, dict]:
        self._position = np.clip(self._position + MOVES[int(action)], 0, self.size - 1)
        done = bool((self._position == self.size - 1).all())
        return self._observation(), 1.0 if done else -0.01, done, False, {}

    def render(self) -> np.ndarray | None:
        """An RGB frame: grey cells, the goal green, the agent blue."""
        if self.render_mode != "rgb_array":
            return None
        frame = np.full((self.size, self.size, 3), 200, dtype=np.uint8)
        frame[-1, -1] = (40, 160, 60)
        frame[tuple(self._position)] = (40, 80, 200)
        return np.kron(frame, np.ones((self.cell_pixels, self.cell_pixels, 1), dtype=np.uint8))
