"""Hooks: the small objects the training loop calls, so that saving, summaries and reporting stay out of it.

The loop calls ``on_episode`` for every finished episode and ``after_step`` after every batched step; the run calls
``on_end`` once with the outcome ("completed", "paused" or "failed"). A hook decides for itself when it is due
(:class:`trainer.schedule.Every`); the defaults do nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainer.kernel.state import Episode, RunState


class Hook:
    def on_episode(self, episode: Episode, state: RunState) -> None:
        """An environment finished an episode (``state`` already counts it)."""

    def after_step(self, state: RunState) -> None:
        """A batched step was taken and observed."""

    def on_end(self, state: RunState, status: str) -> None:
        """The run ends: "completed", "paused" or "failed"."""


class Hooks(Hook):
    """Several hooks called in order (checkpoints first, so that a paused run is saved before anything else)."""

    def __init__(self, hooks: Sequence[Hook]) -> None:
        self.hooks = list(hooks)

    def on_episode(self, episode: Episode, state: RunState) -> None:
        for hook in self.hooks:
            hook.on_episode(episode, state)

    def after_step(self, state: RunState) -> None:
        for hook in self.hooks:
            hook.after_step(state)

    def on_end(self, state: RunState, status: str) -> None:
        """Every hook ends, even when one fails (the first error is raised afterwards)."""
        errors: list[Exception] = []
        for hook in self.hooks:
            try:
                hook.on_end(state, status)
            except Exception as error:
                errors.append(error)
        if errors:
            raise errors[0]
