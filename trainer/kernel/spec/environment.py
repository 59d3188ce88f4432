"""Environment specs: a gymnasium level (with optional wrappers), one of TensorForce's own environments, or the
user's own environment class (``entry_point: "envs.gridworld:GridWorld"``, in the project's code folders).

The trainer turns these into running environments; here they are only checked for shape, so that validation
stays fast and never imports gymnasium.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from trainer.kernel.spec.base import OpenModel, StrictModel

ENTRY_POINT = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"  # module.path:ClassName
# The last three carry TensorForce's OpenAIGym arguments (min_value/max_value, drop_states_indices, terminal_reward;
# trainer/kernel/spec/tensorforce_environments.py maps them), with TensorForce's meaning
# (trainer/environments/wrappers.py).
WrapperType = Literal[
    "atari_preprocessing",
    "frame_stack",
    "clip_reward",
    "flatten_observation",
    "bound_observation",
    "drop_observation_indices",
    "terminal_reward",
]


class WrapperSpec(OpenModel):
    """One gymnasium wrapper applied around the level; keys other than ``type`` are the wrapper's arguments."""

    type: WrapperType


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


class CustomEnvironment(StrictModel):
    """The user's own environment: a ``gymnasium.Env`` or ``tensorforce.Environment`` subclass named ``module:Class``
    (gymnasium's entry-point form), imported from the project's root, which the trainer puts on ``sys.path``.

    ``max_episode_steps`` is the episode limit gymnasium would register with it (a class carries none of its own).
    """

    type: Literal["custom"]
    entry_point: str = Field(pattern=ENTRY_POINT, description="module:Class, e.g. envs.gridworld:GridWorld")
    kwargs: dict[str, Any] = Field(default_factory=dict)
    max_episode_steps: int | None = Field(default=None, ge=1)
    wrappers: list[WrapperSpec] = Field(default_factory=list)


def _default_type(value: Any) -> Any:
    if isinstance(value, dict) and "type" not in value:
        return {"type": "custom" if "entry_point" in value else "gymnasium", **value}
    return value


EnvironmentSpec = Annotated[
    GymnasiumEnvironment | TensorforceEnvironment | CustomEnvironment,
    BeforeValidator(_default_type),
    Field(discriminator="type"),
]
