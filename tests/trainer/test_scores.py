"""trainer/kernel/scores.py, the scoring rules the HParams dashboard and ``list -s`` share, against loops written
here."""

from __future__ import annotations

import numpy as np
import pytest

from trainer.kernel import scores


def moving_average(returns: list[float], window: int) -> list[float]:
    return [sum(returns[max(0, i + 1 - window) : i + 1]) / len(returns[max(0, i + 1 - window) : i + 1])
            for i in range(len(returns))]  # fmt: skip


@pytest.mark.parametrize("window", [1, 2, 3, 20])
def test_smooth_is_the_moving_average_of_up_to_window_episodes(window: int) -> None:
    returns = [float(value) for value in np.random.default_rng(window).integers(0, 500, 30)]
    assert scores.smooth(np.array(returns), window) == pytest.approx(moving_average(returns, window), rel=1e-12)
    assert scores.SMOOTHING == 20 and scores.FINAL_FRACTION == 0.1
    assert scores.smooth(np.array(returns)) == pytest.approx(moving_average(returns, 20), rel=1e-12)
    assert scores.smooth(np.array([]), window).tolist() == []


def test_the_final_score_is_the_mean_of_the_episodes_in_the_last_tenth() -> None:
    steps = np.arange(100, 1001, 100)
    returns = np.arange(1.0, 11.0)
    assert scores.final_score(steps, returns) == 9.5  # ending at 900 (exactly 90%: counted) and 1000
    assert scores.final_score(steps, returns, fraction=0.25) == 9.0  # from 750: 800, 900, 1000
    assert scores.final_score(steps, returns, fraction=1.0) == 5.5  # everything
    assert scores.final_score(np.array([950, 1000]), np.array([3.0, 5.0])) == 4.0
    assert scores.final_score(np.array([10, 1000]), np.array([3.0, 5.0])) == 5.0  # at least the last episode
    # A window past the last episode (a negative fraction) still scores the last episode, never nothing.
    assert scores.final_score(steps, returns, fraction=-1.0) == 10.0
    # Two episodes ending in the same batched step at the very end: a fraction of 0 still takes both.
    assert scores.final_score(np.array([900, 1000, 1000]), np.array([1.0, 3.0, 5.0]), fraction=0.0) == 4.0
    assert scores.final_score(np.array([]), np.array([])) is None
    assert isinstance(scores.final_score(steps, returns.astype(int)), float)


def test_first_reach_is_the_first_moving_average_at_or_over_the_target() -> None:
    smoothed = np.array([1.0, 4.0, 5.0, 3.0, 5.0, 6.0])
    assert scores.first_reach_index(smoothed, 5.0) == 2  # reaching it exactly counts
    assert scores.first_reach_index(smoothed, 4.5) == 2
    assert scores.first_reach_index(smoothed, 1.0) == 0
    assert scores.first_reach_index(smoothed, 6.5) is None
    assert isinstance(scores.first_reach_index(smoothed, 6.0), int)


def trimmed_mean(values: list[float]) -> float:
    """scipy.stats.trim_mean(values, 0.25) as a loop: sorted, int(0.25 n) dropped at each end, the rest averaged."""
    ordered = sorted(values)
    cut = int(0.25 * len(ordered))
    kept = ordered[cut : len(ordered) - cut]
    return sum(kept) / len(kept)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 7, 8, 13])
def test_iqm_is_the_mean_of_the_middle_half_as_trim_mean_does(count: int) -> None:
    values = [float(value) for value in np.random.default_rng(count).normal(0.0, 100.0, count)]
    assert scores.iqm(np.array(values)) == pytest.approx(trimmed_mean(values), rel=1e-12)
    assert isinstance(scores.iqm(np.array(values)), float)


def test_iqm_drops_a_quarter_at_each_end_of_any_shape() -> None:
    assert scores.iqm(np.array([1.0, 2.0, 3.0, 1000.0])) == 2.5
    assert scores.iqm(np.array([[40.0, -9.0], [1.0, 2.0], [3.0, 5.0], [6.0, 7.0]])) == 4.0  # 8 values: 2 cut a side
    assert scores.iqm(np.array([3, 1, 2])) == 2.0  # integers too: 3 values, none cut
    with pytest.raises(ValueError, match=r"^no scores$"):
        scores.iqm(np.array([]))
