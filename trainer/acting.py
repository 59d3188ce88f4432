"""How the loop talks to the agent: batched ``act`` for the environments that step, then batched ``observe``.

TensorForce 0.6 keeps one act/observe buffer per parallel index, so one agent with ``parallel_interactions = N``
serves N environments: ``act(states=[...], parallel=[i, ...])`` and ``observe(terminal=[...], reward=[...],
parallel=[i, ...])`` (what ``tensorforce.execution.Runner`` does with ``batch_agent_calls``).

``deterministic: true``: TensorForce 0.6 acts without sampling or exploration only in *independent* mode
(``act(independent=True, deterministic=True)``); its model rejects deterministic acting in the training path
("Invalid combination deterministic and not independent"), and independent acts are not recorded, so they cannot
be observed or learned from. A deterministic experiment is therefore an evaluation: the agent (restored from the
output folder's checkpoint, if any) acts greedily and is not updated. The original client's TensorForce 0.4 could
do both at once; 0.6 cannot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class Acting(Protocol):
    def start_episode(self, index: int) -> None: ...

    def act(self, indices: Sequence[int], states: Sequence[Any]) -> list[Any]: ...

    def observe(self, indices: Sequence[int], terminals: Sequence[int], rewards: Sequence[float]) -> None: ...

    @property
    def updates(self) -> int: ...


class Learning:
    """The usual case: act (sampling, exploring) and learn from every observed step."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    def start_episode(self, index: int) -> None:
        pass  # TensorForce starts a parallel index's next episode after a terminal observe

    def act(self, indices: Sequence[int], states: Sequence[Any]) -> list[Any]:
        return list(self._agent.act(states=list(states), parallel=list(indices)))

    def observe(self, indices: Sequence[int], terminals: Sequence[int], rewards: Sequence[float]) -> None:
        self._agent.observe(terminal=list(terminals), reward=list(rewards), parallel=list(indices))

    @property
    def updates(self) -> int:
        return int(self._agent.updates)


class Evaluating:
    """``deterministic: true``: greedy independent acts, no learning (see the module docstring). With
    ``deterministic=False`` the acts sample from the policy, as in training, and are still not learned from (what
    ``tfcli experiment play`` does by default)."""

    def __init__(self, agent: Any, *, deterministic: bool = True) -> None:
        self._agent = agent
        self._deterministic = deterministic
        self._recurrent = len(agent.internals_spec) > 0
        self._internals: dict[int, Any] = {}

    def start_episode(self, index: int) -> None:
        if self._recurrent:
            self._internals[index] = self._agent.initial_internals()

    def act(self, indices: Sequence[int], states: Sequence[Any]) -> list[Any]:
        if not self._recurrent:
            return list(self._agent.act(states=list(states), independent=True, deterministic=self._deterministic))
        actions, internals = self._agent.act(
            states=list(states),
            internals=[self._internals[index] for index in indices],
            independent=True,
            deterministic=self._deterministic,
        )
        self._internals.update(zip(indices, internals, strict=True))
        return list(actions)

    def observe(self, indices: Sequence[int], terminals: Sequence[int], rewards: Sequence[float]) -> None:
        pass

    @property
    def updates(self) -> int:
        return int(self._agent.updates)


def acting_for(agent: Any, *, deterministic: bool) -> Acting:
    return Evaluating(agent) if deterministic else Learning(agent)
