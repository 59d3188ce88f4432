"""Sweep expansion: --set parsing, grid and random combinations, seeds, trial names and every trial validated before
anything is written (all problems at once, each naming its trial and key)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tfcli.experiments.store import ExperimentStore
from tfcli.project import open_project
from tfcli.sweeps.create import SweepOptions, create_sweep, plan_sweep
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec import ConfigLibrary
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.sweep import combinations, read_sweep_file
from trainer.kernel.spec.sweep_axes import describe, parse_set, set_dotted

LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))


def test_set_values_are_yaml_scalars_and_1e_minus_3_is_a_number() -> None:
    assert parse_set("agent.learning_rate=1e-3,3e-4") == ("agent.learning_rate", [0.001, 0.0003])
    assert parse_set("agent.batch_size=8,16") == ("agent.batch_size", [8, 16])
    assert parse_set("deterministic=true,false") == ("deterministic", [True, False])
    assert parse_set("agent.baseline_optimizer.optimizer=adam,sgd")[1] == ["adam", "sgd"]
    with pytest.raises(InvalidInput, match=r"DOTTED\.KEY=VALUE1"):
        parse_set("agent.learning_rate")


def test_dotted_keys_reach_into_mappings_and_lists_and_create_missing_arguments() -> None:
    data = {"agent": {"agent": "ppo"}, "network": [{"type": "dense", "size": 64}]}
    changed = set_dotted(set_dotted(data, "agent.learning_rate", 0.1), "network.0.size", 8)
    assert changed == {"agent": {"agent": "ppo", "learning_rate": 0.1}, "network": [{"type": "dense", "size": 8}]}
    assert data["network"][0]["size"] == 64  # the base is not changed
    with pytest.raises(InvalidInput, match=r"network\.3: the list at network has 1 items"):
        set_dotted(data, "network.3.size", 8)


def test_the_grid_is_every_combination_seeds_inside_and_trials_named_in_order() -> None:
    planned = plan_sweep(
        "cartpole-ppo",
        SweepOptions(name="lr", sets=("agent.learning_rate=1e-3,3e-4", "agent.batch_size=8,16"), seeds=3),
        LIBRARY,
    )
    assert len(planned.trials) == 2 * 2 * 3
    assert [t.name for t in planned.trials[:4]] == ["lr-0", "lr-1", "lr-2", "lr-3"]
    assert [(t.combination, t.seed) for t in planned.trials[:4]] == [
        ({"agent.learning_rate": 0.001, "agent.batch_size": 8}, 1),
        ({"agent.learning_rate": 0.001, "agent.batch_size": 8}, 2),
        ({"agent.learning_rate": 0.001, "agent.batch_size": 8}, 3),
        ({"agent.learning_rate": 0.001, "agent.batch_size": 16}, 1),
    ]
    last = planned.specs[-1]
    assert (last.name, last.seed) == ("lr-11", 3)
    assert last.agent.model_dump()["learning_rate"] == 0.0003 and last.agent.model_dump()["batch_size"] == 16
    assert last.environment.level == "CartPole-v1"  # the base's references resolved for every trial


def test_random_draws_n_distinct_combinations_reproducibly() -> None:
    sweep = read_sweep_file(
        {"name": "r", "base": "x", "axes": {"a": [1, 2, 3, 4], "b": [1, 2, 3]}, "random": 5, "random_seed": 7}, "s"
    )
    drawn = combinations(sweep, "s")
    assert len(drawn) == 5 and len({tuple(c.values()) for c in drawn}) == 5
    assert drawn == combinations(sweep, "s")  # the same draw every time
    from_file = read_sweep_file({"name": "n", "base": "x", "axes": {"a": ["1e-3", "adam"]}}, "s")
    assert from_file.axes == {"a": [0.001, "adam"]}  # YAML 1.1 reads 1e-3 as text; a sweep means the number
    other = combinations(sweep.model_copy(update={"random_seed": 8}), "s")
    assert other != drawn
    with pytest.raises(InvalidInput, match="13 combinations asked, but the grid has only 12"):
        combinations(sweep.model_copy(update={"random": 13}), "s")


def test_every_trial_is_validated_before_start_all_problems_named_by_trial_and_key() -> None:
    with pytest.raises(InvalidInput) as raised:
        plan_sweep(
            "cartpole-ppo",
            SweepOptions(name="bad", sets=("agent.batch_size=0,8", "run_mode=single,turbo")),
            LIBRARY,
        )
    lines = raised.value.problems
    # batch_size 0 passes the schema (TensorForce's own check happens at build); run_mode turbo does not.
    assert any("trial bad-1 (batch_size=0 run_mode=turbo, seed 1): run_mode: got 'turbo'" in line for line in lines)
    assert any("trial bad-3 (batch_size=8 run_mode=turbo, seed 1): run_mode:" in line for line in lines)
    assert len(lines) == 2


def test_unknown_agent_argument_and_owned_keys_are_refused() -> None:
    with pytest.raises(InvalidInput, match=r"agent.learnin_rate: not an argument of the ppo agent \(did you mean"):
        plan_sweep("cartpole-ppo", SweepOptions(name="t", sets=("agent.learnin_rate=0.1",)), LIBRARY)
    with pytest.raises(InvalidInput, match="seeds come from --seeds"):
        plan_sweep("cartpole-ppo", SweepOptions(name="t", sets=("seed=1,2",)), LIBRARY)
    with pytest.raises(InvalidInput, match="longer than 40 characters"):
        plan_sweep("cartpole-ppo", SweepOptions(name="a" * 39, sets=("seed2=1",)), LIBRARY)


def test_the_bundled_sweep_file_is_3_learning_rates_by_3_seeds(tmp_path: Path) -> None:
    planned = plan_sweep("cartpole-lr", SweepOptions(), LIBRARY)
    assert planned.sweep.name == "cartpole-lr" and len(planned.trials) == 9
    rates = sorted({spec.agent.model_dump()["learning_rate"] for spec in planned.specs})
    assert rates == [0.0003, 0.001, 0.003]
    assert {spec.seed for spec in planned.specs} == {1, 2, 3}
    assert all(spec.target_return == 475 for spec in planned.specs)
    # command-line flags add to (or replace) the file's keys
    more = plan_sweep("cartpole-lr", SweepOptions(name="more", seeds=2, sets=("agent.batch_size=8,16",)), LIBRARY)
    assert len(more.trials) == 3 * 2 * 2 and more.sweep.name == "more"


def test_combinations_read_short_unless_two_keys_end_alike() -> None:
    assert describe({"agent.learning_rate": 0.1, "agent.batch_size": 8}) == "learning_rate=0.1 batch_size=8"
    both = {"agent.learning_rate": 0.1, "agent.baseline_optimizer.learning_rate": 0.2}
    assert describe(both) == "agent.learning_rate=0.1 agent.baseline_optimizer.learning_rate=0.2"


def test_trials_list_the_axes_as_hparams_and_a_sweep_made_before_they_did_continues(project: Path) -> None:
    options = SweepOptions(name="lr", sets=("agent.learning_rate=1e-3,3e-4", "agent.batch_size=8"), seeds=2)
    planned = plan_sweep("cartpole-ppo", options, LIBRARY)
    assert all(spec.hparams == ["agent.learning_rate", "agent.batch_size"] for spec in planned.specs)
    store = ExperimentStore(open_project())
    # The sweep as tfcli made it before trials listed their axes: what they train is the same, so it goes on.
    old = [spec.model_copy(update={"hparams": None}) for spec in planned.specs]
    create_sweep(store, dataclasses.replace(planned, specs=old))
    assert store.dir("lr-0").spec().hparams is None
    create_sweep(store, planned)
    assert store.dir("lr-0").spec().hparams == ["agent.learning_rate", "agent.batch_size"]
    # What a trial trains still may not change under it.
    changed = planned.specs[1].model_copy(update={"hparams": None, "total_timesteps": 7})
    with pytest.raises(TfcliError, match="'lr-1' already exists with a different spec"):
        store.write(changed)
