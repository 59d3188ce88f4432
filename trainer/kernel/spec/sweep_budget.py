"""A sweep's budget as a whole: the sweep file's ``max_cost``, and what a sweep writes into each trial's spec so that
the trials keep it themselves (``trainer/hooks/cost_limit.py``), with nobody watching.

In a sweep file::

    max_cost: 25.0     # dollars for all its trials together (each trial's own ``max_cost`` still applies)

Each trial's spec gets :class:`SweepBudget`: the sweep's name, its number of trials and the limit. A trial adds up what
its siblings have cost from the files they publish in the shared results folder (``result.json`` and
``progress.jsonl``, found as early stopping finds them: the trial's own output folder with the sibling's name in place
of its own) and what it has cost itself, and pauses at the limit. One form for both backends, as early stopping's
(:mod:`trainer.kernel.spec.early_stop`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from trainer.kernel.spec.base import DnsName, StrictModel


class SweepBudget(StrictModel):
    """An experiment spec's ``sweep_budget``: written by a sweep with a ``max_cost`` into each of its trials."""

    sweep: DnsName
    trials: int = Field(ge=1)
    max_cost: float = Field(gt=0)

    def trial_name(self, index: int) -> str:
        return f"{self.sweep}-{index}"

    def siblings(self, own: str) -> list[str]:
        """The names of the sweep's other trials."""
        return [name for name in map(self.trial_name, range(self.trials)) if name != own]


def trial_sweep_budget(max_cost: float | None, *, sweep: str, trials: int) -> dict[str, Any] | None:
    """The ``sweep_budget`` each trial's spec gets (plain data), or None when the sweep has no ``max_cost``."""
    if max_cost is None:
        return None
    return {"sweep": sweep, "trials": trials, "max_cost": max_cost}
