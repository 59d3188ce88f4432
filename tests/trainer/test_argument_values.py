"""TensorForce argument values checked before TensorForce sees them (issue 29 row 9): ``batch_size: 2.5``,
``learning_rate: -1``, ``memory: 1e12`` and memories larger than the machine's were an "internal error" naming no
key (or 2 GB of memory before one). The rules are TensorForce 0.6.5's own docstrings' (``int > 0``,
``0.0 <= float <= 1.0``, ...); ``tfcli validate`` and the trainer report them as ``<file>: agent.<key>: ...``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import invoke

from trainer.argument_values import available_memory, memory_problems, value_problems

CARTPOLE = {"type": "float", "shape": (4,)}


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"batch_size": 2.5}, "agent.batch_size: must be a whole number >= 1, got 2.5"),
        ({"batch_size": 0}, "agent.batch_size: must be a whole number >= 1, got 0"),
        ({"batch_size": True}, "agent.batch_size: must be a whole number >= 1, got True"),
        ({"memory": "1e12"}, "agent.memory: must be a whole number >= 1 or 'minimum', got '1e12'"),
        ({"learning_rate": -1}, "agent.learning_rate: must be a number > 0, got -1"),
        ({"learning_rate": float("nan")}, "agent.learning_rate: must be a number > 0, got nan"),
        ({"discount": 1.5}, "agent.discount: must be a number from 0 to 1, got 1.5"),
        ({"entropy_regularization": -0.1}, "agent.entropy_regularization: must be a number >= 0, got -0.1"),
        ({"horizon": -1}, "agent.horizon: must be a whole number >= 0 or 'episode', got -1"),
        (
            {"subsampling_fraction": 1.5},
            "agent.subsampling_fraction: must be a whole number >= 1 or a fraction > 0 and <= 1, got 1.5",
        ),
    ],
)
def test_a_value_tensorforce_refuses_names_its_key(arguments: dict[str, object], problem: str) -> None:
    assert value_problems(arguments) == [problem]


@pytest.mark.parametrize(
    "arguments",
    [
        {"batch_size": 10, "learning_rate": 1e-3, "discount": 0.99, "memory": "minimum", "update_frequency": 0.5},
        {"horizon": "episode", "update_frequency": "never", "subsampling_fraction": 4, "discount": 0},
        {"learning_rate": {"type": "exponential", "unit": "timesteps", "num_steps": 10, "initial_value": 0.1}},
    ],
)
def test_values_tensorforce_takes_pass(arguments: dict[str, object]) -> None:
    assert value_problems(arguments) == []


def test_a_memory_larger_than_the_machine_has_names_the_key_that_sizes_it() -> None:
    gib = 2**30
    (problem,) = memory_problems("dqn", {"memory": 100_000_000}, CARTPOLE, 500, available=2 * gib)
    assert problem == (
        "agent.memory: a memory of 100,000,000 timesteps needs about 7.5 GiB, and this machine has 2.0 GiB available"
    )
    assert memory_problems("dqn", {"memory": 10_000}, CARTPOLE, 500, available=2 * gib) == []
    (problem,) = memory_problems("ppo", {"batch_size": 1_000_000_000}, CARTPOLE, 500, available=None)
    assert problem.startswith("agent.batch_size: a memory of 500,000,000,500 timesteps (1,000,000,000 episodes of up")
    assert problem.endswith("beyond TensorFlow's largest tensor (2,147,483,647 entries)")
    assert memory_problems("ppo", {"batch_size": 10}, CARTPOLE, 500, available=available_memory()) == []


def test_validate_names_every_bad_value_and_the_file(lab: Path) -> None:
    (lab / "bad.yaml").write_text(
        "name: bad\nenvironment: cartpole\nagent: {agent: ppo, batch_size: 2.5, learning_rate: -1}\n"
        "total_timesteps: 1000\n"
    )
    (lab / "huge.yaml").write_text(
        "name: huge\nenvironment: cartpole\nagent: {agent: dqn, batch_size: 32, memory: 2000000000}\n"
        "total_timesteps: 1000\n"
    )
    code, _, stderr = invoke("validate", "-q", "bad.yaml", "huge.yaml")
    assert code == 2, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("invalid:")]
    assert lines[:2] == [
        "invalid: bad.yaml: agent.batch_size: must be a whole number >= 1, got 2.5",
        "invalid: bad.yaml: agent.learning_rate: must be a number > 0, got -1",
    ]
    assert lines[2].startswith("invalid: huge.yaml: agent.memory: a memory of 2,000,000,000 timesteps needs about")
    assert "available" in lines[2] and len(lines) == 3
