"""The experiment's budget — ``episodes`` and/or ``total_timesteps`` across all environments — kept exactly.

A batched step advances every stepped environment by one timestep, so near the end of a timestep budget only as
many environments step as timesteps are left; and no episode starts that the episode budget has no room for. A run
therefore ends with exactly ``total_timesteps`` timesteps or exactly ``episodes`` episodes, whichever comes first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainer.kernel.state import RunState

if TYPE_CHECKING:  # the spec models (pydantic): `list` reads a budget from plain data (SpecView), not a model
    from trainer.kernel.spec import Experiment


@dataclass(frozen=True)
class Budget:
    episodes: int | None
    timesteps: int | None

    @classmethod
    def of(cls, experiment: Experiment) -> Budget:
        return cls(episodes=experiment.episodes, timesteps=experiment.total_timesteps)

    def timesteps_left(self, state: RunState) -> int | None:
        """Timesteps still to take (None: no timestep budget)."""
        return None if self.timesteps is None else max(self.timesteps - state.timesteps, 0)

    def episodes_to_start(self, state: RunState, running: int) -> int | None:
        """How many more episodes may start while ``running`` are under way (None: no episode budget)."""
        return None if self.episodes is None else max(self.episodes - state.episodes - running, 0)

    def spent(self, state: RunState) -> bool:
        """True once either budget is used up."""
        return (self.timesteps is not None and state.timesteps >= self.timesteps) or (
            self.episodes is not None and state.episodes >= self.episodes
        )

    def reached_by(self, result: Mapping[str, Any]) -> bool:
        """Whether a run that ended with ``result`` (``result.json``'s counters) has nothing left of this budget: a
        completed run whose budget was extended since is not (it continues from its final checkpoint)."""
        timesteps, episodes = result.get("timesteps"), result.get("episodes")
        return (self.timesteps is not None and isinstance(timesteps, int) and timesteps >= self.timesteps) or (
            self.episodes is not None and isinstance(episodes, int) and episodes >= self.episodes
        )

    def describe(self) -> str:
        parts = []
        if self.timesteps is not None:
            parts.append(f"{self.timesteps:,} timesteps")
        if self.episodes is not None:
            parts.append(f"{self.episodes:,} episodes")
        return " or ".join(parts)


def counted_usd(hourly_price: float, seconds: float) -> float:
    """What ``max_cost`` counts for ``seconds`` of a run at ``hourly_price`` dollars an hour: the one rule of the
    trainer's cost limit (its own run and a sweep's trials: :mod:`trainer.hooks.sweep_spend`) and of ``status``'s
    warning (:func:`tfcli.gke.cost.counted_cost`), so the three never disagree."""
    return hourly_price * max(seconds, 0.0) / 3600
