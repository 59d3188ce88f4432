"""Early stopping of a sweep's trials by asynchronous successive halving (ASHA; Li et al., 2020, "A System for
Massively Parallel Hyperparameter Tuning"): the sweep file's ``early_stop`` key, and what a sweep writes into each
trial's spec so that the trial can judge itself (``trainer/hooks/early_stop.py``) with nobody watching.

In a sweep file::

    early_stop: true                    # the defaults below
    early_stop: {reduction: 3, min_timesteps: 4000, recheck_seconds: 5}

Rungs fall at ``min_timesteps x reduction^k`` below the budget (``total_timesteps``; default ``min_timesteps``:
the budget over ``reduction²``, so two rungs). At a rung a trial goes on only if its combination is in the top
``1/reduction`` of the combinations that have reached that rung (at least one goes on).

Each trial's spec gets the resolved form (:class:`TrialEarlyStop`): the sweep's name, its number of trials and
seeds (trial ``k`` is combination ``k // seeds``, named ``<sweep>-<k>``), the reduction, the rungs and how often an
undecided rung is judged again. One form for both backends: a trial finds a sibling's results folder by putting the
sibling's name in place of its own in its own output folder's path (``experiments/<sweep>-<k>/results`` here,
``/results/<sweep>/<sweep>-<k>`` in a GKE pod).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.base import DnsName, StrictModel

DEFAULT_REDUCTION = 3
DEFAULT_RECHECK_SECONDS = 5.0
# GCS takes about one write per second to one object (more is throttled with 429s): a trial rechecks no more often.
MIN_RECHECK_SECONDS = 1.0
# The metadata cache TTL set on the results bucket's GCS FUSE mount (infra.pod_parts.RESULTS_MOUNT_OPTIONS; gcsfuse's
# default is 60 s). Within it a reader sees the listing and sizes it saw before, so an undecided rung is rechecked
# no sooner than this (trainer/hooks/early_stop.py): an earlier recheck would read the same cached answer.
METADATA_TTL_SECONDS = 10


def _recheck_bound(value: float) -> float:
    if value < MIN_RECHECK_SECONDS:
        raise ValueError(
            f"at least {MIN_RECHECK_SECONDS:g} second, got {value:g}: GCS takes one write per second per object, "
            "and a GKE trial rechecks through the bucket"
        )
    return value


class EarlyStopSettings(StrictModel):
    """The sweep file's ``early_stop`` mapping (``true`` is all defaults)."""

    reduction: int = Field(default=DEFAULT_REDUCTION, ge=2, le=100)
    min_timesteps: int | None = Field(default=None, ge=1)
    recheck_seconds: float = Field(default=DEFAULT_RECHECK_SECONDS, le=3600)

    @field_validator("recheck_seconds")
    @classmethod
    def _recheck(cls, value: float) -> float:
        return _recheck_bound(value)


class TrialEarlyStop(StrictModel):
    """An experiment spec's ``early_stop``: written by a sweep into each of its trials (docs/design.md §6.6)."""

    sweep: DnsName
    trials: int = Field(ge=2)
    seeds: int = Field(ge=1)
    reduction: int = Field(ge=2, le=100)
    rungs: list[int] = Field(min_length=1)
    recheck_seconds: float = Field(default=DEFAULT_RECHECK_SECONDS, le=3600)

    @field_validator("recheck_seconds")
    @classmethod
    def _recheck(cls, value: float) -> float:
        return _recheck_bound(value)

    @field_validator("rungs")
    @classmethod
    def _ascending(cls, rungs: list[int]) -> list[int]:
        if any(rung < 1 for rung in rungs) or rungs != sorted(set(rungs)):
            raise ValueError("expected ascending timesteps, each at least 1")
        return rungs

    def trial_name(self, index: int) -> str:
        return f"{self.sweep}-{index}"

    def index_of(self, name: str) -> int | None:
        """Trial ``name``'s number in this sweep (None: not one of its trials)."""
        number = name.removeprefix(f"{self.sweep}-")
        if number == name or not number.isdigit() or int(number) >= self.trials:
            return None
        return int(number)

    def combinations(self) -> list[list[str]]:
        """The trials of each combination, in combination order."""
        return [
            [self.trial_name(index) for index in range(start, min(start + self.seeds, self.trials))]
            for start in range(0, self.trials, self.seeds)
        ]


FLAGS = {"early_stop": "--early-stop", "reduction": "--reduction", "min_timesteps": "--min-timesteps"}


def _where(shown: str, key: str) -> str:
    dotted = "early_stop" if key == "early_stop" else f"early_stop.{key}"
    return f"{shown}: {dotted} ({FLAGS[key]})"


def trial_early_stop(
    settings: EarlyStopSettings | None,
    *,
    sweep: str,
    combinations: int,
    seeds: int,
    axes: dict[str, Any],
    base: dict[str, Any],
    shown: str,
) -> dict[str, Any] | None:
    """The ``early_stop`` each trial's spec gets (plain data), or None without early stopping. Bad settings are an
    :class:`InvalidInput` naming the sweep file's key and the command line's flag."""
    if settings is None:
        return None
    chosen = settings
    if combinations < 2:
        raise InvalidInput(
            f"{_where(shown, 'early_stop')}: the sweep has one combination; early stopping ranks combinations "
            "against each other, so give an axis two or more values (or leave --early-stop out)"
        )
    if "total_timesteps" in axes:
        raise InvalidInput(
            f"{_where(shown, 'early_stop')}: the rungs need one budget for every trial; do not sweep total_timesteps"
        )
    budget = base.get("total_timesteps")
    if not budget:
        raise InvalidInput(
            f"{_where(shown, 'early_stop')}: rungs are in timesteps, and the base spec has no total_timesteps "
            "(its budget is in episodes): set total_timesteps"
        )
    reduction = chosen.reduction
    first = chosen.min_timesteps or -(-budget // reduction**2)  # rounded up: no rung a hair below the budget
    if first >= budget:
        raise InvalidInput(
            f"{_where(shown, 'min_timesteps')}: {first:,} is not below the budget ({budget:,} total_timesteps), so "
            "no rung would fall inside a trial"
        )
    rungs = []
    rung = first
    while rung < budget:
        rungs.append(rung)
        rung *= reduction
    return {
        "sweep": sweep,
        "trials": combinations * seeds,
        "seeds": seeds,
        "reduction": reduction,
        "rungs": rungs,
        "recheck_seconds": chosen.recheck_seconds,
    }
