"""IQM, stratified bootstrap CIs and the per-combination table against hand-computed cases."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tfcli.experiments.store import ExperimentStore
from tfcli.local.sweeps import trial_numbers
from tfcli.project import open_project
from tfcli.sweeps import stats
from tfcli.sweeps.aggregate import final_score, first_reach, rows, smooth
from trainer.kernel.spec.sweep import Trial


def test_iqm_drops_a_quarter_at_each_end() -> None:
    assert stats.iqm(np.arange(1, 9)) == 4.5  # drop 1, 2 and 7, 8: mean of 3..6
    assert stats.iqm(np.array([1.0, 2.0, 3.0, 100.0])) == 2.5  # the outlier is gone
    assert stats.iqm(np.array([1.0, 2.0, 6.0])) == 3.0  # int(0.75) = 0 dropped: the mean
    assert stats.iqm(np.array([[0.0, 100.0], [0.0, 100.0]])) == 50.0  # runs x tasks, pooled


def test_bootstrap_of_two_runs_spans_both_and_one_value_has_no_width() -> None:
    # Resampling [0, 10]: the mean is 0 (p 1/4), 5 (1/2) or 10 (1/4): the 2.5% and 97.5% quantiles are 0 and 10.
    assert stats.bootstrap_ci(np.array([0.0, 10.0]), stats.mean) == (5.0, 0.0, 10.0)
    assert stats.bootstrap_ci(np.array([7.0, 7.0, 7.0])) == (7.0, 7.0, 7.0)
    assert stats.bootstrap_ci(np.array([3.0])) == (3.0, 3.0, 3.0)


def test_the_bootstrap_is_stratified_by_task() -> None:
    # Two tasks, each constant over its runs: resampling runs within each task always gives the same pooled IQM
    # (of 0, 0, 100, 100: 50). A bootstrap that pooled first would draw e.g. four 0s and vary.
    scores = np.array([[0.0, 100.0], [0.0, 100.0]])
    assert stats.bootstrap_ci(scores) == (50.0, 50.0, 50.0)
    indices = stats.stratified_resamples(runs=2, tasks=2, repetitions=10)
    assert indices.shape == (10, 2, 2) and set(np.unique(indices)) <= {0, 1}


def test_the_interval_covers_the_iqm_and_narrows_with_more_runs() -> None:
    rng = np.random.default_rng(1)
    few, many = rng.normal(100, 10, 5), rng.normal(100, 10, 200)
    point, low, high = stats.bootstrap_ci(few)
    assert low <= point <= high
    _, many_low, many_high = stats.bootstrap_ci(many)
    assert many_high - many_low < high - low


def test_curve_band_is_the_mean_over_runs_and_its_bootstrap_interval() -> None:
    mean, low, high = stats.curve_band(np.array([[0.0, 2.0], [10.0, 2.0]]))
    assert mean.tolist() == [5.0, 2.0] and low.tolist() == [0.0, 2.0] and high.tolist() == [10.0, 2.0]


def test_final_score_moving_average_and_first_reach() -> None:
    steps = np.arange(100, 1001, 100)
    returns = np.arange(1.0, 11.0)
    assert final_score(steps, returns) == 9.5  # episodes ending at 900 and 1000: the last 10% of 1000 timesteps
    assert smooth(np.array([1.0, 3.0, 5.0, 7.0]), window=2).tolist() == [1.0, 2.0, 4.0, 6.0]


def _trial(project: Path, name: str, seed: int, returns: list[float], *, status: str = "completed") -> Trial:
    folder = project / "experiments" / name
    (folder / "results").mkdir(parents=True)
    (folder / "experiment.yaml").write_text(f"name: {name}\ntotal_timesteps: {100 * len(returns)}\n")
    lines = [
        json.dumps({"episode": i + 1, "timesteps": 100 * (i + 1), "return": r, "wall_seconds": 2.0 * (i + 1)})
        for i, r in enumerate(returns)
    ]
    (folder / "results" / "progress.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "results" / "result.json").write_text(json.dumps({"status": status, "wall_seconds": 20.0 + seed}))
    return Trial(0, name, {"agent.learning_rate": 0.1}, seed, {})


def test_rows_aggregate_seeds_per_combination_and_mark_the_best(project: Path) -> None:
    # Combination A: three seeds ending 0, 10 / 0, 20 / 0, 90 over their last 10% of timesteps (900 and 1000), so
    # scoring 5, 10 and 45; B: 50, 50, 50 (partial: none completed).
    a = [_trial(project, f"s-{i}", i + 1, [0.0] * 9 + [final]) for i, final in enumerate([10.0, 20.0, 90.0])]
    b = [
        Trial(3 + i, f"s-{3 + i}", {"agent.learning_rate": 0.2}, i + 1, {})
        for i in range(3)
        if _trial(project, f"s-{3 + i}", i + 1, [50.0] * 10, status="paused")
    ]
    a = [Trial(i, t.name, t.combination, t.seed, {}) for i, t in enumerate(a)]
    store = ExperimentStore(open_project())
    first, second = rows(a + b, [trial_numbers(store, t) for t in a + b], seeds=3, target_return=50.0)
    assert first.iqm == 20.0  # three runs: nothing trimmed, the mean of 5, 10, 45
    assert (first.completed, first.partial, first.wall_seconds_mean) == (3, False, 22.0)
    # Resamples of three: all 5s or all 45s each have p = 1/27 (3.7% > 2.5%), so the interval is exactly [5, 45].
    assert (first.ci_low, first.ci_high) == (5.0, 45.0)
    assert first.target_reached == 0  # moving averages of 20 episodes never reach 50 (at most 9)
    assert (second.iqm, second.completed, second.partial) == (50.0, 0, True)
    assert second.target_reached == 3 and second.target_timesteps_iqm == 100.0 and second.target_seconds_iqm == 2.0
    assert second.best and not first.best
    run = trial_numbers(store, b[0])
    assert first_reach(run, 50.0) == (100, 2.0) and first_reach(run, 51.0) is None


def test_a_tie_on_the_final_return_goes_to_the_combination_that_reached_the_target_sooner(project: Path) -> None:
    # Both end at CartPole's ceiling; "late" (listed first) reaches a moving mean of 475 at 2,900 timesteps (19 of
    # its last 20 episodes at 500), "early" with its first episode (100 timesteps).
    late = _trial(project, "t-0", 1, [0.0] * 10 + [500.0] * 30)
    early = _trial(project, "t-1", 1, [500.0] * 40)
    trials = [
        Trial(0, late.name, {"agent.learning_rate": 0.1}, 1, {}),
        Trial(1, early.name, {"agent.learning_rate": 0.2}, 1, {}),
    ]
    store = ExperimentStore(open_project())
    first, second = rows(trials, [trial_numbers(store, t) for t in trials], seeds=1, target_return=475.0)
    assert first.iqm == second.iqm == 500.0
    assert (first.target_timesteps_iqm, second.target_timesteps_iqm) == (2900.0, 100.0)
    assert second.best and not first.best
