"""Experiment specs: references, defaults, cross-field rules and the error lines users read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import ConfigLibrary, Experiment, load_experiment, to_yaml
from trainer.kernel.spec.frequency import Frequency

MINIMAL = {"name": "exp", "agent": "ppo", "environment": "cartpole", "episodes": 10}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data))
    return path


def problems_for(project: Path, data: object, name: str = "exp.yaml") -> list[str]:
    write(project / name, data)
    with pytest.raises(InvalidInput) as caught:
        load_experiment(name)
    return caught.value.problems


def test_names_resolve_from_the_bundled_library(project: Path) -> None:
    write(project / "exp.yaml", MINIMAL)
    experiment = load_experiment("exp.yaml").spec
    assert experiment.agent.agent == "ppo"
    assert experiment.environment.level == "CartPole-v1"


def test_project_configs_override_bundled_ones_by_name(project: Path) -> None:
    write(project / "configs/agents/ppo.json", {"agent": "ppo", "batch_size": 3})
    write(project / "exp.yaml", MINIMAL)
    assert load_experiment("exp.yaml").spec.agent.model_extra == {"batch_size": 3}


def test_paths_resolve_relative_to_the_spec_file(project: Path) -> None:
    write(project / "specs/my-agent.yaml", {"agent": "dqn", "memory": 1000})
    write(project / "specs/exp.yaml", {**MINIMAL, "agent": "my-agent.yaml"})
    assert load_experiment("specs/exp.yaml").spec.agent.agent == "dqn"


def test_inline_mappings_and_cluster_names(project: Path) -> None:
    data = {**MINIMAL, "agent": {"agent": "vpg"}, "network": [{"type": "dense", "size": 8}], "cluster": "small"}
    write(project / "exp.yaml", data)
    experiment = load_experiment("exp.yaml").spec
    assert experiment.agent.agent == "vpg"
    assert experiment.cluster is not None and experiment.cluster.machine_type == "e2-standard-2"


def test_experiment_found_by_name_in_the_project(project: Path) -> None:
    write(project / "configs/experiments/mine.yaml", {**MINIMAL, "name": "mine"})
    assert load_experiment("mine").spec.name == "mine"


def test_defaults_follow_the_run_mode(project: Path) -> None:
    write(project / "a.yaml", MINIMAL)
    write(project / "b.yaml", {**MINIMAL, "run_mode": "distributed"})
    single, distributed = load_experiment("a.yaml").spec, load_experiment("b.yaml").spec
    assert (single.saver_frequency, single.summary_frequency) == (Frequency(100, "e"), Frequency(10, "s"))
    assert (distributed.saver_frequency, distributed.summary_frequency) == (Frequency(600, "s"), Frequency(120, "s"))
    assert (single.run_mode, single.num_workers, single.num_parameter_servers) == ("single", 3, 1)
    assert single.num_environments == 1 and distributed.num_environments == 3


def test_resolved_spec_loads_back_to_the_same_model(project: Path) -> None:
    write(project / "exp.yaml", {**MINIMAL, "cluster": "single-node-2xgpu", "network": "mlp2", "seed": 3})
    experiment = load_experiment("exp.yaml").spec
    (project / "resolved.yaml").write_text(to_yaml(experiment))
    assert load_experiment("resolved.yaml").spec == experiment


def test_every_problem_of_a_file_is_reported_with_file_and_field(project: Path) -> None:
    found = problems_for(
        project,
        {
            **MINIMAL,
            "agnet": "x",
            "run_mode": "multithreaded",
            "saver_frequency": "10q",
            "summary_frequency": "5e",
            "num_parameter_servers": 2,
            "environment": {"level": "CartPole-v1", "wrapers": []},
        },
    )
    text = "\n".join(found)
    assert all(line.startswith("exp.yaml: ") for line in found), found
    assert "exp.yaml: agnet: unknown key (did you mean 'agent'?)" in text
    assert "exp.yaml: run_mode: got 'multithreaded'" in text and "did you mean 'multi-threaded'" in text
    assert "exp.yaml: saver_frequency: '10q' is not a frequency" in text
    assert "exp.yaml: summary_frequency: '5e': summaries are written in seconds or timesteps" in text
    assert "exp.yaml: num_parameter_servers: got 2, but TensorForce 0.6 trains one central model" in text
    assert "exp.yaml: environment.wrapers: unknown key (did you mean 'wrappers'?)" in text
    assert len(found) == 6


def test_errors_inside_a_referenced_file_name_that_file(project: Path) -> None:
    write(project / "configs/agents/ppo.json", {"agent": "ppo", "learning_rat": 0.1, "saver": {"frequncy": 3}})
    found = problems_for(project, MINIMAL)
    assert (
        "configs/agents/ppo.json: learning_rat: not an argument of the ppo agent (did you mean 'learning_rate'?)"
        in found
    )
    assert any(line.startswith("configs/agents/ppo.json: saver.frequncy: unknown key (did you mean") for line in found)


def test_missing_reference_gets_a_did_you_mean_and_where_it_looked(project: Path) -> None:
    found = problems_for(project, {**MINIMAL, "agent": "ppo2", "network": "nope/net.json"})
    assert found[0].startswith("exp.yaml: agent: no agent named 'ppo2' (did you mean 'ppo'")
    assert "looked in configs/agents, the bundled agents. Available: a2c," in found[0]
    assert found[1] == "exp.yaml: network: no such file: nope/net.json"


def test_syntax_errors_name_file_and_line(project: Path) -> None:
    (project / "exp.yaml").write_text("name: x\nagent: [ppo\n")
    with pytest.raises(InvalidInput, match=r"^exp\.yaml: line 3 column 1: invalid YAML"):
        load_experiment("exp.yaml")
    write(project / "configs/agents/ppo.json", {})
    (project / "configs/agents/ppo.json").write_text('{"agent": "ppo",}')
    write(project / "exp.yaml", MINIMAL)
    with pytest.raises(InvalidInput, match=r"configs/agents/ppo\.json: line 1 column 17: invalid JSON"):
        load_experiment("exp.yaml")


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"episodes": None}, "episodes", "set a budget"),
        ({"run_mode": "distributed", "num_workers": 0}, "num_workers", "needs num_workers >= 1"),
        ({"run_mode": "multi-threaded", "num_workers": 0}, "num_workers", "parallel environments"),
        ({"episodes": 0}, "episodes", "greater than or equal to 1"),
        ({"total_timesteps": -5}, "total_timesteps", "greater than or equal to 1"),
        ({"repeat_actions": 0}, "repeat_actions", "greater than or equal to 1"),
        ({"name": "My_Exp"}, "name", "for example 'my-exp'"),
        ({"seed": "abc"}, "seed", "valid integer"),
        ({"environments_per_worker": 2}, "environments_per_worker", "only a distributed run has environment workers"),
        ({"run_mode": "distributed", "environments_per_worker": 0}, "environments_per_worker", "greater than or"),
        ({"max_cost": 0}, "max_cost", "greater than 0"),
        ({"max_cost": "ten dollars"}, "max_cost", "valid number"),
        ({"ttl": "8"}, "ttl", "m (minutes), h (hours) or d (days)"),
        ({"ttl": 3600}, "ttl", "is not a time to live"),
        ({"ttl": "0h"}, "ttl", "greater than 0"),
        (
            {"cluster": {"name": "c", "machine_type": "n1-standard-4", "gpus_per_node": 1, "gpu_type": "k80"}},
            "cluster.gpu_type",
            "retired",
        ),
    ],
)
def test_cross_field_and_range_rules(project: Path, change: dict[str, object], field: str, words: str) -> None:
    data = {key: value for key, value in {**MINIMAL, **change}.items() if value is not None}
    found = problems_for(project, data)
    assert any(line.startswith(f"exp.yaml: {field}: ") and words in line for line in found), found


def test_environments_count_workers_times_environments_per_worker_in_distributed_runs(project: Path) -> None:
    write(project / "exp.yaml", {**MINIMAL, "run_mode": "distributed", "num_workers": 3, "environments_per_worker": 4})
    assert load_experiment("exp.yaml").spec.num_environments == 12
    write(project / "exp.yaml", {**MINIMAL, "run_mode": "multi-threaded", "num_workers": 3})
    assert load_experiment("exp.yaml").spec.num_environments == 3


def test_not_a_mapping(project: Path) -> None:
    assert problems_for(project, ["a", "b"]) == ["exp.yaml: expected a mapping of experiment keys, got list"]


def test_library_lists_names_project_first(project: Path) -> None:
    write(project / "configs/clusters/zz-mine.yaml", {"name": "zz-mine", "machine_type": "e2-small"})
    names = ConfigLibrary.for_project().names("clusters")
    assert names[0] == "zz-mine" and "single-node-gpu" in names


def test_model_is_immutable(project: Path) -> None:
    write(project / "exp.yaml", MINIMAL)
    experiment: Experiment = load_experiment("exp.yaml").spec
    with pytest.raises(Exception, match="frozen"):
        experiment.episodes = 5  # type: ignore[misc]
