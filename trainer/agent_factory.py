"""The run's agent: :func:`trainer.agents.agent_arguments` for one pool, plus TensorForce's own summarizer.

``trainer.agents.build_agent`` builds an agent from the same arguments but has no way to add a summarizer, which
the trainer owns (the spec rejects ``summarizer`` and points at ``summary_frequency``); so the agent is created here
from ``agent_arguments`` with the same error handling. The pool stands in for the environment: it has the state and
action specs and the episode limit in agent steps, and ``parallel_interactions`` is its size.

TensorForce's summarizer works on TensorFlow 2.12: it writes losses, entropy, KL divergence, update norm and
reward/return estimates (episode return and length among them) into ``summaries/agent/``, at no cost measurable
on cartpole-ppo (``bench/training.py --no-agent-summaries``). The per-step "distribution" and "action-value"
summaries and the per-variable "variables" and "updates" ones are left out: they make event files grow with every
timestep or every weight and say little in a long run.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tfcli.errors import InvalidInput
from tfcli.spec import Experiment
from trainer import compat
from trainer.agents import agent_arguments
from trainer.pools.base import EnvironmentPool

log = logging.getLogger(__name__)

AGENT_SUMMARIES = ["entropy", "kl-divergence", "loss", "update-norm", "reward"]
FLUSH_SECONDS = 10


def make_agent(experiment: Experiment, pool: EnvironmentPool, *, summaries: Path | None) -> Any:
    compat.apply()
    from tensorforce import Agent, TensorforceError

    arguments = agent_arguments(
        experiment.agent,
        environment=pool,
        network=experiment.network,
        max_episode_timesteps=None,  # the pool's limit
        parallel_interactions=pool.size,
        seed=experiment.seed,
    )
    if summaries is not None:
        arguments["summarizer"] = {
            "directory": str(summaries),
            "filename": "agent",
            "flush": FLUSH_SECONDS,
            "summaries": AGENT_SUMMARIES,
        }
    log.debug("agent arguments: %s", arguments)
    try:
        return Agent.create(**arguments)
    except (TensorforceError, TypeError) as error:
        raise InvalidInput(f"agent: cannot build the {experiment.agent.agent} agent: {error}") from error
