"""A resolved experiment spec read as plain data, typed: what listings, status, plans and resume read of a spec
that tfcli wrote itself (``experiments/NAME/experiment.yaml``, a sweep file's ``base``, a trial's expansion).

Those readers must stay fast — ``list`` reads every experiment's spec, and validating each one with pydantic would
cost more than the listing — so they read the stored data without validating it again. This is the one place that
data is read: each key a reader needs is a property here, with the model's default (``num_workers`` 3, ``run_mode``
single) written once; tests/experiments/test_spec_view.py holds each default to
:class:`trainer.kernel.spec.experiment.Experiment`'s, so the two cannot drift apart. Pure: no pydantic, no numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_RUN_MODE = "single"
DEFAULT_NUM_WORKERS = 3
BUDGET_KEYS = ("total_timesteps", "episodes")


@dataclass(frozen=True)
class SpecView:
    """Typed reads of a resolved spec's plain data (missing keys read as the model's defaults)."""

    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def run_mode(self) -> str:
        return str(self.data.get("run_mode", DEFAULT_RUN_MODE))

    @property
    def distributed(self) -> bool:
        return self.run_mode == "distributed"

    @property
    def num_workers(self) -> int:
        return int(self.data.get("num_workers", DEFAULT_NUM_WORKERS))

    @property
    def total_timesteps(self) -> int | None:
        return _count(self.data.get("total_timesteps"))

    @property
    def episodes(self) -> int | None:
        return _count(self.data.get("episodes"))

    @property
    def budget(self) -> dict[str, int | None]:
        """``{"total_timesteps": N | None, "episodes": N | None}``: the budgets, by spec key."""
        return {"total_timesteps": self.total_timesteps, "episodes": self.episodes}

    def budget_text(self) -> str:
        """``100,000 timesteps or 500 episodes``: the budgets in words, as the trainer words them."""
        from trainer.kernel.budget import Budget  # as reported_state does: not at start-up

        return Budget(episodes=self.episodes, timesteps=self.total_timesteps).describe()

    @property
    def max_cost(self) -> float | None:
        return _number(self.data.get("max_cost"))

    @property
    def target_return(self) -> float | None:
        return _number(self.data.get("target_return"))

    @property
    def early_stop(self) -> dict[str, Any] | None:
        """A trial's early-stopping settings as data (None: it does not stop early)."""
        value = self.data.get("early_stop")
        return dict(value) if isinstance(value, Mapping) else None


def _count(value: Any) -> int | None:
    return int(value) if value else None


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
