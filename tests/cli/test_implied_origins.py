"""A value a TensorForce file implies is reported against that file and its own key (issue 29 row 13): a saver's
``max_checkpoints: 5000`` (read as ``keep_checkpoints``, at most 1000) or an environment's ``reward_threshold:
high`` (read as ``target_return``) said they came from "the command line" — or the experiment's file — which never
mentioned them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import invoke

AGENT = '{"agent": "ppo", "batch_size": 4, "saver": {"directory": "x", "frequency": 5, "max_checkpoints": 5000}}'
ENVIRONMENT = '{"environment": "gym", "level": "CartPole-v1", "max_episode_timesteps": 100, "reward_threshold": "high"}'
KEEP = "saver.max_checkpoints (read as keep_checkpoints): input should be less than or equal to 1000, got 5000"
TARGET = "reward_threshold (read as target_return): input should be a valid number"


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["-A", "tfagent.json", "-E", "cartpole"], f"error: tfagent.json: {KEEP}"),
        (["-A", "ppo", "-E", "tfenv.json"], f"error: tfenv.json: {TARGET}"),
    ],
)
def test_experiment_from_flags_names_the_tensorforce_file(project: Path, flags: list[str], expected: str) -> None:
    (project / "tfagent.json").write_text(AGENT)
    (project / "tfenv.json").write_text(ENVIRONMENT)
    code, _, stderr = invoke("experiment", "new", "-n", "implied", *flags, "-t", "100")
    assert code == 2, stderr
    assert stderr.startswith(expected), stderr
    assert "the command line" not in stderr


def test_validate_names_the_agent_file_or_the_inline_key(project: Path) -> None:
    (project / "tfagent.json").write_text(AGENT)
    (project / "by-file.yaml").write_text("name: a\nenvironment: cartpole\nagent: tfagent.json\ntotal_timesteps: 9\n")
    (project / "inline.yaml").write_text(f"name: b\nenvironment: cartpole\nagent: {AGENT}\ntotal_timesteps: 9\n")
    code, _, stderr = invoke("validate", "-q", "--no-build", "by-file.yaml", "inline.yaml")
    assert code == 2, stderr
    assert [line for line in stderr.splitlines() if line.startswith("invalid:")] == [
        f"invalid: tfagent.json: {KEEP}",
        f"invalid: inline.yaml: agent.{KEEP}",
    ]
