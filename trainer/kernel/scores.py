"""How one run is scored, in one place for the trainer (its TensorBoard HParams metrics) and for sweeps
(``tfcli.sweeps.aggregate``, which imports these), so that the dashboard and ``list -s`` agree to the digit.

A run's final return is the mean return of the episodes that ended in the last :data:`FINAL_FRACTION` of its
timesteps (at least its last episode): what the policy does at the end, not an average over a learning phase. The
time to a target return is the timesteps at which the moving average of :data:`SMOOTHING` episodes first reaches it.
A trial of an early-stopped sweep is judged at a rung by the same rule over the episodes before the rung
(:func:`score_before`), and a combination by the interquartile mean of its seeds (:func:`iqm`, which
``tfcli.sweeps.stats`` uses too).
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


def score_before(
    steps: np.ndarray, returns: np.ndarray, timesteps: float, fraction: float = FINAL_FRACTION
) -> float | None:
    """Mean return of the episodes ending in the last ``fraction`` of the first ``timesteps`` (at least the last
    episode that ended by then; None when none had)."""
    before = steps <= timesteps
    steps, returns = steps[before], returns[before]
    if not len(returns):
        return None
    inside = steps >= timesteps * (1 - fraction)
    window = returns[inside] if inside.any() else returns[-1:]
    return float(window.mean())


def final_score(steps: np.ndarray, returns: np.ndarray, fraction: float = FINAL_FRACTION) -> float | None:
    """Mean return of the episodes ending in the last ``fraction`` of the run's timesteps (None without episodes)."""
    if not len(returns):
        return None
    return score_before(steps, returns, steps[-1], fraction)


def iqm(scores: np.ndarray) -> float:
    """The mean of the middle 50 % of all scores: ``int(0.25 n)`` are dropped at each end (as ``scipy.stats.
    trim_mean(x, 0.25)``, which the paper's library uses)."""
    flat = np.sort(np.asarray(scores, dtype=float).ravel())
    if flat.size == 0:
        raise ValueError("no scores")
    cut = int(0.25 * flat.size)
    return float(flat[cut : flat.size - cut].mean())


def first_reach_index(smoothed: np.ndarray, target: float) -> int | None:
    """The first episode whose moving average reaches ``target``; None if none does."""
    hits = np.nonzero(smoothed >= target)[0]
    return int(hits[0]) if len(hits) else None
