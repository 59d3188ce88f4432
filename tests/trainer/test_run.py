"""Tiny real training runs (TensorForce PPO on CartPole), in this process: what a user finds in the output folder.

Every run must leave result.json, progress.jsonl, complete checkpoints, TensorBoard event files and the learning
curve, and their numbers must agree with each other and with the budget.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import cartpole, complete_checkpoints, read_progress, read_result

from trainer.__main__ import main
from trainer.config import RunConfig
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import load_experiment
from trainer.run import run


def event_tags(folder: Path) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags: set[str] = set()
    for run_folder in {path.parent for path in folder.rglob("events.out.tfevents.*")}:
        accumulator = EventAccumulator(str(run_folder))
        accumulator.Reload()
        tags |= set(accumulator.Tags()["tensors"]) | set(accumulator.Tags()["scalars"])
    return tags


def expected_checkpoints(
    progress: list[dict[str, Any]], saver: str, final: tuple[int, int], keep: int = 3
) -> list[tuple[int, int]]:
    """(timesteps, episodes) of the checkpoints a run should leave, worked out from its progress.jsonl alone.

    ``"Nt"`` (one environment, one timestep a step): one at every multiple of N. ``"Ne"``: one after each step whose
    finished episodes reach the next multiple of N (several episodes can end in one batched step: then once, and the
    next is the multiple after). Then the final state, unless the last periodic one already is it.
    """
    every, unit = int(saver[:-1]), saver[-1]
    made: list[tuple[int, int]] = []
    if unit == "t":
        for multiple in range(every, final[0] + 1, every):
            made.append((multiple, sum(1 for line in progress if line["timesteps"] <= multiple)))
    else:
        due = every
        for timesteps, lines in itertools.groupby(progress, key=lambda line: line["timesteps"]):
            episodes = list(lines)[-1]["episode"]
            if episodes >= due:
                made.append((timesteps, episodes))
                due = (episodes // every + 1) * every
    if not made or made[-1] != final:
        made.append(final)
    return made[-keep:]


def assert_consistent_outputs(output: Path, *, timesteps: int, workers: set[int], saver: str) -> dict[str, Any]:
    result = read_result(output)
    progress = read_progress(output)
    assert result["status"] == "completed" and result["timesteps"] == timesteps
    assert result["episodes"] == len(progress) > 0
    assert [line["episode"] for line in progress] == list(range(1, len(progress) + 1))
    assert {line["worker"] for line in progress} == workers
    assert all(a["timesteps"] <= b["timesteps"] for a, b in itertools.pairwise(progress))
    assert progress[-1]["timesteps"] <= timesteps and sum(line["length"] for line in progress) <= timesteps
    assert all(line["return"] == line["length"] for line in progress)  # CartPole pays 1 per step
    returns = [line["return"] for line in progress][-100:]
    assert result["mean_return_last_100"] == pytest.approx(sum(returns) / len(returns), abs=1e-3)
    assert result["timesteps_per_second"] == pytest.approx(timesteps / result["wall_seconds"], rel=0.01)
    assert result["updates"] >= 1  # it trained

    # The checkpoints kept (the newest three), exactly: those the saver frequency made, then the final one.
    kept = [(checkpoint["timesteps"], checkpoint["episodes"]) for checkpoint in complete_checkpoints(output)]
    assert kept == expected_checkpoints(progress, saver, (timesteps, result["episodes"]))

    ours = event_tags(output / "summaries" / "trainer")
    assert {"episode/return", "episode/length", "run/timesteps_per_second"} <= ours
    assert any("episode-return" in tag for tag in event_tags(output / "summaries" / "agent"))  # TensorForce's own
    assert (output / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return result


@pytest.mark.slow  # a real training (README "Development")
def test_a_single_run_trains_cartpole_and_writes_every_output(tmp_path: Path) -> None:
    experiment = cartpole(total_timesteps=300, saver_frequency="100t", summary_frequency="50t")
    result = run(RunConfig(experiment=experiment, output=tmp_path))
    assert (result.status, result.exit_code) == ("completed", 0)
    assert_consistent_outputs(tmp_path, timesteps=300, workers={0}, saver="100t")
    # Spelled out: at 100, 200 and 300 timesteps, the last one also the final state (not saved twice).
    assert [checkpoint["timesteps"] for checkpoint in complete_checkpoints(tmp_path)] == [100, 200, 300]


@pytest.mark.slow  # real trainings (README "Development")
@pytest.mark.parametrize(
    ("environments", "workers", "timesteps"),
    [("in-process", 3, 301), ("subprocess", 2, 201)],  # budgets that batches of 3 and 2 do not divide
)
def test_a_multi_threaded_run_keeps_the_budget_exactly(
    tmp_path: Path, environments: Any, workers: int, timesteps: int
) -> None:
    experiment = cartpole(
        run_mode="multi-threaded", num_workers=workers, total_timesteps=timesteps, saver_frequency="2e"
    )
    run(RunConfig(experiment=experiment, output=tmp_path, environments=environments))
    assert_consistent_outputs(tmp_path, timesteps=timesteps, workers=set(range(workers)), saver="2e")


@pytest.mark.slow  # a real run, in this process (README "Development")
def test_a_deterministic_run_evaluates_without_learning(tmp_path: Path) -> None:
    experiment = cartpole(run_mode="multi-threaded", num_workers=2, episodes=3, deterministic=True)
    result = run(RunConfig(experiment=experiment, output=tmp_path))
    assert (result.status, result.episodes, result.updates) == ("completed", 3, 0)
    assert len(read_progress(tmp_path)) == 3


def test_an_agent_tensorforce_rejects_fails_with_the_spec_file_named(tmp_path: Path, spec_file: Any) -> None:
    loaded = load_experiment(spec_file(total_timesteps=10, agent={"agent": "ppo", "batch_size": 0}))
    config = RunConfig(experiment=loaded.spec, output=tmp_path / "out", spec_name="experiment.yaml")
    with pytest.raises(InvalidInput) as raised:
        run(config)
    # checked before TensorForce sees it (trainer/argument_values.py), as TensorForce 0.6.5 would refuse it
    assert raised.value.problems[0] == "experiment.yaml: agent.batch_size: must be a whole number >= 1, got 0"
    assert read_result(tmp_path / "out")["status"] == "failed"


def test_a_spec_mistake_exits_2_with_the_file_and_field_and_no_traceback(
    tmp_path: Path, spec_file: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec_file(total_timestep=100)
    assert main(["run", "--spec", "experiment.yaml", "--output", "out"]) == 2
    err = capsys.readouterr().err
    assert "experiment.yaml: total_timestep: unknown key (did you mean 'total_timesteps'?)" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()
    spec_file(total_timesteps=100)
    assert main(["run", "--spec", "experiment.yaml", "--output", "out", "--workers", "host-without-port"]) == 2
    assert "--workers: 'host-without-port' is not HOST:PORT" in capsys.readouterr().err
