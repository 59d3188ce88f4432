"""``Every`` (trainer/schedule.py), the clock of checkpoints, summaries and progress reports, on made-up counters."""

from __future__ import annotations

import pytest

from trainer.kernel import state as state_module
from trainer.kernel.spec import Frequency
from trainer.kernel.state import RunState
from trainer.schedule import Every


def fired_at(every: Every, state: RunState, positions: list[int], unit: str = "t") -> list[int]:
    """The positions (timesteps or episodes, set one after the other) at which ``every`` was due."""
    fired = []
    for position in positions:
        if unit == "t":
            state.timesteps = position
        else:
            state.episodes = position
        if every.due(state):
            fired.append(position)
    return fired


def test_fires_exactly_at_each_multiple_and_not_a_step_before() -> None:
    state = RunState()
    every = Every(Frequency(100, "t"), state)
    assert fired_at(every, state, list(range(1, 351))) == [100, 200, 300]


def test_a_jump_over_several_multiples_fires_once_then_keeps_the_rhythm() -> None:
    state = RunState()
    every = Every(Frequency(100, "t"), state)
    # 99 -> 350 crosses 100, 200 and 300: one checkpoint, not three; the next is due at 400, not 450.
    assert fired_at(every, state, [99, 350, 351, 399, 400, 401, 499, 500]) == [350, 400, 500]
    assert not every.due(state)  # asked again at the same position: already fired


def test_a_resumed_run_keeps_its_rhythm() -> None:
    # Resumed at 250 timesteps (the last checkpoint at 200): the next is due at 300, not at 250 + 100.
    state = RunState(timesteps=250)
    every = Every(Frequency(100, "t"), state)
    assert not every.due(state)
    assert fired_at(every, state, [299, 300, 349, 350, 400]) == [300, 400]
    # Resumed exactly on a multiple: that one was saved before the stop, the next is the following multiple.
    state = RunState(timesteps=300)
    every = Every(Frequency(100, "t"), state)
    assert fired_at(every, state, [300, 399, 400]) == [400]


def test_episodes_count_episodes_and_not_timesteps() -> None:
    state = RunState(timesteps=10_000)
    every = Every(Frequency(3, "e"), state)
    state.timesteps = 50_000  # timesteps alone never make an episode schedule due
    assert not every.due(state)
    assert fired_at(every, state, [1, 2, 3, 4, 5, 6, 7, 9, 10], unit="e") == [3, 6, 9]


def test_timesteps_count_timesteps_and_not_episodes() -> None:
    state = RunState(episodes=10)
    every = Every(Frequency(5, "t"), state)
    state.episodes = 1000
    assert not every.due(state)
    assert fired_at(every, state, [4, 5, 9, 10], unit="t") == [5, 10]
    assert every.position(state) == 10.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_seconds_count_training_wall_time_including_earlier_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(state_module, "time", clock)
    # Resumed after 590 s of training: "600s" is due 10 s into this segment, then every 600 s.
    state = RunState(timesteps=7, episodes=7, earlier_wall_seconds=590.0, started=clock.now)
    every = Every(Frequency(600, "s"), state)
    assert every.position(state) == 590.0
    fired = []
    for now in (1005.0, 1009.9, 1010.0, 1011.0, 1609.0, 1610.0, 3000.0):
        clock.now = now
        if every.due(state):
            fired.append(now)
    assert fired == [1010.0, 1610.0, 3000.0]
