"""The training loop's promises, with real CartPole environments and a stand-in for the agent (no TensorFlow):
budgets end exactly, a pause stops after the step under way, a lost environment does not count an episode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from trainer_testkit import cartpole

from trainer.hooks import Hook
from trainer.kernel.budget import Budget
from trainer.kernel.state import Episode, RunState
from trainer.loop import train
from trainer.pools.base import Step
from trainer.pools.local import LocalPool
from trainer.pools.recipe import EnvironmentRecipe
from trainer.signals import StopRequest


class RecordingAgent:
    """Acts at random and records what the agent would observe, per parallel index."""

    def __init__(self) -> None:
        self.observed: dict[int, list[int]] = {}
        self.acts = 0

    def start_episode(self, index: int) -> None:
        pass

    def act(self, indices: Sequence[int], states: Sequence[Any]) -> list[Any]:
        self.acts += len(indices)
        return [self.acts % 2 for _ in indices]

    def observe(self, indices: Sequence[int], terminals: Sequence[int], rewards: Sequence[float]) -> None:
        for index, terminal in zip(indices, terminals, strict=True):
            self.observed.setdefault(index, []).append(terminal)

    @property
    def updates(self) -> int:
        return 0


class Episodes(Hook):
    def __init__(self) -> None:
        self.finished: list[Episode] = []
        self.steps = 0

    def on_episode(self, episode: Episode, state: RunState) -> None:
        self.finished.append(episode)

    def after_step(self, state: RunState) -> None:
        self.steps += 1


def run_loop(pool: Any, budget: Budget, stop: StopRequest | None = None, hook: Hook | None = None) -> Any:
    agent, episodes, state = RecordingAgent(), Episodes(), RunState()
    outcome = train(
        pool=pool, acting=agent, budget=budget, state=state, hook=hook or episodes, stop=stop or StopRequest()
    )
    return outcome, state, agent, episodes


def cartpoles(size: int) -> LocalPool:
    return LocalPool(EnvironmentRecipe.of(cartpole(total_timesteps=1)), size)


@pytest.mark.parametrize(("size", "timesteps"), [(1, 250), (3, 301), (4, 1001)])
def test_a_timestep_budget_ends_exactly_even_when_batches_do_not_divide_it(size: int, timesteps: int) -> None:
    outcome, state, agent, episodes = run_loop(cartpoles(size), Budget(episodes=None, timesteps=timesteps))
    assert outcome == "completed"
    assert state.timesteps == agent.acts == timesteps
    assert state.episodes == len(episodes.finished) > 0
    assert [e.episode for e in episodes.finished] == list(range(1, state.episodes + 1))
    assert sum(e.length for e in episodes.finished) <= timesteps
    # the episodes the budget cut short end on the agent's side too (terminal 2 at the last step)
    last_step = timesteps - (timesteps // size) * size or size
    assert all(agent.observed[index][-1] != 0 for index in range(last_step))


def test_an_episode_budget_ends_exactly_across_parallel_environments() -> None:
    outcome, state, _, episodes = run_loop(cartpoles(3), Budget(episodes=7, timesteps=None))
    assert outcome == "completed"
    assert state.episodes == len(episodes.finished) == 7
    assert state.timesteps == sum(e.length for e in episodes.finished)  # no episode was started and left over
    assert {e.worker for e in episodes.finished} == {0, 1, 2}


def test_the_first_budget_reached_ends_the_run() -> None:
    _, state, _, _ = run_loop(cartpoles(2), Budget(episodes=1000, timesteps=55))
    assert (state.timesteps, state.episodes < 1000) == (55, True)


class StopAfter(Episodes):
    def __init__(self, stop: StopRequest, steps: int) -> None:
        super().__init__()
        self.stop, self.limit = stop, steps

    def after_step(self, state: RunState) -> None:
        super().after_step(state)
        if self.steps == self.limit:
            self.stop.request("SIGTERM")


def test_a_stop_request_pauses_after_the_step_under_way() -> None:
    stop = StopRequest()
    hook = StopAfter(stop, steps=5)
    outcome, state, agent, _ = run_loop(cartpoles(2), Budget(episodes=None, timesteps=10_000), stop, hook)
    assert outcome == "paused"
    assert state.timesteps == agent.acts == 10 and hook.steps == 5


class LosesEnvironment1:
    """A pool whose environment 1 is lost at its 4th step (as a dead env-worker would be)."""

    def __init__(self, pool: LocalPool) -> None:
        self.pool, self.size, self.steps_of_1 = pool, pool.size, 0

    def reset(self, indices: Sequence[int]) -> list[Any]:
        return self.pool.reset(indices)

    def step(self, indices: Sequence[int], actions: Sequence[Any]) -> list[Step]:
        steps = self.pool.step(indices, actions)
        if 1 in indices:
            self.steps_of_1 += 1
            if self.steps_of_1 == 4:
                steps[list(indices).index(1)] = Step(states=None, terminal=0, reward=0.0, aborted=True)
        return steps


def test_a_lost_environment_aborts_its_episode_without_counting_it() -> None:
    outcome, state, agent, episodes = run_loop(LosesEnvironment1(cartpoles(2)), Budget(episodes=4, timesteps=None))
    assert outcome == "completed"
    assert state.episodes == len(episodes.finished) == 4
    assert agent.observed[1][3] == 2  # the agent's side of the lost episode ended as aborted
    # its 4 timesteps were taken (and count) but belong to no finished episode
    assert state.timesteps == sum(e.length for e in episodes.finished) + 4
