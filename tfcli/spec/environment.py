"""Environment specs: a gymnasium level (with optional wrappers) or one of TensorForce's own environments.

The trainer turns these into running environments; here they are only checked for shape, so that validation
stays fast and never imports gymnasium.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from tfcli.spec.base import OpenModel, StrictModel

# The last three carry TensorForce's OpenAIGym arguments (min_value/max_value, drop_states_indices, terminal_reward;
# tfcli/spec/tensorforce_environments.py maps them), with TensorForce's meaning (trainer/environments/wrappers.py).
WRAPPER_TYPES = (
    "atari_preprocessing",
    "frame_stack",
    "clip_reward",
    "flatten_observation",
    "bound_observation",
    "drop_observation_indices",
    "terminal_reward",
)


class WrapperSpec(OpenModel):
    """One gymnasium wrapper applied around the level; keys other than ``type`` are the wrapper's arguments."""

    type: Literal[
        "atari_preprocessing",
        "frame_stack",
        "clip_reward",
        "flatten_observation",
        "bound_observation",
        "drop_observation_indices",
        "terminal_reward",
    ]


class GymnasiumEnvironment(StrictModel):
    """A gymnasium level such as ``CartPole-v1`` or ``ALE/SpaceInvaders-v5``."""

    type: Literal["gymnasium"] = "gymnasium"
    level: str = Field(min_length=1)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    wrappers: list[WrapperSpec] = Field(default_factory=list)


class TensorforceEnvironment(StrictModel):
    """One of TensorForce's own environments, passed to ``tensorforce.Environment.create``."""

    type: Literal["tensorforce"]
    environment: str = Field(min_length=1)
    kwargs: dict[str, Any] = Field(default_factory=dict)


def _default_type(value: Any) -> Any:
    if isinstance(value, dict) and "type" not in value:
        return {"type": "gymnasium", **value}
    return value


EnvironmentSpec = Annotated[
    GymnasiumEnvironment | TensorforceEnvironment,
    BeforeValidator(_default_type),
    Field(discriminator="type"),
]
