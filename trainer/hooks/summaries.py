"""TensorBoard summaries of the run in ``summaries/trainer/`` (TensorForce's own summarizer writes
``summaries/agent/``; see :func:`trainer.agents.agent_summarizer`).

Per episode: ``episode/return`` and ``episode/length`` at the step of the run's timesteps. Every
``summary_frequency``: ``run/timesteps_per_second`` (over the period), ``run/mean_return_last_100``,
``run/episodes`` and ``run/updates``. A resumed run appends to the same folder (TensorBoard reads every event file
in it). Episodes played again after a crash (those after the last checkpoint) appear twice at the same steps.

Written as TensorBoard's scalar protobufs through its own event-file writer (``tensorboard.summary.writer``, the
records ``tf.summary.scalar`` writes: the ``scalars`` plugin, a float tensor), not through TensorFlow's eager ops:
an eager ``tf.summary.scalar`` cost ~1 ms of CPU per episode (two ops and a write), ~30x this, and a CartPole run
finishes hundreds of episodes (issue 30).
"""

from __future__ import annotations

import time
from pathlib import Path

from trainer.hooks import Hook
from trainer.kernel.spec import Frequency
from trainer.kernel.state import Episode, RunState
from trainer.schedule import Every


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
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        directory.mkdir(parents=True, exist_ok=True)
        self._writer = EventFileWriter(str(directory), flush_secs=120)  # tf.summary's default flush interval
        self._every = Every(frequency, state)
        self._rate = RateMeter(state)

    def _scalars(self, step: int, values: dict[str, float]) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary
        from tensorboard.plugins.scalar.summary_v2 import scalar_pb

        summary = Summary(value=[scalar_pb(tag, value).value[0] for tag, value in values.items()])
        self._writer.add_event(Event(wall_time=time.time(), step=step, summary=summary))

    def on_episode(self, episode: Episode, state: RunState) -> None:
        self._scalars(episode.timesteps, {"episode/return": episode.episode_return, "episode/length": episode.length})

    def _write_period(self, state: RunState) -> None:
        values = {
            "run/timesteps_per_second": self._rate.read(state),
            "run/episodes": state.episodes,
            "run/updates": state.updates,
        }
        if state.mean_recent_return is not None:
            values["run/mean_return_last_100"] = state.mean_recent_return
        self._scalars(state.timesteps, values)

    def after_step(self, state: RunState) -> None:
        if self._every.due(state):
            self._write_period(state)

    def on_end(self, state: RunState, status: str) -> None:
        self._write_period(state)
        self._writer.close()
