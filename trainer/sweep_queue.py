"""What a GKE sweep's worker should train next, from what the bucket says of every trial (docs/design.md §6.6): the
same rule as the local queue's, so that a sweep prunes the same on both backends whatever the queue order.

1. a trial waiting at a rung that is now decided (promoted: it resumes from its checkpoint at the rung; or to be
   pruned there, which its trainer does in about a second) or that nobody is left to decide (it goes on);
2. else the next trial that has not ended and is not waiting, in the order that fills rungs early (each
   combination's first seed, then each one's second, ...: :func:`fill_order`) — a new trial, or one a preemption
   or crash left paused;
3. else nothing: the worker polls again (a trial still waiting is started again only once its rung is decided, so
   idle workers do not spin trainers).

A worker's whole job is done when every trial has ended (:func:`all_ended`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TrialView:
    """One trial as a worker sees it: its number, its ``result.json`` status (None: none yet), whether it waits at a
    rung and whether that rung would let it go on or prune it now (``decided``), and whether its claim in this Job
    says it ended. Only the claim ends a trial for the workers: a ``result.json`` that says ``completed`` or
    ``pruned`` may be an earlier Job's, whose trial ``resume -s`` extends or releases (its trainer ends at once,
    exit 0, when there is nothing to train)."""

    index: int
    status: str | None = None
    waiting: bool = False
    decided: bool = False
    ended: bool = False

    def over(self) -> bool:
        return self.ended


def fill_order(indexes: Sequence[int], seeds: int) -> list[int]:
    """Trial numbers in the order that fills rungs early: trial ``k`` is combination ``k // seeds``, seed
    ``k % seeds``; every combination's first seed comes first."""
    return sorted(indexes, key=lambda k: (k % seeds, k // seeds))


def next_candidates(trials: Sequence[TrialView], seeds: int) -> list[int]:
    """The trials a worker tries to claim, best first (it takes the first it wins)."""
    by_index = {trial.index: trial for trial in trials}
    order = fill_order(list(by_index), seeds)
    decided = [k for k in order if not by_index[k].over() and by_index[k].waiting and by_index[k].decided]
    fresh = [k for k in order if not by_index[k].over() and not by_index[k].waiting]
    return decided + fresh


def all_ended(trials: Sequence[TrialView]) -> bool:
    return all(trial.over() for trial in trials)
