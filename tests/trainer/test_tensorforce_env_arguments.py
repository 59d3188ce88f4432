"""TensorForce's OpenAIGym arguments as tfcli's wrappers, with TensorForce 0.6.5's meaning: min_value/max_value
bound only the unbounded state entries and clip states to them; drop_states_indices drops entries of a flat state;
terminal_reward is paid when the level ends an episode, not at a time limit."""

from __future__ import annotations

import numpy as np
import pytest

from trainer.environments import TERMINATED, TRUNCATED, make_environment
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.environment import GymnasiumEnvironment


def cartpole(*wrappers: dict[str, object], limit: int | None = None) -> object:
    spec = GymnasiumEnvironment(level="CartPole-v1", wrappers=list(wrappers))  # type: ignore[arg-type]
    return make_environment(spec, seed=0, max_episode_timesteps=limit)


def test_bounds_replace_only_the_unbounded_entries_and_states_are_clipped() -> None:
    env = cartpole({"type": "bound_observation", "min_value": -0.01, "max_value": 0.01})
    states = env.states()  # type: ignore[attr-defined]
    # CartPole: position +-4.8 and angle +-0.42 are bounded; both velocities are unbounded (float32 max).
    assert states["min_value"][0] == pytest.approx(-4.8) and states["min_value"][1] == pytest.approx(-0.01)
    assert states["max_value"][2] == pytest.approx(0.41887903) and states["max_value"][3] == pytest.approx(0.01)
    seen = [env.reset()]  # type: ignore[attr-defined]
    for _ in range(20):
        state, terminal, _ = env.execute(1)  # type: ignore[attr-defined]
        seen.append(state)
        if terminal:
            break
    velocities = np.abs(np.array(seen)[:, [1, 3]])
    assert velocities.max() == pytest.approx(0.01)  # pushing right: the cart's speed passes 0.01 and is clipped


def test_dropped_indices_leave_the_state() -> None:
    plain, dropped = cartpole(), cartpole({"type": "drop_observation_indices", "indices": [0, 2]})
    assert dropped.states()["shape"] == (2,)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(dropped.reset(), plain.reset()[[1, 3]])  # type: ignore[attr-defined]


def test_drop_on_a_bad_index_is_the_users_mistake() -> None:
    with pytest.raises(InvalidInput, match=r"environment.wrappers.0: drop_observation_indices: indices \[7\]"):
        cartpole({"type": "drop_observation_indices", "indices": [7]})


def test_terminal_reward_when_the_level_ends_the_episode_not_at_a_time_limit() -> None:
    env = cartpole({"type": "terminal_reward", "reward": -10.0})
    env.reset()  # type: ignore[attr-defined]
    terminal, reward = 0, 0.0
    while not terminal:
        _, terminal, reward = env.execute(1)  # type: ignore[attr-defined]
    assert (terminal, reward) == (TERMINATED, -9.0)  # CartPole's 1.0, plus -10
    cut = cartpole({"type": "terminal_reward", "reward": -10.0}, limit=3)
    cut.reset()  # type: ignore[attr-defined]
    steps = [cut.execute(step % 2) for step in range(3)]  # type: ignore[attr-defined]
    assert steps[-1][1:] == (TRUNCATED, 1.0)
