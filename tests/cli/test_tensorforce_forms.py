"""A TensorForce user's own files (tests/tensorforce_forms/, one per form) run as they are:
``experiment new -A FILE -E FILE -M FILE -t 2000`` then ``start --local``, real tiny runs; ``validate`` accepts
them only when the trainer builds and steps them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from cli_kit import invoke

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("warm_trainers")]  # real trainings, trainers forked warm

FORMS = Path(__file__).resolve().parents[1] / "tensorforce_forms"


@pytest.fixture
def forms(lab: Path) -> Path:
    for form in FORMS.iterdir():
        shutil.copy(form, lab / form.name)
    return lab


def new_and_start(name: str, agent: str, environment: str, network: str) -> tuple[str, Path]:
    code, _, stderr = invoke(
        "experiment", "new", "-n", name, "-A", agent, "-E", environment, "-M", network, "-t", "2000", "--seed", "1"
    )
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", name, "--local", "--wait")
    assert code == 0, stdout + stderr
    assert f"{name} completed: 2,000 timesteps" in stdout
    return stderr, Path("experiments") / name / "results"


def test_owned_agent_keys_and_create_form_environment_train_with_saver_summarizer_recorder(forms: Path) -> None:
    code, _, notes = invoke(
        "experiment", "new", "-n", "quick", "-A", "agent-ppo-owned-keys.json", "-E", "env-gym-create-form.json",
        "-M", "network-layered.yaml", "-t", "2000", "--seed", "1",
    )  # fmt: skip
    assert code == 0, notes
    assert "note: agent-ppo-owned-keys.json: TensorForce agent form, translated" in notes
    assert "note: env-gym-create-form.json: TensorForce environment form, translated" in notes
    code, stdout, stderr = invoke("experiment", "start", "-e", "quick", "--local", "--wait")
    assert code == 0, stdout + stderr
    results = Path("experiments/quick/results")
    traces = sorted((results / "traces").glob("trace-*.npz"))
    assert len(traces) == 3  # recorder max-traces
    with np.load(traces[-1]) as trace:
        assert trace["states"].shape[1:] == (4,) and len(trace["actions"]) == len(trace["reward"])
        assert np.abs(trace["states"][:, [1, 3]]).max() <= 3.0  # min_value/max_value bound the velocities
    assert len(list((results / "checkpoints").iterdir())) == 2  # saver max_checkpoints
    assert list((results / "summaries" / "agent").glob("events.*"))  # summarizer.summaries


@pytest.mark.parametrize(
    ("agent", "environment", "network"),
    [
        ("agent-tensorforce-full.yaml", "env-level-drop-states.yaml", "network-auto.json"),
        ("agent-ppo-owned-keys.json", "env-tensorforce-named.yaml", "network-layers-list.yaml"),
    ],
)
def test_every_other_form_runs_to_completion(forms: Path, agent: str, environment: str, network: str) -> None:
    name = Path(agent).stem[:12] + "-" + Path(environment).stem[:12]
    new_and_start(name.lower().replace("_", "-"), agent, environment, network)


def test_validate_accepts_them_only_when_the_trainer_builds_them(forms: Path) -> None:
    spec = {"name": "tf", "agent": "agent-tensorforce-full.yaml", "environment": "env-gym-create-form.json"}
    (forms / "good.yaml").write_text(yaml.safe_dump({**spec, "network": "network-auto.json", "total_timesteps": 100}))
    code, stdout, stderr = invoke("validate", "good.yaml")
    assert code == 0, stderr
    assert "note: env-gym-create-form.json: TensorForce environment form, translated" in stderr
    assert "level: CartPole-v1" in stdout and "type: bound_observation" in stdout
    (forms / "bad-env.json").write_text('{"environment": "gym", "level": "CartPole", "drop_states_indices": [7]}')
    (forms / "bad.yaml").write_text(yaml.safe_dump({**spec, "environment": "bad-env.json", "total_timesteps": 100}))
    code, _, stderr = invoke("validate", "bad.yaml")
    assert code == 2
    assert "bad.yaml: environment.wrappers.0: drop_observation_indices: indices [7]" in stderr
