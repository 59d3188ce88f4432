"""Build a TensorForce agent from an agent spec, an optional network spec and a running environment.

The agent file says how to learn; the experiment owns everything that must agree with the run: the state and
action specs come from the environment, and the episode limit, the number of parallel interactions and the seed
from the experiment. The network spec, when the experiment names one, replaces the agent file's ``network``
(the policy's network; a critic or baseline stays as the agent file says).
"""

from __future__ import annotations

from typing import Any

from tfcli.errors import InvalidInput
from tfcli.spec.agent import AgentSpec, NetworkSpec
from trainer import compat

# Agents without a network of their own to replace.
_NO_NETWORK = frozenset({"random", "constant"})
# The generic TensorForce agent keeps its network inside ``policy``.
_POLICY_NETWORK = frozenset({"tensorforce", "default"})


def _with_network(agent: AgentSpec, arguments: dict[str, Any], network: NetworkSpec) -> None:
    if agent.agent in _NO_NETWORK:
        raise InvalidInput(f"network: the {agent.agent} agent has no network; leave the experiment's network out")
    if agent.agent in _POLICY_NETWORK:
        policy = arguments.get("policy") or {}
        if not isinstance(policy, dict):
            raise InvalidInput(
                f"network: the agent's policy is {policy!r}; write it as a mapping so a network can be set in it"
            )
        arguments["policy"] = {**policy, "network": network.tensorforce()}
    else:
        arguments["network"] = network.tensorforce()


def agent_arguments(
    agent: AgentSpec,
    *,
    environment: Any,
    network: NetworkSpec | None = None,
    max_episode_timesteps: int | None,
    parallel_interactions: int = 1,
    seed: int | None = None,
) -> dict[str, Any]:
    """The keyword arguments for ``tensorforce.Agent.create`` (kept apart from building, to be inspectable)."""
    arguments = agent.arguments()
    if network is not None:
        _with_network(agent, arguments, network)
    limit = environment.max_episode_timesteps()
    if max_episode_timesteps is None:
        max_episode_timesteps = limit
    elif limit is None or limit > max_episode_timesteps:
        # TensorForce would fail mid-run with "Episode longer than max_episode_timesteps".
        raise ValueError(
            f"the environment's episodes may last {limit or 'unlimited'} timesteps, longer than the agent's "
            f"max_episode_timesteps={max_episode_timesteps}: make the environment with the same limit"
        )
    config = dict(arguments.pop("config", None) or {})
    if seed is not None:
        config["seed"] = seed
    arguments.update(
        states=environment.states(),
        actions=environment.actions(),
        max_episode_timesteps=max_episode_timesteps,
        parallel_interactions=parallel_interactions,
    )
    if config:
        arguments["config"] = config
    return arguments


def build_agent(
    agent: AgentSpec,
    *,
    environment: Any,
    network: NetworkSpec | None = None,
    max_episode_timesteps: int | None,
    parallel_interactions: int = 1,
    seed: int | None = None,
) -> Any:
    """A ready TensorForce agent (``tensorforce.Agent``) for ``environment``; close it with ``agent.close()``.

    ``max_episode_timesteps`` None means the environment's own limit. TensorForce rejects a spec it cannot build
    with ``TensorforceError`` (a bad value, a missing episode limit for an agent that needs one) or ``TypeError``
    (a layer or optimizer argument it does not take); that is the user's input, so it becomes
    :class:`InvalidInput`.
    """
    compat.apply()
    from tensorforce import Agent, TensorforceError

    arguments = agent_arguments(
        agent,
        environment=environment,
        network=network,
        max_episode_timesteps=max_episode_timesteps,
        parallel_interactions=parallel_interactions,
        seed=seed,
    )
    try:
        return Agent.create(**arguments)
    except (TensorforceError, TypeError) as error:
        raise InvalidInput(f"agent: cannot build the {agent.agent} agent: {error}") from error
