"""TensorForce's own spec forms (tests/tensorforce_forms/) translated into tfcli's, with the notes users read and
the errors bad input gets (exit 2, naming the file and the field)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import load_experiment, to_data
from trainer.kernel.spec.translation import collect_notes

FORMS = Path(__file__).resolve().parents[1] / "tensorforce_forms"


def experiment(project: Path, **fields: object) -> Path:
    for form in FORMS.iterdir():
        shutil.copy(form, project / form.name)
    path = project / "exp.yaml"
    path.write_text(yaml.safe_dump({"name": "exp", "total_timesteps": 2000, **fields}))
    return path


def load(project: Path, **fields: object) -> tuple[dict[str, object], list[str]]:
    path = experiment(project, **fields)
    with collect_notes() as notes:
        spec = load_experiment(path.name).spec
    return to_data(spec), notes


def problems(project: Path, **fields: object) -> list[str]:
    path = experiment(project, **fields)
    with pytest.raises(InvalidInput) as caught:
        load_experiment(path.name)
    return caught.value.problems


def test_agent_owned_keys_map_to_tfcli_settings_with_one_note(project: Path) -> None:
    data, notes = load(project, agent="agent-ppo-owned-keys.json", environment="cartpole")
    assert data["agent"] == {
        "agent": "ppo",
        "batch_size": 4,
        "learning_rate": 0.001,
        "network": [{"type": "dense", "size": 16, "activation": "tanh"}],
    }
    assert data["saver_frequency"] == "5e" and data["keep_checkpoints"] == 2
    assert data["agent_summaries"] == ["loss", "entropy", "reward"]
    assert data["record"] == {"frequency": 2, "start": 0, "max_traces": 3}
    assert data["max_timesteps_per_episode"] == 200
    (note,) = notes
    lines = note.splitlines()
    assert lines[0] == "agent-ppo-owned-keys.json: TensorForce agent form, translated"
    assert lines[1].startswith("  mapped: saver.frequency 5 episodes -> saver_frequency 5e;")
    assert "parallel_interactions (run_mode, num_workers)" in lines[2]
    assert lines[3] == "  ignored: summarizer.flush (the trainer flushes every 10 s)"


def test_the_experiment_wins_over_what_a_shared_file_implies(project: Path) -> None:
    data, notes = load(project, agent="agent-ppo-owned-keys.json", environment="cartpole", saver_frequency="100t")
    assert data["saver_frequency"] == "100t"
    assert "saver_frequency 5e (the experiment sets 100t)" in notes[0]
    assert "-> saver_frequency" not in notes[0]


def test_environment_create_form_becomes_a_gymnasium_level_with_tensorforce_meanings(project: Path) -> None:
    data, notes = load(project, agent="ppo", environment="env-gym-create-form.json")
    assert data["environment"] == {
        "type": "gymnasium",
        "level": "CartPole-v1",
        "kwargs": {},
        "wrappers": [
            {"type": "bound_observation", "min_value": -3.0, "max_value": 3.0},
            {"type": "terminal_reward", "reward": -1.0},
        ],
    }
    assert data["max_timesteps_per_episode"] == 300 and data["target_return"] == 290.0
    assert "level CartPole -> CartPole-v1 (the latest registered version)" in notes[0]
    assert "ignored: visualize" in notes[0]


def test_level_without_environment_key_and_tensorforce_environment_by_name(project: Path) -> None:
    data, _ = load(project, agent="ppo", environment="env-level-drop-states.yaml")
    assert data["environment"]["level"] == "MountainCar-v0"  # type: ignore[index]
    assert data["environment"]["wrappers"] == [{"type": "drop_observation_indices", "indices": [1]}]  # type: ignore[index]
    data, _ = load(project, agent="ppo", environment="env-tensorforce-named.yaml")
    assert data["environment"] == {"type": "tensorforce", "environment": "custom_cartpole", "kwargs": {}}
    assert data["max_timesteps_per_episode"] == 100


def test_network_forms_pass_as_they_are(project: Path) -> None:
    for name in ("network-layered.yaml", "network-auto.json", "network-layers-list.yaml"):
        data, notes = load(project, agent="ppo", environment="cartpole", network=name)
        assert data["network"] == yaml.safe_load((FORMS / name).read_text()) and not notes


def test_tfcli_forms_are_left_alone(project: Path) -> None:
    data, notes = load(project, agent="ppo", environment={"level": "CartPole-v1", "kwargs": {}})
    assert notes == [] and data["environment"]["level"] == "CartPole-v1"  # type: ignore[index]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"environment": {"environment": "gym", "level": "CartPole", "max_valu": 3}},
            "exp.yaml: environment.max_valu: unknown key (did you mean 'max_value'?)",
        ),
        (
            {"environment": {"environment": "gym", "level": "CartPole", "min_value": -1}},
            "exp.yaml: environment.max_value: min_value and max_value go together",
        ),
        (
            {"environment": {"environment": "gym", "level": "CartPol"}},
            "exp.yaml: environment.level: no gymnasium level 'CartPol' in any version (did you mean 'CartPole'",
        ),
        (
            {"environment": {"environment": "gym", "level": "CartPole", "reward_shaping": "reward"}},
            "exp.yaml: environment.reward_shaping: not supported",
        ),
        (
            {"agent": {"agent": "ppo", "summarizer": {"summaries": ["losses"]}}},
            "exp.yaml: agent.summarizer.summaries: unknown summaries ['losses']",
        ),
        (
            {"agent": {"agent": "ppo", "recorder": {"directory": "x", "frequncy": 2}}},
            "exp.yaml: agent.recorder.frequncy: unknown key (did you mean 'frequency'?)",
        ),
        (
            {"agent": {"agent": "ppo", "saver": {"frequency": 0, "unit": "episodes"}}},
            "exp.yaml: agent.saver.frequency: expected a whole number above 0, got 0",
        ),
    ],
)
def test_bad_input_names_the_file_and_the_field(project: Path, fields: dict[str, object], expected: str) -> None:
    base: dict[str, object] = {"agent": "ppo", "environment": "cartpole"}
    found = problems(project, **{**base, **fields})
    assert any(line.startswith(expected) for line in found), found


@pytest.mark.parametrize("field", ["environment", "agent"])
def test_a_refused_referenced_file_gets_its_problem_and_no_line_without_a_field(project: Path, field: str) -> None:
    # the refused document is dropped before validation, which must not then report it missing as a bare file line
    documents = {
        "environment": {"environment": "gym", "level": "CartPole", "reward_shaping": "reward"},
        "agent": {"agent": "ppo", "saver": {"frequency": 0, "unit": "episodes"}},
    }
    (project / f"bad-{field}.json").write_text(json.dumps(documents[field]))
    fields = {"agent": "ppo", "environment": "cartpole", field: f"bad-{field}.json"}
    found = problems(project, **fields)
    assert len(found) == 1, found
    key = "reward_shaping" if field == "environment" else "saver.frequency"
    assert found[0].startswith(f"bad-{field}.json: {key}: ")


def test_a_problem_in_a_referenced_file_names_that_file_and_other_keys_are_still_checked(project: Path) -> None:
    (project / "tf-agent.json").write_text(json.dumps({"type": "ppo", "learning_rat": 1, "saver": {"unit": "x"}}))
    found = problems(project, agent="tf-agent.json", environment="cartpole")
    assert "tf-agent.json: saver.unit: got 'x'; expected timesteps, episodes or updates" in found
    assert any(line.startswith("tf-agent.json: learning_rat: not an argument of the ppo agent") for line in found)
