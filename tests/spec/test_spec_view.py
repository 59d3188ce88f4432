"""tfcli's fast readers of a stored resolved spec (listings, status, plans, resume) read it through one typed view
(tfcli/experiments/spec_view.py), whose defaults are the experiment model's."""

from __future__ import annotations

from typing import Any

import pytest

from tfcli.experiments.spec_view import DEFAULT_NUM_WORKERS, DEFAULT_RUN_MODE, SpecView
from trainer.kernel.spec import load_experiment
from trainer.kernel.spec.experiment import Experiment


def test_its_defaults_are_the_models() -> None:
    fields = Experiment.model_fields
    assert (fields["run_mode"].default, fields["num_workers"].default) == (DEFAULT_RUN_MODE, DEFAULT_NUM_WORKERS)
    bare = SpecView({})
    assert (bare.run_mode, bare.num_workers, bare.distributed) == ("single", 3, False)
    assert (bare.total_timesteps, bare.episodes, bare.max_cost, bare.target_return, bare.early_stop) == (None,) * 5
    assert bare.budget == {"total_timesteps": None, "episodes": None} and bare.budget_text() == ""
    assert SpecView().data == {}


@pytest.mark.parametrize("name", ["cartpole-ppo", "space-invaders-dqn", "gridworld-ppo"])
def test_it_reads_a_resolved_bundled_spec_as_the_model_does(name: str) -> None:
    spec = load_experiment(name).spec
    view = SpecView(spec.model_dump(mode="json", exclude_none=True))
    assert (view.run_mode, view.num_workers) == (spec.run_mode, spec.num_workers)
    assert (view.total_timesteps, view.episodes) == (spec.total_timesteps, spec.episodes)
    assert view.distributed == (spec.run_mode == "distributed")


def test_every_key_it_reads() -> None:
    data: dict[str, Any] = {
        "run_mode": "distributed",
        "num_workers": 5,
        "total_timesteps": 100000,
        "episodes": 500,
        "max_cost": 2,
        "target_return": 195,
        "early_stop": {"rungs": [1000]},
    }
    view = SpecView(data)
    assert (view.run_mode, view.num_workers, view.distributed) == ("distributed", 5, True)
    assert view.budget == {"total_timesteps": 100000, "episodes": 500}
    assert view.budget_text() == "100,000 timesteps or 500 episodes"
    assert view.max_cost == 2.0 and isinstance(view.max_cost, float)
    assert view.target_return == 195.0 and isinstance(view.target_return, float)
    assert view.early_stop == {"rungs": [1000]}


@pytest.mark.parametrize(
    ("data", "text"),
    [({"total_timesteps": 1000}, "1,000 timesteps"), ({"episodes": 2500}, "2,500 episodes"), ({}, "")],
)
def test_a_budget_in_words(data: dict[str, Any], text: str) -> None:
    assert SpecView(data).budget_text() == text


def test_values_stored_as_text_read_as_numbers_and_other_modes_are_not_distributed() -> None:
    view = SpecView({"run_mode": "multi-threaded", "num_workers": "4", "total_timesteps": "300", "max_cost": "1.5"})
    assert (view.num_workers, view.total_timesteps, view.max_cost, view.distributed) == (4, 300, 1.5, False)
    assert SpecView({"early_stop": "yes"}).early_stop is None and SpecView({"target_return": 0}).target_return == 0.0
