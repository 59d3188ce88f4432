"""Build a TensorForce agent from an agent spec, an optional network spec and a running environment.

The agent file says how to learn; the experiment owns everything that must agree with the run: the state and
action specs come from the environment, and the episode limit, the number of parallel interactions and the seed
from the experiment. The network spec, when the experiment names one, replaces the agent file's ``network``
(the policy's network; a critic or baseline stays as the agent file says).

TensorForce's own summarizer (:func:`agent_summarizer`) and recorder (:func:`agent_recorder`) are the trainer's to
set too: a TensorForce agent file's ``summarizer`` and ``recorder`` reach the trainer as the experiment's
``agent_summaries`` and ``record`` (trainer/kernel/spec/tensorforce_agents.py). On TensorFlow 2.12 the summarizer writes
losses, entropy, KL divergence, update norm and reward/return estimates (episode return and length among them)
into ``summaries/agent/``. They are not free: on cartpole-ppo, tracing the summary ops adds ~0.5 s before the first
update and writing them ~6% to each update (a 50,000-timestep run: 12.5-13.2 s with them, 11.6-11.8 s without;
``bench/training.py --no-agent-summaries`` compares the rates). The per-step "distribution" and "action-value"
summaries and the per-variable "variables" and "updates" ones are left out unless ``agent_summaries`` asks for
them: they make event files grow with every timestep or every weight and say little in a long run.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trainer import compat
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.agent import AgentSpec, NetworkSpec
from trainer.kernel.spec.recording import Recording

log = logging.getLogger(__name__)

AGENT_SUMMARIES = ("entropy", "kl-divergence", "loss", "update-norm", "reward")
SUMMARY_FLUSH_SECONDS = 10

# Agents without a network of their own to replace.
_NO_NETWORK = frozenset({"random", "constant"})
# The generic TensorForce agent keeps its network inside ``policy``.
_POLICY_NETWORK = frozenset({"tensorforce", "default"})
# TensorForce's agents check some combinations of arguments with a bare ``assert`` (an AssertionError without a
# message): the checked expression, as TensorForce writes it, and what it means for an agent file.
_ASSERTIONS = {
    "baseline_optimizer is not None": "a baseline needs a baseline_optimizer to train it",
    "baseline_optimizer is None": "a baseline_optimizer needs a baseline to train (there is none)",
    "not predict_terminal_values": "predict_terminal_values needs a baseline",
}
# Agents that update every ``update_frequency`` timesteps, with TensorForce's default frequency (a fraction of
# ``batch_size``). With ``parallel_interactions > 1`` TensorForce buffers each environment's timesteps until its
# episode ends (``config.buffer_observe = 'episode'``), and checks for an update only then: DQN on Space Invaders
# with 4 environments made one update per ~700 timesteps instead of one per 4 (34 instead of 2,500 in 20,000
# timesteps) and did not learn. Observing every ``update_frequency`` timesteps restores the agent's own schedule.
_TIMESTEP_UPDATES = {"dqn": 0.25, "double_dqn": 0.25, "ddqn": 0.25, "dueling_dqn": 0.25, "dpg": 1.0, "ddpg": 1.0}
_TIMESTEP_UPDATES |= {"ac": 1.0, "a2c": 1.0}
# How TensorForce runs the agent, not what it learns: the trainer's defaults, which an agent file's own ``config``
# overrides. TensorForce builds its act/observe/update graphs with ``tf.debugging`` assertions on every input
# (state bounds, action ranges, shapes, buffer indices) and feeds an all-true action mask into every act of an
# agent with discrete actions. The trainer's inputs come from the environment adapters, whose specs the agent was
# built from, and no bundled environment has action masks; without both, cartpole-ppo (16 environments) runs its
# 10,000 first timesteps ~15% faster and learns exactly the same returns (bench/trainer.py measures it).
EXECUTION_CONFIG = {"create_tf_assertions": False, "enable_int_action_masking": False}
# Agents whose ``memory`` argument is a replay memory's capacity (None: the least the agent can work with), and the
# agents whose ``memory`` is a batch memory ("minimum": the least). An agent built only to act needs neither.
_REPLAY_MEMORY = frozenset({"dqn", "double_dqn", "ddqn", "dueling_dqn", "dpg", "ddpg"})
_BATCH_MEMORY = frozenset({"ppo", "trpo", "vpg", "reinforce", "a2c", "ac"})
# An agent that only acts is given this episode limit (or its ``horizon``, which TensorForce wants within the limit,
# if longer): TensorForce sizes its episode buffers and the least memory by the limit (4,500 Atari states of 110 KB
# each for the flagship), and acting in independent mode never reads them.
ACTING_EPISODE_BOUND = 2
# What TensorForce raises for arguments it cannot build an agent from: its own error, a bare assert (see above),
# an argument a layer or optimizer does not take (TypeError), or a value or name it cannot use.
_SPEC_ERRORS: tuple[type[Exception], ...] = (TypeError, ValueError, KeyError, AssertionError)


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


def observe_every(agent: AgentSpec, arguments: Mapping[str, Any]) -> int | None:
    """Timesteps between updates of an agent that updates by timesteps (None: by episodes, or not a plain number),
    resolved as TensorForce does (a float is a fraction of ``batch_size``)."""
    default = _TIMESTEP_UPDATES.get(agent.agent)
    if default is None:
        return None
    frequency = arguments.get("update_frequency", default)
    if isinstance(frequency, bool) or not isinstance(frequency, int | float):
        return None  # "never", or a schedule
    if isinstance(frequency, float):
        batch_size = arguments.get("batch_size")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            return None
        return max(1, int(frequency * batch_size))
    return frequency if frequency > 0 else None


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
    every = observe_every(agent, arguments)
    if parallel_interactions > 1 and every is not None and "buffer_observe" not in config:
        config["buffer_observe"] = every  # see _TIMESTEP_UPDATES
    arguments.update(
        states=environment.states(),
        actions=environment.actions(),
        max_episode_timesteps=max_episode_timesteps,
        parallel_interactions=parallel_interactions,
    )
    if config:
        arguments["config"] = config
    return arguments


def skip_graph_rewrites_on_cpu() -> None:
    """Turn TensorFlow's graph optimizer (grappler) off where no GPU is visible.

    Why: grappler rewrites each ``tf.function`` graph at its first call, and TensorForce's act, observe and update
    graphs are thousands of ops: on a 2-core machine that is ~1 s of every agent build (cartpole-ppo, 4,000
    timesteps: 13.1 s with it, 12.1 s without; multi-threaded 8.4 s and 7.2 s), and its rewrites bought nothing per
    step on CPU here (the same seconds per update on cartpole-ppo and on Space Invaders' convolutions) and left
    every return the same. On a GPU its layout optimizer matters to convolutions (NHWC to NCHW for cuDNN), so it
    stays on there."""
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


def build_agent(
    agent: AgentSpec,
    *,
    environment: Any,
    network: NetworkSpec | None = None,
    max_episode_timesteps: int | None,
    parallel_interactions: int = 1,
    seed: int | None = None,
    summarizer: Mapping[str, Any] | None = None,
    recorder: Mapping[str, Any] | None = None,
    acting_only: bool = False,
) -> Any:
    """A ready TensorForce agent (``tensorforce.Agent``) for ``environment``; close it with ``agent.close()``.

    ``environment`` is anything with ``states()``, ``actions()`` and ``max_episode_timesteps()`` (an environment
    pool stands in for one: ``parallel_interactions`` is then its size). ``max_episode_timesteps`` None means the
    environment's own limit. ``summarizer`` is TensorForce's summarizer argument (see :func:`agent_summarizer`);
    None writes no agent summaries. ``recorder`` is TensorForce's recorder argument (see :func:`agent_recorder`).

    TensorForce rejects arguments it cannot build an agent from with ``TensorforceError`` (a bad value, a missing
    episode limit for an agent that needs one), ``TypeError`` (a layer or optimizer argument it does not take), or
    a bare ``AssertionError`` (PPO, TRPO and VPG: a ``baseline`` without a ``baseline_optimizer``, or the other way
    round). Those come from the user's agent spec, so they become :class:`InvalidInput` naming the agent and the
    problem (exit code 2, no traceback).

    ``acting_only``: the agent will only act (``tfcli experiment play``), so its memory is made as small as the agent
    allows and its episode buffers as short as it allows: the flagship DQN's replay memory of 10,000 Atari states
    alone is 1.1 GB. Such an agent can only ``act(independent=True)``.
    """
    compat.apply()
    skip_graph_rewrites_on_cpu()
    from tensorforce import Agent, TensorforceError

    arguments = agent_arguments(
        agent,
        environment=environment,
        network=network,
        max_episode_timesteps=max_episode_timesteps,
        parallel_interactions=parallel_interactions,
        seed=seed,
    )
    arguments["config"] = {**EXECUTION_CONFIG, **arguments.get("config", {})}
    if summarizer is not None:
        arguments["summarizer"] = dict(summarizer)
    if recorder is not None:
        arguments["recorder"] = dict(recorder)
    if acting_only:
        _least_memory(agent.agent, arguments)
        # Independent acts neither record nor check episode lengths; the limit only sizes buffers and memory.
        horizon = arguments.get("horizon")
        bound = max(ACTING_EPISODE_BOUND, horizon if isinstance(horizon, int) else 0)
        limit = arguments["max_episode_timesteps"]
        arguments["max_episode_timesteps"] = bound if limit is None else min(bound, limit)
    log.debug("agent arguments: %s", arguments)
    try:
        return Agent.create(**arguments)
    except (TensorforceError, *_SPEC_ERRORS) as error:
        raise InvalidInput(f"agent: cannot build the {agent.agent} agent: {_problem(error)}") from error


def _least_memory(agent: str, arguments: dict[str, Any]) -> None:
    if "memory" not in arguments:
        return
    if agent in _REPLAY_MEMORY:
        arguments["memory"] = None
    elif agent in _BATCH_MEMORY:
        arguments["memory"] = "minimum"
    else:  # the generic agent: its default memory (None: the least)
        arguments.pop("memory")


def agent_summarizer(directory: Path, summaries: Sequence[str] | None = None) -> dict[str, Any]:
    """TensorForce's summarizer argument: the agent's own summaries into ``directory/agent/`` (``summaries``: the
    experiment's ``agent_summaries``, from a TensorForce summarizer; None: :data:`AGENT_SUMMARIES`)."""
    return {
        "directory": str(directory),
        "filename": "agent",
        "flush": SUMMARY_FLUSH_SECONDS,
        "summaries": list(AGENT_SUMMARIES if summaries is None else summaries),
    }


def agent_recorder(directory: Path, record: Recording) -> dict[str, Any]:
    """TensorForce's recorder argument: its own episode traces (``trace-<episode>.npz``) into ``directory``.

    TensorForce's recorder is the format a TensorForce user already has tools for (``agent.pretrain`` reads it), and
    it records inside ``act``/``observe``, so every run mode records the same way."""
    recorder: dict[str, Any] = {"directory": str(directory), "frequency": record.frequency, "start": record.start}
    if record.max_traces is not None:
        recorder["max-traces"] = record.max_traces
    return recorder


def _problem(error: BaseException) -> str:
    """What went wrong, in words: the error's message, or for a bare ``assert`` the check that failed."""
    if isinstance(error, AssertionError) and not str(error):
        frames = traceback.extract_tb(error.__traceback__)
        check = (frames[-1].line or "").strip().removeprefix("assert").strip() if frames else ""
        if check in _ASSERTIONS:
            return _ASSERTIONS[check]
        where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        return f"TensorForce's check `{check or '?'}` failed{where}"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}" if isinstance(error, KeyError) else text
