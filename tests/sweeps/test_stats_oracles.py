"""tfcli/sweeps/stats.py against answers worked out here: exact bootstrap distributions of tiny inputs, inputs on
which a stratified bootstrap and a pooled one disagree, and quantiles taken with numpy in the test itself."""

from __future__ import annotations

import numpy as np
import pytest

from tfcli.sweeps import stats


def trimmed_mean(values: np.ndarray) -> float:
    """scipy.stats.trim_mean(values, 0.25), written out: drop int(n / 4) from each end of the sorted values."""
    ordered = sorted(float(value) for value in values.ravel())
    cut = len(ordered) // 4
    kept = ordered[cut : len(ordered) - cut]
    return sum(kept) / len(kept)


@pytest.mark.parametrize("size", range(1, 22))
def test_iqm_is_the_25_percent_trimmed_mean(size: int) -> None:
    values = np.random.default_rng(size).normal(0, 100, size)
    assert stats.iqm(values) == pytest.approx(trimmed_mean(values), rel=1e-12)
    assert stats.iqm(values.reshape(size, 1)) == pytest.approx(trimmed_mean(values), rel=1e-12)


def test_iqm_and_mean_of_nothing_or_integers() -> None:
    with pytest.raises(ValueError, match=r"^no scores$"):
        stats.iqm(np.array([]))
    assert stats.iqm([1, 2]) == 1.5 and isinstance(stats.iqm([1, 2]), float)
    assert stats.mean([[1, 2], [3, 5]]) == 2.75 and isinstance(stats.mean([1, 2]), float)


def test_a_stratified_bootstrap_tells_tasks_apart_where_a_pooled_one_cannot() -> None:
    # Two runs on two tasks, each run scoring 100 on one task: every run's mean is 50, so resampling whole runs
    # gives 50 every time. Resampling each task on its own draws each column's two values independently: the mean
    # of the four is 0, 25, 50, 75 or 100 with p 1/16, 4/16, 6/16, 4/16, 1/16, so 2.5% and 97.5% fall on 0 and 100.
    scores = np.array([[0.0, 100.0], [100.0, 0.0]])
    assert stats.bootstrap_ci(scores, stats.mean) == (50.0, 0.0, 100.0)


def test_resamples_draw_every_task_on_its_own() -> None:
    indices = stats.stratified_resamples(runs=5, tasks=3, repetitions=400, seed=7)
    assert indices.shape == (400, 5, 3) and indices.min() == 0 and indices.max() == 4
    # Columns drawn together would be equal in every resample; drawn apart, almost never (p = 5^-5 each).
    assert np.mean(np.all(indices[:, :, 0] == indices[:, :, 1], axis=1)) < 0.01
    assert np.array_equal(indices, stats.stratified_resamples(runs=5, tasks=3, repetitions=400, seed=7))
    assert not np.array_equal(indices, stats.stratified_resamples(runs=5, tasks=3, repetitions=400, seed=8))
    assert stats.stratified_resamples(runs=2, tasks=1).shape == (stats.REPETITIONS, 2, 1)
    assert np.array_equal(stats.stratified_resamples(3, 2), stats.stratified_resamples(3, 2, seed=stats.SEED))


def quantile_oracle(scores: np.ndarray, statistic, confidence: float, repetitions: int, seed: int):  # type: ignore[no-untyped-def]
    """The percentile interval computed here: the statistic of each stratified resample gathered by hand, column by
    column, and numpy's quantiles of those."""
    indices = stats.stratified_resamples(scores.shape[0], scores.shape[1], repetitions, seed)
    values = []
    for draw in indices:
        sample = np.empty_like(scores)
        for task in range(scores.shape[1]):
            sample[:, task] = scores[draw[:, task], task]
        values.append(statistic(sample))
    tail = (1 - confidence) / 2
    return float(np.quantile(values, tail)), float(np.quantile(values, 1 - tail))


