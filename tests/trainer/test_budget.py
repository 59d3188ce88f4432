"""``Budget`` (trainer/kernel/budget.py): what is left of an experiment's episodes and timesteps, on made-up
counters."""

from __future__ import annotations

import pytest

from trainer.kernel.budget import Budget
from trainer.kernel.spec import Experiment
from trainer.kernel.state import RunState


def experiment(**budget: int) -> Experiment:
    return Experiment(name="x", environment={"level": "CartPole-v1"}, agent={"agent": "ppo"}, **budget)


def test_of_reads_both_budgets_from_the_experiment() -> None:
    assert Budget.of(experiment(episodes=7, total_timesteps=300)) == Budget(episodes=7, timesteps=300)
    assert Budget.of(experiment(total_timesteps=300)) == Budget(episodes=None, timesteps=300)
    assert Budget.of(experiment(episodes=7)) == Budget(episodes=7, timesteps=None)


def test_timesteps_left_counts_down_to_zero_and_never_below() -> None:
    budget = Budget(episodes=None, timesteps=100)
    assert budget.timesteps_left(RunState(timesteps=0)) == 100
    assert budget.timesteps_left(RunState(timesteps=97)) == 3
    assert budget.timesteps_left(RunState(timesteps=100)) == 0
    assert budget.timesteps_left(RunState(timesteps=104)) == 0
    assert Budget(episodes=5, timesteps=None).timesteps_left(RunState(timesteps=10**9)) is None


def test_episodes_to_start_leaves_room_for_the_running_ones() -> None:
    budget = Budget(episodes=10, timesteps=None)
    assert budget.episodes_to_start(RunState(episodes=0), running=0) == 10
    assert budget.episodes_to_start(RunState(episodes=6), running=3) == 1
    assert budget.episodes_to_start(RunState(episodes=6), running=4) == 0
    assert budget.episodes_to_start(RunState(episodes=9), running=4) == 0
    assert Budget(episodes=None, timesteps=5).episodes_to_start(RunState(), running=0) is None


def test_spent_at_the_first_budget_reached() -> None:
    both = Budget(episodes=10, timesteps=100)
    assert not both.spent(RunState(timesteps=99, episodes=9))
    assert both.spent(RunState(timesteps=100, episodes=0))
    assert both.spent(RunState(timesteps=0, episodes=10))
    assert both.spent(RunState(timesteps=101, episodes=11))
    assert not Budget(episodes=None, timesteps=100).spent(RunState(timesteps=99, episodes=10**6))
    assert not Budget(episodes=10, timesteps=None).spent(RunState(timesteps=10**6, episodes=9))
    assert Budget(episodes=10, timesteps=None).spent(RunState(episodes=10))


def test_describe_names_each_budget_with_thousands_separators() -> None:
    assert Budget(episodes=None, timesteps=25_000).describe() == "25,000 timesteps"
    assert Budget(episodes=1_500, timesteps=None).describe() == "1,500 episodes"
    assert Budget(episodes=20, timesteps=2_500).describe() == "2,500 timesteps or 20 episodes"


def test_left_is_what_remains_of_each_budget_never_below_zero() -> None:
    both = Budget(episodes=10, timesteps=100)
    assert both.left(RunState(timesteps=97, episodes=4)) == Budget(episodes=6, timesteps=3)
    assert both.left(RunState(timesteps=104, episodes=12)) == Budget(episodes=0, timesteps=0)
    assert Budget(episodes=None, timesteps=100).left(RunState(timesteps=40, episodes=7)) == Budget(None, 60)
    assert Budget(episodes=10, timesteps=None).left(RunState(timesteps=40, episodes=7)) == Budget(3, None)
    assert both.left(RunState(timesteps=1_000, episodes=4)).describe(" / ") == "0 timesteps / 6 episodes"


def test_reached_by_a_result_whose_counters_used_up_either_budget() -> None:
    both = Budget(episodes=10, timesteps=100)
    assert not both.reached_by({"timesteps": 99, "episodes": 9})
    assert both.reached_by({"timesteps": 100, "episodes": 0})
    assert both.reached_by({"timesteps": 0, "episodes": 10})
    assert both.reached_by({"timesteps": 101, "episodes": 11})
    # Only the budgets the experiment has count: a huge counter of the other kind reaches nothing.
    assert not Budget(episodes=None, timesteps=100).reached_by({"timesteps": 99, "episodes": 10**6})
    assert Budget(episodes=None, timesteps=100).reached_by({"timesteps": 100})
    assert not Budget(episodes=10, timesteps=None).reached_by({"timesteps": 10**6, "episodes": 9})
    assert Budget(episodes=10, timesteps=None).reached_by({"episodes": 10})


