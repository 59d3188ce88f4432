"""``tfcli validate`` through the CLI, as a user runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tfcli.cli.app import app
from trainer.kernel.spec.library import BUNDLED_CONFIGS

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("release_memory")  # validate builds agents in this process
BUNDLED = sorted(str(p) for p in BUNDLED_CONFIGS.glob("*/*.yaml") if p.parent.name in ("experiments", "clusters"))


def test_every_bundled_experiment_and_cluster_validates_and_prints_resolved_yaml(lab: Path) -> None:
    # in a project `tfcli init` made: gridworld-ppo trains the envs/ it writes
    result = runner.invoke(app, ["validate", *BUNDLED])
    assert result.exit_code == 0, result.output
    documents = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert len(documents) == len(BUNDLED)
    by_name = {d["name"]: d for d in documents}
    assert by_name["cartpole-ppo"]["environment"]["level"] == "CartPole-v1"
    assert by_name["space-invaders-dqn"]["run_mode"] == "distributed"
    assert by_name["single-node-2xgpu"]["machine_type"] == "custom-8-32768"


def test_names_from_the_library_are_accepted(project: Path) -> None:
    result = runner.invoke(app, ["validate", "cartpole-ppo", "single-node-gpu"])
    assert result.exit_code == 0, result.output
    assert "name: cartpole-ppo" in result.stdout
    assert "valid: cartpole-ppo (experiment 'cartpole-ppo')" in result.stderr
    assert "valid: single-node-gpu (cluster 'single-node-gpu')" in result.stderr


def test_quiet_prints_nothing_on_success_and_only_the_problems_otherwise(project: Path) -> None:
    result = runner.invoke(app, ["validate", "cartpole-ppo", "single-node-gpu", "--quiet"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    (project / "bad.yaml").write_text("name: bad\nagent: ppo\nenvironment: cartpole\nepisodes: -1\n")
    result = runner.invoke(app, ["validate", "cartpole-ppo", "bad.yaml", "-q", "--no-build"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "invalid: bad.yaml: episodes: input should be greater than or equal to 1, got -1",
        "1 of 2 spec file(s) invalid",
    ]


def test_invalid_spec_exits_2_naming_file_and_field_without_traceback(project: Path) -> None:
    (project / "bad.yaml").write_text("name: bad\nagent: ppo\nenvironment: cartpole\nepisodes: -1\nrun_mode: x\n")
    (project / "ok.yaml").write_text("name: ok\nmachine_type: e2-small\n")
    result = runner.invoke(app, ["validate", "ok.yaml", "bad.yaml"])
    assert result.exit_code == 2
    assert "invalid: bad.yaml: episodes: input should be greater than or equal to 1" in result.stderr
    assert "invalid: bad.yaml: run_mode: got 'x'" in result.stderr
    assert "valid: ok.yaml (cluster 'ok')" in result.stderr
    assert "1 of 2 spec file(s) invalid" in result.stderr
    assert "Traceback" not in result.output


def test_missing_file_and_bad_yaml(project: Path) -> None:
    (project / "broken.yaml").write_text("name: [x\n")
    result = runner.invoke(app, ["validate", "missing.yaml", "broken.yaml", str(project)])
    assert result.exit_code == 2
    assert "invalid: missing.yaml: no such file" in result.stderr
    assert "invalid: broken.yaml: line 2 column 1: invalid YAML" in result.stderr
    assert "is a folder" in result.stderr


def test_usage_mistakes_exit_2() -> None:
    assert runner.invoke(app, ["validate"]).exit_code == 2
    unknown = runner.invoke(app, ["validat"])
    assert unknown.exit_code == 2 and "Did you mean 'validate'" in unknown.output


def test_help_lists_validate() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "validate" in result.stdout


def test_validate_builds_and_steps_the_experiment_and_says_what_it_built(project: Path) -> None:
    result = runner.invoke(app, ["validate", "space-invaders-dqn"])
    assert result.exit_code == 0, result.output
    assert (
        "built the dqn agent for 4 x ALE/SpaceInvaders-v5 (observations (84, 84, 4), 6 discrete actions, "
        "episodes <= 4,500 agent steps) and stepped it" in " ".join(result.stderr.split())
    )


def test_a_level_without_an_episode_limit_needs_one_when_environments_share_the_agent(project: Path) -> None:
    # ALE's cap 0 means "none": one environment can run unbounded episodes, several sharing a TensorForce agent
    # cannot (the trainer would fail building the agent).
    spec = {
        "name": "no-limit",
        "environment": {"level": "ALE/SpaceInvaders-v5", "kwargs": {"max_num_frames_per_episode": 0}},
        "agent": "dqn-visual",
        "total_timesteps": 100,
    }
    for run_mode, code in (("multi-threaded", 2), ("distributed", 2), ("single", 0)):
        (project / "no-limit.yaml").write_text(yaml.safe_dump({**spec, "run_mode": run_mode, "num_workers": 2}))
        result = runner.invoke(app, ["validate", "no-limit.yaml", "--quiet"])
        assert result.exit_code == code, (run_mode, result.output)
        if code:
            assert "invalid: no-limit.yaml: max_timesteps_per_episode: ALE/SpaceInvaders-v5 has no episode limit" in (
                " ".join(result.stderr.split())
            )


def test_no_build_checks_the_schema_only(project: Path) -> None:
    (project / "dense.yaml").write_text(
        "name: dense\nenvironment: space-invaders\nagent: ppo\nnetwork: mlp2\ntotal_timesteps: 10\n"
    )
    assert runner.invoke(app, ["validate", "dense.yaml", "-q", "--no-build"]).exit_code == 0
    result = runner.invoke(app, ["validate", "dense.yaml", "-q"])
    assert result.exit_code == 2
    assert "invalid: dense.yaml: network.0: a dense layer needs a vector input" in result.stderr
