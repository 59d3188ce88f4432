"""Agent and network specs in TensorForce 0.6's own format.

The argument table below is TensorForce 0.6.5's (``tests/spec/test_agent_table.py`` compares it with the installed
TensorForce's signatures), so that a typo in an agent file is caught by ``tfcli validate`` with a did-you-mean,
without importing TensorFlow.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from pydantic import Discriminator, Field, RootModel, Tag, model_validator

from trainer.kernel.spec.base import OpenModel, raise_problems

_POLICY_GRADIENT = (
    "batch_size network use_beta_distribution memory update_frequency learning_rate discount reward_processing "
    "return_processing advantage_processing predict_terminal_values baseline baseline_optimizer"
)
_Q_LEARNING = (
    "memory batch_size network update_frequency start_updating learning_rate huber_loss horizon discount "
    "reward_processing return_processing predict_terminal_values target_update_weight target_sync_frequency"
)
_ACTOR_CRITIC = (
    "batch_size network use_beta_distribution memory update_frequency learning_rate horizon discount "
    "reward_processing return_processing predict_terminal_values critic critic_optimizer"
)
_DETERMINISTIC = (
    "memory batch_size network use_beta_distribution update_frequency start_updating learning_rate horizon "
    "discount reward_processing return_processing predict_terminal_values critic critic_optimizer"
)
_TENSORFORCE = (
    "update optimizer objective reward_estimation policy memory baseline baseline_optimizer baseline_objective"
)
_COMMON = "state_preprocessing exploration variable_noise l2_regularization entropy_regularization config tracking"

# Agent name -> the arguments a spec file may set (besides ``agent``).
AGENT_ARGUMENTS: dict[str, frozenset[str]] = {
    name: frozenset(f"{args} {_COMMON}".split())
    for name, args in {
        "ppo": f"{_POLICY_GRADIENT} multi_step subsampling_fraction likelihood_ratio_clipping",
        "trpo": f"{_POLICY_GRADIENT} linesearch_iterations subsampling_fraction",
        "vpg": _POLICY_GRADIENT,
        "reinforce": _POLICY_GRADIENT,
        "a2c": f"{_ACTOR_CRITIC} advantage_processing",
        "ac": _ACTOR_CRITIC,
        "dqn": _Q_LEARNING,
        "double_dqn": _Q_LEARNING,
        "ddqn": _Q_LEARNING,
        "dueling_dqn": _Q_LEARNING,
        "dpg": _DETERMINISTIC,
        "ddpg": _DETERMINISTIC,
        "tensorforce": _TENSORFORCE,
        "default": _TENSORFORCE,
    }.items()
} | {"random": frozenset({"config"}), "constant": frozenset({"action_values", "config"})}

# Set by the trainer from the experiment; a spec that sets them would silently disagree with the experiment. A
# TensorForce agent file's own are translated into experiment keys before validation (spec/tensorforce_agents.py),
# so only a resolved spec written by hand meets this refusal.
TRAINER_OWNED = {
    "states": "the environment",
    "actions": "the environment",
    "max_episode_timesteps": "the experiment's max_timesteps_per_episode",
    "parallel_interactions": "the experiment's run_mode and num_workers",
    "saver": "the experiment's saver_frequency",
    "summarizer": "the experiment's summary_frequency",
    "recorder": "the trainer",
}


def _close(word: str, choices: object) -> str:
    match = difflib.get_close_matches(word, sorted(choices), n=1)  # type: ignore[call-overload]
    return f" (did you mean '{match[0]}'?)" if match else ""


class AgentSpec(OpenModel):
    """A TensorForce agent spec: ``agent`` names the algorithm, the other keys are its arguments."""

    agent: str

    @model_validator(mode="after")
    def _known_agent_and_arguments(self) -> AgentSpec:
        if self.agent not in AGENT_ARGUMENTS:
            raise_problems(
                "AgentSpec",
                [
                    (
                        ("agent",),
                        f"unknown agent '{self.agent}'{_close(self.agent, AGENT_ARGUMENTS)}; "
                        f"TensorForce 0.6 agents: {', '.join(sorted(AGENT_ARGUMENTS))}",
                    )
                ],
            )
        allowed = AGENT_ARGUMENTS[self.agent]
        problems: list[tuple[tuple[str | int, ...], str]] = []
        for key in self.model_extra or {}:
            if key in TRAINER_OWNED:
                problems.append(((key,), f"set by the trainer from {TRAINER_OWNED[key]}; remove it here"))
            elif key not in allowed:
                problems.append(((key,), f"not an argument of the {self.agent} agent{_close(key, allowed)}"))
        raise_problems("AgentSpec", problems)
        return self

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments for ``tensorforce.Agent.create`` (``agent`` included)."""
        return self.model_dump()


class LayerSpec(OpenModel):
    """One TensorForce layer (``type`` plus its arguments, e.g. ``{"type": "dense", "size": 64}``)."""

    type: str = Field(min_length=1)


def _network_shape(value: Any) -> str:
    return "layers" if isinstance(value, list) else "network"


class NetworkSpec(
    RootModel[
        Annotated[
            Annotated[list[LayerSpec], Tag("layers")] | Annotated[LayerSpec, Tag("network")],
            Discriminator(_network_shape),
        ]
    ]
):
    """A TensorForce network: a list of layers, or one mapping such as ``{"type": "auto", "size": 64}``."""

    @model_validator(mode="after")
    def _not_empty(self) -> NetworkSpec:
        if isinstance(self.root, list) and not self.root:
            raise ValueError("a network needs at least one layer")
        return self

    def tensorforce(self) -> Any:
        """The network in the form TensorForce's ``network=`` argument takes."""
        return self.model_dump()
