"""The rule of asynchronous successive halving (ASHA) at one rung, apart from where its numbers come from.

At a rung a trial goes on only if its combination is in the top ``1/reduction`` of the combinations that have
reached the rung (at least one goes on; a tie with the last one that goes on goes on too). A combination is ranked
by the interquartile mean over its seeds of each seed's score at the rung (:func:`trainer.kernel.scores.score_before`:
the mean return in the last 10% of the timesteps before it). With fewer than ``reduction`` combinations at the rung
nothing is decided yet: the trial waits at the rung, or judges it again as others reach it
(``trainer/rung_wait.py``, ``trainer/hooks/early_stop.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from trainer.kernel.scores import iqm


@dataclass(frozen=True)
class Verdict:
    """One combination's standing at a rung."""

    goes_on: bool
    score: float  # the combination's IQM
    cutoff: float  # the lowest IQM that goes on
    combinations: int  # how many combinations had reached the rung
    kept: int  # how many of them go on

    def reason(self, rung: int, reduction: int) -> str:
        """What a pruned trial's ``result.json`` says."""
        return (
            f"IQM {self.score:,.1f} at {rung:,} timesteps, below the top 1/{reduction} "
            f"({self.combinations} combinations at this rung)"
        )


def combination_score(scores: Sequence[float]) -> float | None:
    """The IQM of a combination's seeds' scores at a rung (None when none of them has one)."""
    return iqm(np.array(scores)) if len(scores) else None


def judge(own: int, scores: Mapping[int, float], reduction: int) -> Verdict | None:
    """Combination ``own``'s verdict among ``scores`` (combination -> IQM, those that reached the rung); None while
    fewer than ``reduction`` combinations have reached it, or ``own`` has no score."""
    if own not in scores or len(scores) < reduction:
        return None
    kept = max(1, len(scores) // reduction)
    cutoff = sorted(scores.values(), reverse=True)[kept - 1]
    return Verdict(scores[own] >= cutoff, scores[own], cutoff, len(scores), kept)
