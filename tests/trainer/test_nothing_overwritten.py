"""Nothing a user has is overwritten without being asked, and one trainer per results folder (issue 29, rows 1, 3
and 12): tiny PPO runs on CartPole, in this process and as ``python -m trainer`` processes with real signals."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import cartpole, read_progress, read_result, trainer_process, wait_for

from trainer.config import RunConfig
from trainer.kernel.errors import TfcliError
from trainer.results import withdraw
from trainer.run import run

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

# The budget and saver of this module's runs, finished_run's too (trainer_testkit).
TINY = {"total_timesteps": 300, "saver_frequency": "100t", "summary_frequency": "100t"}


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


def test_a_folder_from_before_the_checkpointed_marker_is_refused_by_its_result(copy_of_finished_run: Path) -> None:
    """No ``.checkpointed`` (written since): a completed ``result.json`` says a checkpoint backed the results."""
    output = copy_of_finished_run
    shutil.rmtree(output / "checkpoints")
    (output / ".checkpointed").unlink()
    progress = (output / "progress.jsonl").read_text()
    with pytest.raises(TfcliError, match=r"\(result.json says so\), but no complete checkpoint"):
        run(RunConfig(experiment=cartpole(**{**TINY, "total_timesteps": 600}), output=output))
    assert (output / "progress.jsonl").read_text() == progress and read_result(output)["timesteps"] == 300


def test_an_extension_whose_checkpoints_were_deleted_is_refused(copy_of_finished_run: Path) -> None:
    """An extension killed mid-way has withdrawn ``result.json`` (trainer/results.py ``withdraw``): the marker
    written with the first checkpoint still says one existed."""
    output = copy_of_finished_run
    withdraw(output)
    shutil.rmtree(output / "checkpoints")
    progress = (output / "progress.jsonl").read_text()
    with pytest.raises(TfcliError, match=r"\(.checkpointed says so\), but no complete checkpoint") as raised:
        run(RunConfig(experiment=cartpole(**{**TINY, "total_timesteps": 600}), output=output))
    assert "--restart" in str(raised.value.hint)
    assert (output / "progress.jsonl").read_text() == progress and not (output / "checkpoints").exists()


def test_a_run_sigkilled_before_its_first_checkpoint_starts_over_and_completes(
    spec_file: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A pod OOM-killed or a spot node lost before the first checkpoint: its episodes are all past the newest
    checkpoint (none), the ones a resume plays again, so the retry starts from zero and each episode is kept once."""
    output = tmp_path / "out"
    spec = spec_file(total_timesteps=100_000, saver_frequency="1000000t", summary_frequency="100t")
    process = trainer_process("run", "--spec", str(spec), "--output", str(output))
    try:
        wait_for(lambda: len(read_lines(output / "progress.jsonl")) >= 3, process)
    finally:
        process.kill()
        process.wait()
    assert not (output / "checkpoints").exists() and not (output / ".checkpointed").exists()
    assert not (output / "result.json").exists()
    with caplog.at_level(logging.INFO, logger="trainer"):
        result = run(RunConfig(experiment=cartpole(**TINY), output=output))
    assert result.status == "completed" and result.timesteps == 300
    said = [record.getMessage() for record in caplog.records if "no checkpoint was ever made" in record.getMessage()]
    assert len(said) == 1 and "uncheckpointed episode(s)" in said[0], said
    episodes = [line["episode"] for line in read_progress(output)]
    assert episodes == list(range(1, len(episodes) + 1)) and len(episodes) == result.episodes
    assert (output / ".checkpointed").is_file()


def test_a_run_that_failed_before_its_first_checkpoint_starts_over(tmp_path: Path) -> None:
    """A ``failed`` result.json is no evidence of a checkpoint (a failed run saves none): ``--retry-failed`` trains."""
    output = tmp_path / "out"
    output.mkdir()
    line = {"worker": 0, "episode": 1, "timesteps": 20, "return": 20.0, "length": 20, "wall_seconds": 0.1}
    (output / "progress.jsonl").write_text(json.dumps(line) + "\n")
    failed = {"status": "failed", "timesteps": 20, "episodes": 1, "wall_seconds": 0.1, "error": "boom"}
    (output / "result.json").write_text(json.dumps(failed))
    assert run(RunConfig(experiment=cartpole(**TINY), output=output)).status == "completed"
    episodes = [line["episode"] for line in read_progress(output)]
    assert episodes == list(range(1, len(episodes) + 1))


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.is_file() else []


def test_an_empty_output_folder_still_trains(tmp_path: Path) -> None:
    assert run(RunConfig(experiment=cartpole(**TINY), output=tmp_path / "out")).status == "completed"