@pytest.mark.parametrize(("confidence", "repetitions", "seed"), [(0.95, 2000, 0), (0.5, 300, 3), (0.99, 1000, 11)])
def test_the_interval_is_numpys_quantiles_of_the_resampled_statistic(
    confidence: float, repetitions: int, seed: int
) -> None:
    scores = np.random.default_rng(42).normal(100, 30, size=(6, 3))  # six runs, three tasks: not square
    point, low, high = stats.bootstrap_ci(scores, confidence=confidence, repetitions=repetitions, seed=seed)
    assert point == pytest.approx(trimmed_mean(scores))
    assert (low, high) == pytest.approx(quantile_oracle(scores, stats.iqm, confidence, repetitions, seed), rel=1e-12)
    runs = scores[:, 0]
    point, low, high = stats.bootstrap_ci(runs, stats.mean, confidence=confidence, repetitions=repetitions, seed=seed)
    assert point == pytest.approx(runs.mean())
    oracle = quantile_oracle(runs[:, None], stats.mean, confidence, repetitions, seed)
    assert (low, high) == pytest.approx(oracle, rel=1e-12)


def test_the_seed_and_the_defaults_are_used() -> None:
    runs = np.random.default_rng(5).normal(0, 1, 7)
    assert stats.bootstrap_ci(runs, seed=1) == stats.bootstrap_ci(runs, seed=1)
    assert stats.bootstrap_ci(runs, seed=1) != stats.bootstrap_ci(runs, seed=2)
    defaults = quantile_oracle(runs[:, None], stats.iqm, stats.CONFIDENCE, stats.REPETITIONS, stats.SEED)
    assert stats.bootstrap_ci(runs)[1:] == pytest.approx(defaults, rel=1e-12)
    assert (stats.CONFIDENCE, stats.REPETITIONS, stats.SEED) == (0.95, 2000, 0)


def test_curve_bands_of_non_square_inputs() -> None:
    # Two runs, five points: where the runs agree the band has no width; where they differ (0 and 10) the mean of a
    # resample is 0, 5 or 10 with p 1/4, 1/2, 1/4, so the 95% band is exactly [0, 10].
    curves = np.array([[0.0, 2.0, 4.0, 6.0, 8.0], [10.0, 2.0, 4.0, 6.0, 8.0]])
    mean, low, high = stats.curve_band(curves)
    assert mean.tolist() == [5.0, 2.0, 4.0, 6.0, 8.0]
    assert low.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0] and high.tolist() == [10.0, 2.0, 4.0, 6.0, 8.0]
    # Five runs, two points, against numpy's quantiles of whole-curve resamples drawn here.
    curves = np.random.default_rng(3).normal(0, 1, size=(5, 2))
    for confidence, repetitions, seed in ((0.95, 2000, 0), (0.6, 500, 9)):
        mean, low, high = stats.curve_band(curves, confidence=confidence, repetitions=repetitions, seed=seed)
        draws = np.random.default_rng(seed).integers(0, 5, size=(repetitions, 5))
        means = np.array([curves[draw].mean(axis=0) for draw in draws])
        tail = (1 - confidence) / 2
        assert mean == pytest.approx(curves.mean(axis=0))
        assert low == pytest.approx(np.quantile(means, tail, axis=0), rel=1e-12)
        assert high == pytest.approx(np.quantile(means, 1 - tail, axis=0), rel=1e-12)


def test_scores_are_taken_as_floats_whatever_their_dtype() -> None:
    # float16 scores averaged in float16 round to 0.19995; taken as floats, the mean of the values themselves.
    low_precision = np.array([0.1, 0.2, 0.3], np.float16)
    exact = sum(float(value) for value in low_precision) / 3
    assert stats.mean(low_precision) == pytest.approx(exact, rel=1e-12)
    assert stats.iqm(low_precision) == pytest.approx(exact, rel=1e-12)
    mean, low, high = stats.curve_band(low_precision.reshape(3, 1))
    assert mean.dtype == low.dtype == high.dtype == np.float64 and mean[0] == pytest.approx(exact, rel=1e-12)

    # Solved-or-not per run as booleans, with a statistic that subtracts (numpy refuses to subtract booleans).
    def spread(sample: np.ndarray) -> float:
        return float(np.max(sample - sample.min()))

    assert stats.bootstrap_ci(np.array([True, False, True]), spread) == (1.0, 0.0, 1.0)
