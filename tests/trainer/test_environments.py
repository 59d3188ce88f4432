"""Gymnasium levels behind TensorForce's environment interface, as the trainer and the user see them."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from pydantic import TypeAdapter

from trainer.environments import RUNNING, TERMINATED, TRUNCATED, make_environment
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.environment import EnvironmentSpec, GymnasiumEnvironment, TensorforceEnvironment
from trainer.kernel.spec.library import BUNDLED_CONFIGS

CONFIGS = BUNDLED_CONFIGS


def bundled_environment(name: str) -> Any:
    return TypeAdapter(EnvironmentSpec).validate_python(
        json.loads((CONFIGS / "environments" / f"{name}.json").read_text())
    )


def gym(level: str, **fields: Any) -> GymnasiumEnvironment:
    return GymnasiumEnvironment(level=level, **fields)


def test_cartpole_has_four_float_states_and_two_actions() -> None:
    env = make_environment(bundled_environment("cartpole"))
    assert env.states()["type"] == "float" and env.states()["shape"] == (4,)
    assert env.actions() == {"type": "int", "shape": (), "num_values": 2}
    assert env.max_episode_timesteps() == 500
    assert env.reset().shape == (4,)
    env.close()


def test_pendulum_has_a_bounded_continuous_action() -> None:
    env = make_environment(bundled_environment("pendulum"))
    assert env.actions() == {"type": "float", "shape": (1,), "min_value": -2.0, "max_value": 2.0}
    env.reset()
    states, terminal, reward = env.execute(np.array([1.5], dtype=np.float32))
    assert states.shape == (3,) and terminal == RUNNING and isinstance(reward, float)
    env.close()


def test_a_falling_pole_terminates_with_1() -> None:
    env = make_environment(gym("CartPole-v1"), seed=0)
    env.reset()
    terminals = [RUNNING]
    while terminals[-1] == RUNNING and len(terminals) < 100:  # always pushing right: the pole falls quickly
        terminals.append(env.execute(1)[1])
    assert terminals[-1] == TERMINATED
    env.close()


def test_the_levels_time_limit_truncates_with_2() -> None:
    env = make_environment(gym("CartPole-v1", kwargs={"max_episode_steps": 3}), seed=0)
    env.reset()
    assert [env.execute(0)[1] for _ in range(3)] == [RUNNING, RUNNING, TRUNCATED]
    assert env.max_episode_timesteps() == 3
    env.close()


def test_the_experiments_episode_limit_replaces_the_levels() -> None:
    # Pendulum-v1 is registered with a 200-step limit and never terminates on its own.
    env = make_environment(gym("Pendulum-v1"), max_episode_timesteps=250)
    assert env.max_episode_timesteps() == 250
    env.reset()
    terminals = [env.execute(np.zeros(1, dtype=np.float32))[1] for _ in range(250)]
    assert set(terminals[:-1]) == {RUNNING} and terminals[-1] == TRUNCATED
    env.close()


def test_the_same_seed_gives_the_same_episode() -> None:
    def first_states(seed: int) -> np.ndarray:
        env = make_environment(gym("CartPole-v1"), seed=seed)
        states = env.reset()
        env.close()
        return states

    assert np.array_equal(first_states(7), first_states(7))
    assert not np.array_equal(first_states(7), first_states(8))


def test_frame_stack_puts_the_stack_last() -> None:
    env = make_environment(gym("CartPole-v1", wrappers=[{"type": "frame_stack", "stack_size": 3}]), seed=0)
    assert env.states()["shape"] == (4, 3)
    env.reset()
    states, _, _ = env.execute(0)
    assert states.shape == (4, 3)
    assert not np.array_equal(states[:, -1], states[:, -2])  # the newest frame is last
    env.close()


def test_space_invaders_with_the_bundled_wrappers_gives_stacked_uint8_frames() -> None:
    env = make_environment(bundled_environment("space-invaders"), seed=0)
    assert env.states() == {"type": "float", "shape": (84, 84, 4), "min_value": 0.0, "max_value": 255.0}
    assert env.actions() == {"type": "int", "shape": (), "num_values": 6}
    states = env.reset()
    assert states.dtype == np.uint8 and states.shape == (84, 84, 4)
    states, terminal, _ = env.execute(0)
    assert states.shape == (84, 84, 4) and terminal == RUNNING
    env.close()


def test_an_unknown_level_suggests_the_close_one() -> None:
    with pytest.raises(InvalidInput, match="CartPole-v1"):
        make_environment(gym("CartPol-v1"))


def test_a_wrong_wrapper_argument_is_the_users_mistake() -> None:
    with pytest.raises(InvalidInput, match=r"wrappers\.0: frame_stack: .*num_stack"):
        make_environment(gym("CartPole-v1", wrappers=[{"type": "frame_stack", "num_stack": 4}]))


@pytest.mark.slow  # imports TensorForce, and TensorFlow with it (README "Development")
def test_a_tensorforce_environment_is_created_by_tensorforce() -> None:
    env = make_environment(TensorforceEnvironment(type="tensorforce", environment="custom_cartpole"))
    assert env.actions() == {"type": "int", "shape": (), "num_values": 3}
    assert env.reset().shape == (3,)
    env.close()
    with pytest.raises(InvalidInput, match="custom_cartpole"):
        make_environment(TensorforceEnvironment(type="tensorforce", environment="custom_cartpol"))


ATARI = {"type": "atari_preprocessing", "screen_size": 84, "grayscale_obs": True, "frame_skip": 4, "noop_max": 30}


@pytest.mark.parametrize(
    ("kwargs", "wrappers", "limit"),
    [
        ({}, [], 27_000),  # v5: frameskip 4, the emulator's 108,000-frame cap
        ({"frameskip": 1}, [ATARI], 27_000),  # the same frames, skipped by the preprocessing instead
        ({"frameskip": 1, "max_num_frames_per_episode": 18_000}, [ATARI], 4_500),  # the bundled 5-minute cap
        ({"frameskip": 1}, [], 108_000),  # no frame skipping at all: one frame an agent step
        ({"max_num_frames_per_episode": 0}, [], None),  # ALE's "no cap"
    ],
)
def test_an_atari_levels_episode_limit_is_its_emulators_frame_cap_in_agent_steps(
    kwargs: dict[str, Any], wrappers: list[dict[str, Any]], limit: int | None
) -> None:
    env = make_environment(gym("ALE/SpaceInvaders-v5", kwargs=kwargs, wrappers=wrappers))
    try:
        assert env.max_episode_timesteps() == limit
    finally:
        env.close()


def test_the_bundled_space_invaders_episodes_end_at_the_cap_as_truncated() -> None:
    # A tiny cap (80 frames = 20 agent steps) so the test reaches it: the emulator and the adapter agree.
    spec = bundled_environment("space-invaders").model_copy(
        update={"kwargs": {"frameskip": 1, "max_num_frames_per_episode": 80}}
    )
    env = make_environment(spec, seed=0)
    try:
        assert env.max_episode_timesteps() == 20
        env.reset()
        terminals = []
        while not terminals or terminals[-1] == RUNNING:
            terminals.append(env.execute(0)[1])  # no-op: the invaders cannot win in 80 frames
        # the adapter cuts at 20 agent steps; the emulator may cut a little earlier (reset's no-ops count)
        assert terminals[-1] == TRUNCATED and 15 <= len(terminals) <= 20
    finally:
        env.close()
