"""Pools as the loop sees them: the same episodes in-process and in subprocesses, repeated actions, a crashed
environment process brought back, TensorFlow kept out of worker processes, and the run mode's choice of pool."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from trainer_testkit import cartpole

from trainer.kernel.errors import InvalidInput
from trainer.pools import factory
from trainer.pools.base import RUNNING
from trainer.pools.factory import make_pool
from trainer.pools.local import LocalPool
from trainer.pools.recipe import EnvironmentRecipe
from trainer.pools.subprocess import SubprocessPool


def trajectory(pool: Any, steps: int) -> list[Any]:
    """States and rewards of ``steps`` batched steps of every environment, always pushing right."""
    seen: list[Any] = [np.stack(pool.reset(range(pool.size)))]
    for _ in range(steps):
        results = pool.step(range(pool.size), [1] * pool.size)
        seen.append([(step.states.tolist(), step.terminal, step.reward) for step in results])
        if any(step.terminal != RUNNING for step in results):
            break
    return seen


def test_subprocess_environments_play_the_same_episodes_as_in_process_ones() -> None:
    recipe = EnvironmentRecipe.of(cartpole(total_timesteps=1, run_mode="multi-threaded", num_workers=2))
    local = LocalPool(recipe, 2)
    remote = SubprocessPool(recipe, 2)
    try:
        assert repr(remote.states()) == repr(local.states()) and remote.actions() == local.actions()
        assert remote.max_episode_timesteps() == local.max_episode_timesteps() == 500
        expected, got = trajectory(local, 5), trajectory(remote, 5)
        assert np.array_equal(expected[0], got[0]) and expected[1:] == got[1:]
        assert not np.array_equal(expected[0][0], expected[0][1])  # environment i is seeded with seed + i
    finally:
        local.close()
        remote.close()


def test_repeated_actions_sum_rewards_and_count_the_episode_limit_in_agent_steps() -> None:
    pool = LocalPool(EnvironmentRecipe.of(cartpole(total_timesteps=1, repeat_actions=3)), 1)
    try:
        assert pool.max_episode_timesteps() == 167  # CartPole's 500 frames, 3 per agent step
        pool.reset([0])
        assert pool.step([0], [0])[0].reward == 3.0  # CartPole pays 1 a frame
    finally:
        pool.close()


def test_a_killed_environment_process_aborts_its_episode_and_comes_back() -> None:
    pool = SubprocessPool(EnvironmentRecipe.of(cartpole(total_timesteps=1)), 2)
    try:
        pool.reset([0, 1])
        os.kill(pool._workers[1].process.pid, signal.SIGKILL)
        steps = pool.step([0, 1], [0, 0])
        assert (steps[0].aborted, steps[1].aborted) == (False, True)
        assert pool.reset([1])[0] is not None and not pool.step([1], [0])[0].aborted
    finally:
        pool.close()


def test_an_environment_process_that_cannot_make_its_level_reports_the_users_mistake() -> None:
    spec = cartpole(total_timesteps=1)
    bad = EnvironmentRecipe(spec=spec.environment.model_copy(update={"kwargs": {"no_such_argument": 1}}))
    with pytest.raises(InvalidInput, match="no_such_argument"):
        SubprocessPool(bad, 1)


def test_worker_processes_do_not_import_tensorflow() -> None:
    # A spawned worker imports the parent's main module (python -m trainer) and the pool module, then the level.
    code = (
        "import sys, trainer.__main__, trainer.pools.subprocess\n"
        "from trainer.pools.recipe import EnvironmentRecipe\n"
        "from trainer.kernel.spec import Experiment\n"
        "spec = Experiment(name='x', environment={'level': 'CartPole-v1'}, agent={'agent': 'ppo'}, episodes=1)\n"
        "EnvironmentRecipe.of(spec).make(0).reset()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'tensorforce')))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert output.strip() == "[]"


def test_run_modes_choose_their_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    single = make_pool(cartpole(total_timesteps=1))
    assert isinstance(single, LocalPool) and single.size == 1
    single.close()
    threaded = cartpole(total_timesteps=1, run_mode="multi-threaded", num_workers=2)
    cheap = make_pool(threaded)  # CartPole steps far faster than a pipe round trip: in-process
    assert isinstance(cheap, LocalPool) and cheap.size == 2
    cheap.close()
    monkeypatch.setattr(factory, "COSTLY_STEP_SECONDS", 0.0)  # as if every step were costly (Atari)
    monkeypatch.setattr(factory.os, "cpu_count", lambda: 2)  # the learner's core and one more: no room to step
    two_cores = make_pool(threaded)
    assert isinstance(two_cores, LocalPool)
    two_cores.close()
    monkeypatch.setattr(factory.os, "cpu_count", lambda: 4)
    costly = make_pool(threaded)
    assert isinstance(costly, SubprocessPool) and costly.size == 2
    costly.close()


def test_workers_must_match_a_distributed_run() -> None:
    with pytest.raises(InvalidInput, match="only a distributed run"):
        make_pool(cartpole(total_timesteps=1), workers=[("localhost", 7000)])
    distributed = cartpole(total_timesteps=1, run_mode="distributed", num_workers=2)
    with pytest.raises(InvalidInput, match="needs that many"):
        make_pool(distributed, workers=[("localhost", 7000)])