def test_reached_by_a_run_completed_under_a_smaller_budget_is_not() -> None:
    """A completed run whose budget was raised since has more to do: it continues from its final checkpoint."""
    completed = {"status": "completed", "timesteps": 3_000, "episodes": 40}
    assert Budget(episodes=None, timesteps=3_000).reached_by(completed)
    assert not Budget(episodes=None, timesteps=6_000).reached_by(completed)
    assert not Budget(episodes=80, timesteps=None).reached_by(completed)


def test_reached_by_ignores_counters_that_are_missing_or_not_integers() -> None:
    budget = Budget(episodes=10, timesteps=100)
    assert not budget.reached_by({})
    assert not budget.reached_by({"timesteps": None, "episodes": None})
    assert not budget.reached_by({"timesteps": "100", "episodes": "10"})
    assert not budget.reached_by({"timesteps": 100.0, "episodes": 10.0})
    # One counter unusable, the other reached: reached.
    assert budget.reached_by({"timesteps": "x", "episodes": 10})
    assert budget.reached_by({"timesteps": 100, "episodes": None})


def test_counted_usd_is_price_times_hours_never_below_zero() -> None:
    from trainer.kernel.budget import counted_usd

    assert counted_usd(720.0, 5.0) == pytest.approx(1.0)
    assert counted_usd(3.6, 1000.0) == pytest.approx(1.0)
    assert counted_usd(720.0, -5.0) == 0.0


def test_node_time_is_a_stated_allowance_per_start_start_up_and_scale_down() -> None:
    from trainer.kernel.budget import NODE_START_SECONDS, SCALE_DOWN_SECONDS, START_ALLOWANCE_SECONDS

    assert SCALE_DOWN_SECONDS == 600  # the cluster autoscaler's: a node unneeded for more than 10 minutes goes
    assert NODE_START_SECONDS == 600
    assert START_ALLOWANCE_SECONDS == NODE_START_SECONDS + SCALE_DOWN_SECONDS == 1200


def test_billed_seconds_add_the_allowance_for_each_start_and_never_go_below_zero() -> None:
    from trainer.kernel.budget import billed_seconds

    assert billed_seconds(100.0, 0, 1200.0) == 100.0
    assert billed_seconds(100.0, 1, 1200.0) == 1300.0
    assert billed_seconds(100.0, 3, 1200.0) == 3700.0
    assert billed_seconds(100.0, 3, 0.0) == 100.0  # a local run: no node starts for it
    assert billed_seconds(-5.0, 2, 10.0) == 20.0
    assert billed_seconds(7.0, -2, 10.0) == 7.0
    assert billed_seconds(7.0, 2, -10.0) == 7.0


def test_counted_usd_moves_by_exactly_the_allowance_per_start() -> None:
    from trainer.kernel.budget import counted_usd

    assert counted_usd(720.0, 5.0, 1, 0.0) == pytest.approx(1.0)
    assert counted_usd(720.0, 5.0, 1, 5.0) == pytest.approx(2.0)  # one start: 5 s more at 20 cents a second
    assert counted_usd(720.0, 5.0, 2, 5.0) == pytest.approx(3.0)
    assert counted_usd(3.6, 0.0, 1, 1200.0) == pytest.approx(1.2)  # plan's line: one start's node time
    assert counted_usd(720.0, 5.0) == counted_usd(720.0, 5.0, 4)  # no allowance: starts add nothing
    assert counted_usd(720.0, 5.0, allowance_seconds=5.0) == pytest.approx(1.0)  # no start: no node time


@pytest.mark.parametrize(
    ("recorded", "trained", "seen"),
    [
        (3, 10.0, 3),  # the count a file records
        (3, 0.0, 3),
        (None, 10.0, 1),  # a file from before the count: it trained, so it started once
        (None, 0.5, 1),
        (0, 10.0, 1),
        (None, 0.0, 0),  # nothing trained, nothing recorded: no start seen
        (0, 0.0, 0),
        (-2, 0.0, 0),
        (True, 0.0, 0),  # not a count
        ("2", 0.0, 0),
        (2.0, 0.0, 0),
        (1, 0.0, 1),
    ],
)
def test_starts_seen_by_a_reader(recorded: object, trained: float, seen: int) -> None:
    from trainer.kernel.budget import starts_seen

    assert starts_seen(recorded, trained) == seen
