"""How one run is scored, in one place for the trainer (its TensorBoard HParams metrics) and for sweeps
(``tfcli.sweeps.aggregate``, which imports these), so that the dashboard and ``list -s`` agree to the digit.

A run's final return is the mean return of the episodes that ended in the last :data:`FINAL_FRACTION` of its
timesteps (at least its last episode): what the policy does at the end, not an average over a learning phase. The
time to a target return is the timesteps at which the moving average of :data:`SMOOTHING` episodes first reaches it.
"""

from __future__ import annotations

import numpy as np

FINAL_FRACTION = 0.1
SMOOTHING = 20


def smooth(returns: np.ndarray, window: int = SMOOTHING) -> np.ndarray:
    """Moving average of up to ``window`` episodes ending at each one."""
    sums = np.cumsum(np.concatenate([[0.0], returns]))
    ends = np.arange(1, len(returns) + 1)
    starts = np.maximum(0, ends - window)
    return (sums[ends] - sums[starts]) / (ends - starts)


def final_score(steps: np.ndarray, returns: np.ndarray, fraction: float = FINAL_FRACTION) -> float | None:
    """Mean return of the episodes ending in the last ``fraction`` of the run's timesteps (None without episodes)."""
    if not len(returns):
        return None
    last = steps[-1] * (1 - fraction)
    window = returns[steps >= last] if (steps >= last).any() else returns[-1:]
    return float(window.mean())


def first_reach_index(smoothed: np.ndarray, target: float) -> int | None:
    """The first episode whose moving average reaches ``target``; None if none does."""
    hits = np.nonzero(smoothed >= target)[0]
    return int(hits[0]) if len(hits) else None
