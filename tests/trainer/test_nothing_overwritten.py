"""Nothing a user has is overwritten without being asked, and one trainer per results folder (issue 29, rows 1, 3
and 12): tiny PPO runs on CartPole, in this process and as ``python -m trainer`` processes with real signals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from trainer_testkit import cartpole, read_progress, read_result

from tfcli.errors import TfcliError
from trainer.config import RunConfig
from trainer.run import run

TINY = {"total_timesteps": 300, "saver_frequency": "100t", "summary_frequency": "100t"}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("finished") / "out"
    assert run(RunConfig(experiment=cartpole(**TINY), output=output)).status == "completed"
    return output


@pytest.fixture
def copy_of_finished_run(finished_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished_run, tmp_path / "out"))


@pytest.mark.parametrize("budget", [300, 600])  # resume -e as it was, and resume --total-timesteps 600
def test_results_without_a_checkpoint_fail_naming_what_is_missing_and_nothing_is_trained_over(
    copy_of_finished_run: Path, budget: int
) -> None:
    """Row 1: a completed run whose ``checkpoints/`` is gone trained from zero over its progress and result."""
    output = copy_of_finished_run
    shutil.rmtree(output / "checkpoints")
    progress = (output / "progress.jsonl").read_text()
    before = read_result(output)
    experiment = cartpole(**{**TINY, "total_timesteps": budget})
    with pytest.raises(TfcliError, match="no complete checkpoint to continue them from") as raised:
        run(RunConfig(experiment=experiment, output=output))
    assert "--restart" in str(raised.value.hint)
    assert (output / "progress.jsonl").read_text() == progress
    after = read_result(output)
    assert after["timesteps"] == before["timesteps"] == 300 and after["episodes"] == before["episodes"]
    assert not (output / "checkpoints").exists()


def test_a_run_killed_before_its_first_checkpoint_is_not_trained_over_either(tmp_path: Path) -> None:
    output = tmp_path / "out"
    output.mkdir()
    line = {"worker": 0, "episode": 1, "timesteps": 20, "return": 20.0, "length": 20, "wall_seconds": 0.1}
    (output / "progress.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(TfcliError, match=r"1 episode\(s\) in progress.jsonl"):
        run(RunConfig(experiment=cartpole(**TINY), output=output))
    assert read_progress(output) == [line]


def test_an_empty_output_folder_still_trains(tmp_path: Path) -> None:
    assert run(RunConfig(experiment=cartpole(**TINY), output=tmp_path / "out")).status == "completed"
