"""What ``build_agent`` takes from the experiment and what it leaves to the agent file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tfcli.errors import InvalidInput
from tfcli.spec.agent import AgentSpec, NetworkSpec
from tfcli.spec.environment import GymnasiumEnvironment
from trainer.agents import agent_arguments, build_agent
from trainer.environments import GymnasiumAdapter, make_environment

MLP = NetworkSpec.model_validate([{"type": "dense", "size": 32, "activation": "tanh"}])


@pytest.fixture
def cartpole() -> Iterator[GymnasiumAdapter]:
    env = make_environment(GymnasiumEnvironment(level="CartPole-v1"))
    yield env
    env.close()


def test_the_experiment_sets_spaces_limits_network_and_seed(cartpole: GymnasiumAdapter) -> None:
    spec = AgentSpec(agent="ppo", batch_size=4, baseline={"type": "auto"}, config={"buffer_observe": 10})
    arguments = agent_arguments(
        spec, environment=cartpole, network=MLP, max_episode_timesteps=None, parallel_interactions=3, seed=5
    )
    assert arguments["states"]["shape"] == (4,) and arguments["actions"] == cartpole.actions()
    assert arguments["max_episode_timesteps"] == 500  # the level's own limit when the experiment sets none
    assert arguments["parallel_interactions"] == 3
    assert arguments["network"] == MLP.tensorforce()
    assert arguments["baseline"] == {"type": "auto"}  # the critic stays as the agent file says
    assert arguments["config"] == {"buffer_observe": 10, "seed": 5}


def test_a_network_for_an_agent_without_one_is_refused(cartpole: GymnasiumAdapter) -> None:
    with pytest.raises(InvalidInput, match="random agent has no network"):
        agent_arguments(AgentSpec(agent="random"), environment=cartpole, network=MLP, max_episode_timesteps=None)


def test_a_value_tensorforce_rejects_is_the_users_mistake(cartpole: GymnasiumAdapter) -> None:
    with pytest.raises(InvalidInput, match="ppo"):
        build_agent(AgentSpec(agent="ppo", batch_size=0), environment=cartpole, max_episode_timesteps=None)


BASELINE = [{"type": "dense", "size": 8}]
ADAM = {"optimizer": "adam", "learning_rate": 1e-3}


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"baseline": BASELINE}, "a baseline needs a baseline_optimizer to train it"),
        ({"baseline_optimizer": ADAM}, "a baseline_optimizer needs a baseline to train (there is none)"),
    ],
    ids=["baseline-without-optimizer", "optimizer-without-baseline"],
)
def test_a_combination_tensorforce_asserts_against_is_named(
    cartpole: GymnasiumAdapter, arguments: dict[str, object], problem: str
) -> None:
    # TensorForce checks these with a bare assert: an AssertionError without a message.
    spec = AgentSpec(agent="ppo", batch_size=2, **arguments)
    with pytest.raises(InvalidInput) as raised:
        build_agent(spec, environment=cartpole, max_episode_timesteps=None)
    assert raised.value.problems == [f"agent: cannot build the ppo agent: {problem}"]


def test_an_agent_limit_shorter_than_the_environments_is_refused(cartpole: GymnasiumAdapter) -> None:
    # The environment would run past it, and TensorForce would fail in the middle of an episode.
    with pytest.raises(ValueError, match="same limit"):
        agent_arguments(AgentSpec(agent="ppo", batch_size=4), environment=cartpole, max_episode_timesteps=100)
