"""The experiment's budget — ``episodes`` and/or ``total_timesteps`` across all environments — kept exactly.

A batched step advances every stepped environment by one timestep, so near the end of a timestep budget only as
many environments step as timesteps are left; and no episode starts that the episode budget has no room for. A run
therefore ends with exactly ``total_timesteps`` timesteps or exactly ``episodes`` episodes, whichever comes first.

The cost budget's rule is here too (:func:`counted_usd`): what ``max_cost`` counts is the run's price times its
training time plus a stated allowance of node time per start (:data:`START_ALLOWANCE_SECONDS`), which bills and
does not train.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainer.kernel.state import RunState

if TYPE_CHECKING:  # the spec models (pydantic): `list` reads a budget from plain data (SpecView), not a model
    from trainer.kernel.spec import Experiment


@dataclass(frozen=True)
class Budget:
    episodes: int | None
    timesteps: int | None

    @classmethod
    def of(cls, experiment: Experiment) -> Budget:
        return cls(episodes=experiment.episodes, timesteps=experiment.total_timesteps)

    def timesteps_left(self, state: RunState) -> int | None:
        """Timesteps still to take (None: no timestep budget)."""
        return None if self.timesteps is None else max(self.timesteps - state.timesteps, 0)

    def episodes_to_start(self, state: RunState, running: int) -> int | None:
        """How many more episodes may start while ``running`` are under way (None: no episode budget)."""
        return None if self.episodes is None else max(self.episodes - state.episodes - running, 0)

    def spent(self, state: RunState) -> bool:
        """True once either budget is used up."""
        return (self.timesteps is not None and state.timesteps >= self.timesteps) or (
            self.episodes is not None and state.episodes >= self.episodes
        )

    def reached_by(self, result: Mapping[str, Any]) -> bool:
        """Whether a run that ended with ``result`` (``result.json``'s counters) has nothing left of this budget: a
        completed run whose budget was extended since is not (it continues from its final checkpoint)."""
        timesteps, episodes = result.get("timesteps"), result.get("episodes")
        return (self.timesteps is not None and isinstance(timesteps, int) and timesteps >= self.timesteps) or (
            self.episodes is not None and isinstance(episodes, int) and episodes >= self.episodes
        )

    def left(self, state: RunState) -> Budget:
        """What is still to run after ``state``'s counters (None where there is no such budget), never below zero."""
        episodes = None if self.episodes is None else max(self.episodes - state.episodes, 0)
        return Budget(episodes=episodes, timesteps=self.timesteps_left(state))

    def describe(self, joiner: str = " or ") -> str:
        """``12,000 timesteps or 50 episodes``; ``joiner`` between the two where both are set."""
        parts = []
        if self.timesteps is not None:
            parts.append(f"{self.timesteps:,} timesteps")
        if self.episodes is not None:
            parts.append(f"{self.episodes:,} episodes")
        return joiner.join(parts)


# What a start of the trainer on a node bills that its training time does not count (docs/design.md §6.5, "Node
# time"): a stated allowance per start, not a measurement. The trainer sees neither its node's creation nor its
# removal, and both bill at the node's full price.
NODE_START_SECONDS = 10 * 60
"""Node start-up and image pull before the first step: the autoscaler adds the node (a couple of minutes), GKE
installs the GPU driver, the node pulls the trainer image (TensorFlow with CUDA, several GB), the trainer builds
its agent. docs/gke.md ("Up") counts 15 to 30 minutes from ``start`` to the first episode, the cluster's own 5 to 10
included: 10 minutes is the low end of what that leaves the node, an estimate rather than a ceiling."""
SCALE_DOWN_SECONDS = 10 * 60
"""After the pod ends (a pause, ``max_cost``, completion) the node stays until the cluster autoscaler removes it: a
node unneeded for more than 10 minutes is deleted (kubernetes/autoscaler, cluster-autoscaler/FAQ.md, "How does
scale-down work?"; GKE runs that autoscaler, and its ``OPTIMIZE_UTILIZATION`` profile, which infra/cluster.py sets,
removes nodes sooner by an amount GKE does not publish: 10 minutes is the ceiling). A spot node that is reclaimed
goes at once, and its replacement's start-up is the next start's allowance."""
START_ALLOWANCE_SECONDS = NODE_START_SECONDS + SCALE_DOWN_SECONDS
"""Billed node seconds per start that training time leaves out; the stack hands it to the learner with its price
(``TFCLI_START_ALLOWANCE_SECONDS``, :mod:`infra.pod_parts`); a local run has no node and none."""


def billed_seconds(trained: float, starts: int, allowance_seconds: float) -> float:
    """The seconds ``max_cost`` counts: training time plus ``allowance_seconds`` for each of ``starts`` starts."""
    return max(trained, 0.0) + max(starts, 0) * max(allowance_seconds, 0.0)


def counted_usd(hourly_price: float, seconds: float, starts: int = 0, allowance_seconds: float = 0.0) -> float:
    """What ``max_cost`` counts for ``seconds`` of training over ``starts`` starts at ``hourly_price`` dollars an hour
    (each start adding ``allowance_seconds`` of node time): the one rule of the trainer's cost limit (its own run and
    a sweep's trials: :mod:`trainer.hooks.sweep_spend`), of ``status``'s warning (:class:`tfcli.gke.cost.Counted`)
    and of ``plan``'s allowance line, so they never disagree."""
    return hourly_price * billed_seconds(seconds, starts, allowance_seconds) / 3600


def starts_seen(recorded: object, trained: float) -> int:
    """How many times a run started, as a reader of its files sees it: the count they record (``result.json``'s
    ``starts``, a ``progress.jsonl`` line's ``start``), and at least one once it has trained (files from before the
    count was kept)."""
    count = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else 0
    return max(count, 1 if trained > 0 else 0)
