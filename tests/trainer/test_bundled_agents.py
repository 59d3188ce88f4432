"""Every bundled agent and network file builds a real TensorForce agent that acts and observes.

Vector agents and networks run on CartPole; the image ones (``*-visual`` agents, ``cnn-*`` networks) on Space
Invaders with the bundled Atari wrappers, the combination the space-invaders-dqn experiment uses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import TypeAdapter

from trainer.agents import build_agent
from trainer.environments import make_environment
from trainer.kernel.spec.agent import AgentSpec, NetworkSpec
from trainer.kernel.spec.environment import EnvironmentSpec
from trainer.kernel.spec.library import BUNDLED_CONFIGS

pytestmark = pytest.mark.slow  # a real TensorForce agent per bundled file, built and stepped (README "Development")

CONFIGS = BUNDLED_CONFIGS
AGENTS = sorted(p.stem for p in (CONFIGS / "agents").glob("*.json"))
NETWORKS = sorted(p.stem for p in (CONFIGS / "networks").glob("*.json"))


def bundled(kind: str, name: str) -> Any:
    """The bundled file ``configs/<kind>/<name>.json`` as its spec model."""
    data = json.loads((CONFIGS / kind / f"{name}.json").read_text())
    if kind == "agents":
        return AgentSpec.model_validate(data)
    if kind == "networks":
        return NetworkSpec.model_validate(data)
    return TypeAdapter(EnvironmentSpec).validate_python(data)


def is_visual(name: str) -> bool:
    return name.endswith("-visual") or name.startswith("cnn-")


@pytest.fixture(scope="module")
def cartpole() -> Iterator[Any]:
    env = make_environment(bundled("environments", "cartpole"), seed=0)
    yield env
    env.close()


@pytest.fixture(scope="module")
def space_invaders() -> Iterator[Any]:
    env = make_environment(bundled("environments", "space-invaders"), seed=0, max_episode_timesteps=1000)
    yield env
    env.close()


def act_and_observe(agent: Any, env: Any, steps: int = 8) -> None:
    """A few real interactions; every action must be one the environment accepts."""
    states = env.reset()
    num_values = env.actions()["num_values"]
    for _ in range(steps):
        action = agent.act(states=states)
        assert 0 <= int(action) < num_values
        states, terminal, reward = env.execute(action)
        agent.observe(terminal=terminal, reward=reward)
        if terminal:
            states = env.reset()


@pytest.mark.parametrize("name", [a for a in AGENTS if not is_visual(a)])
def test_agent_file_builds_and_acts_on_cartpole(name: str, cartpole: Any) -> None:
    agent = build_agent(bundled("agents", name), environment=cartpole, max_episode_timesteps=None, seed=0)
    try:
        act_and_observe(agent, cartpole)
    finally:
        agent.close()


@pytest.mark.parametrize("name", [n for n in NETWORKS if not is_visual(n)])
def test_network_file_builds_with_ppo_on_cartpole(name: str, cartpole: Any) -> None:
    network = bundled("networks", name)
    agent = build_agent(
        bundled("agents", "ppo"), environment=cartpole, network=network, max_episode_timesteps=None, seed=0
    )
    try:
        assert agent.spec["network"] == network.tensorforce()
        act_and_observe(agent, cartpole)
    finally:
        agent.close()


@pytest.mark.parametrize("name", [n for n in NETWORKS if is_visual(n)])
def test_cnn_network_file_builds_with_ppo_on_space_invaders(name: str, space_invaders: Any) -> None:
    agent = build_agent(
        bundled("agents", "ppo"),
        environment=space_invaders,
        network=bundled("networks", name),
        max_episode_timesteps=None,
        seed=0,
    )
    try:
        act_and_observe(agent, space_invaders, steps=4)
    finally:
        agent.close()


@pytest.mark.parametrize("name", [a for a in AGENTS if is_visual(a)])
def test_visual_agent_with_cnn_dqn_builds_and_acts_on_space_invaders(name: str, space_invaders: Any) -> None:
    agent = build_agent(
        bundled("agents", name),
        environment=space_invaders,
        network=bundled("networks", "cnn-dqn"),
        max_episode_timesteps=None,
        seed=0,
    )
    try:
        act_and_observe(agent, space_invaders)
    finally:
        agent.close()
