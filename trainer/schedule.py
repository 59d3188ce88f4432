"""``saver_frequency`` and ``summary_frequency`` as a clock: due every N seconds, episodes or timesteps.

Positions are the run's cumulative counters (wall seconds of training, episodes, timesteps), and a schedule fires
at the multiples of N it crosses. So a resumed run keeps the rhythm it had ("5000t" saves at 5000, 10000, ...),
and a batched step that jumps past a multiple fires once, not once per skipped multiple.
"""

from __future__ import annotations

from trainer.kernel.spec import Frequency
from trainer.kernel.state import RunState


class Every:
    def __init__(self, frequency: Frequency, state: RunState) -> None:
        self.frequency = frequency
        self._next = self._following(self.position(state))

    def position(self, state: RunState) -> float:
        unit = self.frequency.unit
        if unit == "s":
            return state.wall_seconds
        return float(state.episodes if unit == "e" else state.timesteps)

    def _following(self, position: float) -> float:
        value = self.frequency.value
        return (position // value + 1) * value

    def due(self, state: RunState) -> bool:
        """True once per multiple crossed (and then waits for the next one)."""
        position = self.position(state)
        if position < self._next:
            return False
        self._next = self._following(position)
        return True
