"""What a GKE sweep's worker trains next (trainer/sweep_queue.py): a decided waiting trial first, then the trials
not started (or paused) in the order that fills rungs early; nothing for a trial still waiting or ended; done once
every trial has ended."""

from __future__ import annotations

from trainer.sweep_queue import TrialView, all_ended, fill_order, next_candidates


def test_the_fill_order_takes_each_combinations_first_seed_first() -> None:
    assert fill_order(range(6), 2) == [0, 2, 4, 1, 3, 5]
    assert fill_order(range(6), 3) == [0, 3, 1, 4, 2, 5]
    assert fill_order([5, 1, 3], 1) == [1, 3, 5]


def test_a_decided_waiting_trial_comes_before_new_ones_and_a_waiting_one_not_at_all() -> None:
    trials = [
        TrialView(0, "paused", waiting=True, decided=False),  # still waiting: not started again
        TrialView(1),  # new
        TrialView(2, "paused", waiting=True, decided=True),  # promoted (or to be pruned): first
        TrialView(3, "paused"),  # paused by a preemption: resumed like a new one
        TrialView(4, "completed", ended=True),
        TrialView(6, "pruned"),  # an earlier Job's pruning, released by resume -s: its trainer says what is left
        TrialView(5, None, ended=True),  # its claim says it ended (a refused spec)
    ]
    assert next_candidates(trials, 3) == [2, 3, 6, 1]  # order 0, 3, 6, 1, 4, 2, 5
    assert next_candidates(trials, 1) == [2, 1, 3, 6]


def test_an_ended_waiting_trial_is_not_started() -> None:
    assert next_candidates([TrialView(0, "paused", waiting=True, decided=True, ended=True)], 1) == []


def test_the_sweep_is_done_only_when_every_trial_has_ended() -> None:
    ended = [TrialView(k, status, ended=True) for k, status in enumerate(("completed", "pruned", "failed", None))]
    assert all_ended(ended)
    assert all_ended([])
    for open_trial in (TrialView(4), TrialView(4, "completed"), TrialView(4, "paused", waiting=True, decided=True)):
        assert not all_ended([*ended, open_trial])
    assert not TrialView(0, "running").over() and TrialView(0, "running", ended=True).over()
