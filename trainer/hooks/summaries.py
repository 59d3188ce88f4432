"""TensorBoard summaries of the run in ``summaries/trainer/`` (TensorForce's own summarizer writes
``summaries/agent/``; see :func:`trainer.agents.agent_summarizer`).

Per episode: ``episode/return`` and ``episode/length`` at the step of the run's timesteps. Every
``summary_frequency``: ``run/timesteps_per_second`` (over the period), ``run/mean_return_last_100``,
``run/episodes`` and ``run/updates``. A resumed run appends to the same folder (TensorBoard reads every event file
in it). Episodes played again after a crash (those after the last checkpoint) appear twice at the same steps.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tfcli.spec import Frequency
from trainer.hooks import Hook
from trainer.schedule import Every
from trainer.state import Episode, RunState


class RateMeter:
    """Timesteps per second since the previous reading."""

    def __init__(self, state: RunState) -> None:
        self._timesteps, self._at = state.timesteps, time.monotonic()

    def read(self, state: RunState) -> float:
        now = time.monotonic()
        rate = (state.timesteps - self._timesteps) / max(now - self._at, 1e-9)
        self._timesteps, self._at = state.timesteps, now
        return rate


class TensorBoardSummaries(Hook):
    def __init__(self, directory: Path, frequency: Frequency, state: RunState) -> None:
        import tensorflow as tf

        self._tf: Any = tf
        self._writer = tf.summary.create_file_writer(str(directory))
        self._every = Every(frequency, state)
        self._rate = RateMeter(state)

    def on_episode(self, episode: Episode, state: RunState) -> None:
        tf = self._tf
        with self._writer.as_default(step=episode.timesteps):
            tf.summary.scalar("episode/return", episode.episode_return)
            tf.summary.scalar("episode/length", episode.length)

    def _write_period(self, state: RunState) -> None:
        tf = self._tf
        with self._writer.as_default(step=state.timesteps):
            tf.summary.scalar("run/timesteps_per_second", self._rate.read(state))
            tf.summary.scalar("run/episodes", state.episodes)
            tf.summary.scalar("run/updates", state.updates)
            if state.mean_recent_return is not None:
                tf.summary.scalar("run/mean_return_last_100", state.mean_recent_return)

    def after_step(self, state: RunState) -> None:
        if self._every.due(state):
            self._write_period(state)

    def on_end(self, state: RunState, status: str) -> None:
        self._write_period(state)
        self._writer.close()
