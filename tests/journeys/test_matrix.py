"""Every bundled agent on every bundled environment it can act in, in every run mode, trains to ``completed``;
every pair that cannot work is refused by ``tfcli validate`` with the reason, before anything runs.

Each case goes the way a run does: ``trainer.preflight`` (what ``tfcli validate`` runs) must accept it, then
``trainer.run.run`` — the function behind ``python -m trainer run`` — trains it, with real env-worker processes in
distributed mode. The cases share one process so that TensorFlow starts once (tiny budgets: see ``matrix_spec``).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from journey_kit import (
    RUN_MODES,
    env_workers,
    expects_update,
    experiment_of,
    matrix_spec,
    pairs,
    read_result,
    rejection,
)
from typer.testing import CliRunner

from tfcli.cli.app import app
from trainer.config import RunConfig
from trainer.preflight import preflight
from trainer.run import run

TRAINABLE = [pair for pair in pairs() if rejection(*pair) is None]
REFUSED = [pair for pair in pairs() if rejection(*pair) is not None]


def test_the_matrix_covers_the_library() -> None:
    # 6 agents x 6 environments: dqn cannot act on the 2 continuous levels, dqn-visual only sees images.
    assert len(pairs()) == 36
    assert len(TRAINABLE) == 29 and len(REFUSED) == 7


@pytest.mark.parametrize("run_mode", RUN_MODES)
@pytest.mark.parametrize(("agent", "environment"), TRAINABLE)
def test_bundled_agent_trains_on_bundled_environment(
    agent: str, environment: str, run_mode: str, tmp_path: Path
) -> None:
    spec = matrix_spec(agent, environment, run_mode)
    experiment = experiment_of(spec, tmp_path)
    if run_mode != "distributed":  # a distributed learner builds the same agent as multi-threaded mode does
        assert preflight(experiment).environments == experiment.num_environments  # what `tfcli validate` runs
    output = tmp_path / "results"
    workers = env_workers(experiment, tmp_path) if run_mode == "distributed" else contextlib.nullcontext(())
    with workers as addresses:
        result = run(RunConfig(experiment, output=output, workers=addresses, progress_bar=False))
    assert result.status == "completed"
    written = read_result(output)
    assert written["status"] == "completed", written
    assert written["timesteps"] == spec["total_timesteps"]
    if expects_update(agent, environment):
        assert written["updates"] >= 1, f"{agent} never updated on {environment} in {spec['total_timesteps']} timesteps"
    episodes = [json.loads(line) for line in (output / "progress.jsonl").read_text().splitlines()]
    assert episodes and all(episode["length"] <= spec["max_timesteps_per_episode"] for episode in episodes)
    assert {episode["worker"] for episode in episodes} == set(range(experiment.num_environments))


@pytest.mark.parametrize(("agent", "environment"), REFUSED)
def test_pairs_that_cannot_work_are_refused_by_validate(agent: str, environment: str, project: Path) -> None:
    spec = matrix_spec(agent, environment, "single")
    (project / "pair.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = CliRunner().invoke(app, ["validate", "pair.yaml"])
    assert result.exit_code == 2, result.output
    reason = rejection(agent, environment)
    assert reason is not None
    problem = next(line for line in result.stderr.splitlines() if line.startswith("invalid:"))
    field = "agent:" if "discrete" in reason else "agent.network.0:"
    assert problem.startswith(f"invalid: pair.yaml: {field}"), problem
    assert reason in problem
    assert "Traceback" not in result.output
