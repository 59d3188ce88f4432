"""Every file of the bundled config library validates on its own and through the experiments that use it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from trainer.kernel.spec import ConfigLibrary, load_any, to_yaml
from trainer.kernel.spec.agent import AGENT_ARGUMENTS, TRAINER_OWNED, AgentSpec, NetworkSpec
from trainer.kernel.spec.documents import read_document
from trainer.kernel.spec.environment import EnvironmentSpec
from trainer.kernel.spec.library import BUNDLED_CONFIGS, KINDS

MODELS = {"agents": AgentSpec, "networks": NetworkSpec, "environments": TypeAdapter(EnvironmentSpec)}


def bundled(kind: str) -> list[Path]:
    return sorted((BUNDLED_CONFIGS / kind).iterdir())


def test_the_library_has_what_the_readme_promises() -> None:
    names = {kind: {p.stem for p in bundled(kind)} for kind in KINDS}
    assert {"cartpole-ppo", "space-invaders-dqn"} <= names["experiments"]
    assert {"small", "large", "single-node", "single-node-gpu", "single-node-2xgpu"} <= names["clusters"]
    assert {"ppo", "dqn", "dqn-visual", "vpg", "trpo", "a2c"} <= names["agents"]
    assert {"mlp2", "mlp2-lstm", "cnn-dqn", "cnn-dqn2013"} <= names["networks"]
    assert {"cartpole", "space-invaders", "acrobot", "mountain-car", "mountain-car-continuous", "pendulum"} <= names[
        "environments"
    ]


@pytest.mark.parametrize(
    "path", [p for kind in MODELS for p in bundled(kind)], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_component_files_validate(path: Path) -> None:
    model = MODELS[path.parent.name]
    model.validate_python(read_document(path)) if isinstance(model, TypeAdapter) else model.model_validate(
        read_document(path)
    )


@pytest.mark.parametrize("path", bundled("experiments") + bundled("clusters"), ids=lambda p: p.name)
def test_experiments_and_clusters_validate_and_are_named_after_their_file(path: Path) -> None:
    loaded = load_any(path, library=ConfigLibrary((BUNDLED_CONFIGS,)))
    assert loaded.spec.name == path.stem
    assert to_yaml(loaded.spec)


def test_space_invaders_is_the_original_walk_through() -> None:
    spec = load_any("space-invaders-dqn", library=ConfigLibrary((BUNDLED_CONFIGS,))).spec
    agent = spec.agent.model_dump()
    assert (spec.run_mode, spec.num_workers, spec.num_parameter_servers) == ("distributed", 4, 1)
    assert spec.total_timesteps == 1_000_000
    assert agent["agent"] == "dqn" and agent["memory"] == 10_000
    exploration = agent["exploration"]
    assert (exploration["initial_value"], exploration["final_value"], exploration["num_steps"]) == (1.0, 0.1, 1_000_000)
    assert exploration["type"] == "linear" and exploration["unit"] == "timesteps"
    assert spec.cluster is not None and spec.cluster.num_nodes == 2 and spec.cluster.gpus_per_node >= 1


@pytest.mark.slow  # imports TensorForce, and TensorFlow with it (README "Development")
def test_agent_argument_table_matches_the_installed_tensorforce() -> None:
    """The table lets ``tfcli validate`` check agent files without importing TensorFlow; keep it true."""
    from trainer import compat

    compat.apply()  # TensorForce as the trainer imports it: its import alone patches msgpack for the whole process
    from tensorforce.agents import agents

    for name, cls in agents.items():
        if name == "recorder":
            continue
        arguments = set(inspect.signature(cls.__init__).parameters) - {"self", "kwargs"}
        assert AGENT_ARGUMENTS[name] == arguments - set(TRAINER_OWNED), name
    assert set(AGENT_ARGUMENTS) == set(agents) - {"recorder"}
