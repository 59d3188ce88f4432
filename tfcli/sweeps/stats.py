"""Aggregate metrics with honest uncertainty, after Agarwal et al. (2021), "Deep RL at the Edge of the Statistical
Precipice": the interquartile mean (IQM) of runs and percentile confidence intervals from a stratified bootstrap.

A score matrix has one row per run (seed) and one column per task; the bootstrap resamples runs with replacement
*within each task* (the stratum), so every resample keeps every task. A sweep compares combinations on one
environment, so its matrices usually have one column. numpy only: ``rliable`` (the paper's library) would bring
scipy, pandas, seaborn and arch for two functions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from trainer.kernel.scores import iqm  # one definition for the trainer's early stopping and the sweep tables

__all__ = ["bootstrap_ci", "curve_band", "iqm", "mean", "stratified_resamples"]

CONFIDENCE = 0.95
REPETITIONS = 2000
SEED = 0


def mean(scores: np.ndarray) -> float:
    return float(np.asarray(scores, dtype=float).mean())


def stratified_resamples(runs: int, tasks: int, repetitions: int = REPETITIONS, seed: int = SEED) -> np.ndarray:
    """Row indices of ``repetitions`` resamples: shape (repetitions, runs, tasks), each column drawn on its own."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, runs, size=(repetitions, runs, tasks))


def bootstrap_ci(
    scores: np.ndarray,
    statistic: Callable[[np.ndarray], float] = iqm,
    *,
    confidence: float = CONFIDENCE,
    repetitions: int = REPETITIONS,
    seed: int = SEED,
) -> tuple[float, float, float]:
    """(point estimate, lower, upper): the statistic of ``scores`` (runs x tasks, or a vector of runs) and its
    percentile interval over stratified bootstrap resamples. One run gives a zero-width interval."""
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    runs, tasks = matrix.shape
    point = statistic(matrix)
    indices = stratified_resamples(runs, tasks, repetitions, seed)
    columns = np.arange(tasks)[None, None, :]
    resampled = matrix[indices, columns]  # (repetitions, runs, tasks)
    values = np.array([statistic(sample) for sample in resampled])
    alpha = (1 - confidence) / 2
    lower, upper = np.quantile(values, [alpha, 1 - alpha])
    return point, float(lower), float(upper)


def curve_band(
    curves: np.ndarray, *, confidence: float = CONFIDENCE, repetitions: int = REPETITIONS, seed: int = SEED
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, lower, upper) at each point of ``curves`` (runs x points): the mean over runs and its bootstrap
    interval, the runs resampled together at every point (one resample is one set of whole curves)."""
    matrix = np.asarray(curves, dtype=float)
    runs = matrix.shape[0]
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, runs, size=(repetitions, runs))
    means = matrix[indices].mean(axis=1)  # (repetitions, points)
    alpha = (1 - confidence) / 2
    lower, upper = np.quantile(means, [alpha, 1 - alpha], axis=0)
    return matrix.mean(axis=0), lower, upper
