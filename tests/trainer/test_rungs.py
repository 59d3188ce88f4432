"""The ASHA rule at one rung (trainer/rungs.py), on made-up combination scores: who goes on, when nothing is decided
yet, and what a pruned trial's result says."""

from __future__ import annotations

import pytest

from trainer.rungs import Verdict, combination_score, judge


def test_a_combination_scores_the_interquartile_mean_of_its_seeds() -> None:
    assert combination_score([]) is None
    assert combination_score([7.5]) == 7.5
    assert combination_score([1.0, 3.0]) == 2.0
    assert combination_score([100.0, 1.0, 2.0, 3.0]) == 2.5  # one dropped at each end of four
    assert combination_score([0.0, 10.0, 20.0, 30.0, 1000.0]) == 20.0


def test_nothing_is_decided_while_fewer_than_reduction_combinations_reached_the_rung() -> None:
    assert judge(0, {0: 1.0, 1: 9.0}, 3) is None
    assert judge(0, {0: 1.0}, 2) is None
    assert judge(0, {}, 2) is None


def test_a_combination_without_a_score_at_the_rung_gets_no_verdict() -> None:
    assert judge(5, {0: 1.0, 1: 2.0, 2: 3.0}, 2) is None


def test_exactly_reduction_combinations_decide_the_rung_and_the_best_goes_on() -> None:
    scores = {0: 10.0, 1: 30.0, 2: 20.0}
    assert judge(1, scores, 3) == Verdict(goes_on=True, score=30.0, cutoff=30.0, combinations=3, kept=1)
    assert judge(2, scores, 3) == Verdict(goes_on=False, score=20.0, cutoff=30.0, combinations=3, kept=1)
    assert judge(0, scores, 3) == Verdict(goes_on=False, score=10.0, cutoff=30.0, combinations=3, kept=1)


@pytest.mark.parametrize(
    ("count", "reduction", "kept"),
    [(2, 2, 1), (3, 2, 1), (4, 2, 2), (5, 2, 2), (6, 3, 2), (8, 3, 2), (9, 3, 3), (10, 4, 2)],
)
def test_the_top_count_over_reduction_go_on_rounded_down(count: int, reduction: int, kept: int) -> None:
    scores = {number: float(number) for number in range(count)}  # the highest numbers score best
    going = [number for number in scores if judge(number, scores, reduction).goes_on]  # type: ignore[union-attr]
    assert going == list(range(count - kept, count))
    verdict = judge(0, scores, reduction)
    assert verdict is not None
    assert (verdict.kept, verdict.combinations, verdict.cutoff) == (kept, count, float(count - kept))


def test_a_tie_with_the_last_one_that_goes_on_goes_on_too() -> None:
    scores = {0: 5.0, 1: 9.0, 2: 9.0, 3: 1.0}
    assert [number for number in scores if judge(number, scores, 4).goes_on] == [1, 2]  # type: ignore[union-attr]
    assert judge(0, {0: 5.0, 1: 5.0}, 2).goes_on  # type: ignore[union-attr]


def test_negative_returns_rank_the_same_way() -> None:
    scores = {0: -200.0, 1: -50.0, 2: -120.0}
    assert [number for number in scores if judge(number, scores, 3).goes_on] == [1]  # type: ignore[union-attr]


def test_a_pruned_trials_reason_names_its_score_the_rung_and_the_field() -> None:
    verdict = Verdict(goes_on=False, score=1234.56, cutoff=2000.0, combinations=7, kept=2)
    assert (
        verdict.reason(12000, 3) == "IQM 1,234.6 at 12,000 timesteps, below the top 1/3 (7 combinations at this rung)"
    )
