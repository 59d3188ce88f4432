"""Save a checkpoint every ``saver_frequency`` (seconds, episodes or timesteps), and when the run ends.

A completed run saves its final state, so that running the same experiment into the same folder again finds the
budget spent and stops at once; a paused run (SIGTERM) saves so that it resumes where it stopped, and a pruned one
(early stopping) so that it can be extended from where it stopped. A failed run does
not: its state may be the cause of the failure, and the previous checkpoint is the better place to resume from.
"""

from __future__ import annotations

from typing import Any

from trainer.checkpoints import CheckpointStore
from trainer.hooks import Hook
from trainer.kernel.spec import Frequency
from trainer.kernel.state import RunState
from trainer.schedule import Every


class CheckpointHook(Hook):
    def __init__(
        self, store: CheckpointStore, agent: Any, frequency: Frequency, state: RunState, *, resumed: bool
    ) -> None:
        """``resumed``: ``state`` comes from a checkpoint (so it need not be saved again before it changes)."""
        self._store = store
        self._agent = agent
        self._every = Every(frequency, state)
        self._saved_at = (state.timesteps, state.episodes) if resumed else None

    def _save(self, state: RunState) -> None:
        self._store.save(self._agent, state.counters())
        self._saved_at = (state.timesteps, state.episodes)

    def after_step(self, state: RunState) -> None:
        if self._every.due(state):
            self._save(state)

    def on_end(self, state: RunState, status: str) -> None:
        if status in ("completed", "paused", "pruned") and self._saved_at != (state.timesteps, state.episodes):
            self._save(state)
