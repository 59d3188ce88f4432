"""The training loop: reset, batched act, step, batched observe — until the budget is spent or a stop is asked.

It owns only the interaction. Everything else (checkpoints, summaries, progress lines, the progress bar) is a
hook the loop calls after each step and each finished episode (docs/design.md §13.6). ``Runner.run`` is not used: it
cannot keep a budget exactly across parallel environments, pause on a signal, or survive a lost environment.

Episodes the timestep budget cuts short are ended on the agent's side with terminal 2 at their last step, as
TensorForce's Runner does, so the agent learns from them too. A pause (SIGTERM) stops after the step under way
without touching the agent: the checkpoint holds the episodes in progress, and restoring it discards them
(TensorForce resets its per-episode buffers on restore), so the resumed run starts fresh episodes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, Literal

from trainer.acting import Acting
from trainer.hooks import Hook
from trainer.kernel.budget import Budget
from trainer.kernel.state import Episode, RunState
from trainer.pools.base import RUNNING, TRUNCATED, EnvironmentPool
from trainer.signals import StopRequest

log = logging.getLogger(__name__)

Outcome = Literal["completed", "paused"]
ABORTED = TRUNCATED  # 2: TensorForce's terminal for an episode ended from outside (no terminal state reached)
RETRY_SECONDS = 0.5  # how often to ask again for an environment that is not available (remote pools)


class _Episodes:
    """The episodes under way: states to act on next, and the return and length so far."""

    def __init__(self) -> None:
        self.states: dict[int, Any] = {}
        self.returns: dict[int, float] = {}
        self.lengths: dict[int, int] = {}

    def start(self, index: int, states: Any) -> None:
        self.states[index], self.returns[index], self.lengths[index] = states, 0.0, 0

    def end(self, index: int) -> None:
        del self.states[index]


def _start_episodes(
    pool: EnvironmentPool,
    acting: Acting,
    budget: Budget,
    state: RunState,
    episodes: _Episodes,
    retry_after: dict[int, float],
) -> None:
    now = time.monotonic()
    idle = [i for i in range(pool.size) if i not in episodes.states and retry_after.get(i, 0.0) <= now]
    room = budget.episodes_to_start(state, running=len(episodes.states))
    if room is not None:
        idle = idle[:room]
    if not idle:
        return
    for index, states in zip(idle, pool.reset(idle), strict=True):
        if states is None:
            retry_after[index] = now + RETRY_SECONDS
        else:
            retry_after.pop(index, None)
            episodes.start(index, states)
            acting.start_episode(index)


def _step(
    pool: EnvironmentPool,
    acting: Acting,
    indices: Sequence[int],
    episodes: _Episodes,
    state: RunState,
    budget: Budget,
) -> list[Episode]:
    """Step ``indices`` once, observe the outcome and return the episodes that finished."""
    actions = acting.act(indices, [episodes.states[i] for i in indices])
    steps = pool.step(indices, actions)
    state.timesteps += len(indices)
    cut = budget.timesteps_left(state) == 0  # the budget's last step: end the agent's side of running episodes
    finished: list[Episode] = []
    terminals: list[int] = []
    rewards: list[float] = []
    for index, step in zip(indices, steps, strict=True):
        if step.aborted:
            log.warning("environment %d was lost mid-episode; its episode is dropped", index)
            episodes.end(index)
            terminals.append(ABORTED)
            rewards.append(0.0)
            continue
        episodes.returns[index] += step.reward
        episodes.lengths[index] += 1
        terminal = step.terminal
        if terminal == RUNNING:
            episodes.states[index] = step.states
            if cut:
                terminal = ABORTED
        else:
            episodes.end(index)
            state.episodes += 1
            state.recent_returns.append(episodes.returns[index])
            finished.append(
                Episode(
                    worker=index,
                    episode=state.episodes,
                    timesteps=state.timesteps,
                    length=episodes.lengths[index],
                    wall_seconds=state.wall_seconds,
                    episode_return=episodes.returns[index],
                    start=state.starts,
                )
            )
        terminals.append(terminal)
        rewards.append(step.reward)
    acting.observe(indices, terminals, rewards)
    state.updates = acting.updates
    return finished


def train(
    *, pool: EnvironmentPool, acting: Acting, budget: Budget, state: RunState, hook: Hook, stop: StopRequest
) -> Outcome:
    """Run until the budget is spent ("completed") or a stop is requested ("paused")."""
    episodes = _Episodes()
    retry_after: dict[int, float] = {}
    while True:
        if budget.spent(state):
            return "completed"
        if stop.requested:
            return "paused"
        _start_episodes(pool, acting, budget, state, episodes, retry_after)
        indices = sorted(episodes.states)
        left = budget.timesteps_left(state)
        if left is not None:
            indices = indices[:left]
        if not indices:
            time.sleep(0.05)  # no environment available right now (a remote worker is reconnecting)
            continue
        for episode in _step(pool, acting, indices, episodes, state, budget):
            hook.on_episode(episode, state)
        hook.after_step(state)
