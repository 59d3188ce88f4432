"""A full disk, corrupt checkpoints and a damaged progress line: the trainer says what happened in one line and
never loses what it had (issue 21).

The full disk is real: a small tmpfs (``small_disk``), filled up just before checkpoint 2 by a file that takes every
free byte, so that TensorFlow itself fails to write (``ResourceExhaustedError``). The other runs are tiny PPO runs on
CartPole in this process, each on a copy of one finished run.
"""

from __future__ import annotations

import errno
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from disk_kit import fill_disk
from trainer_testkit import ROOT, cartpole, cartpole_spec, complete_checkpoints, read_progress, read_result

import trainer.__main__ as entry
from trainer.config import RunConfig
from trainer.curve import plot_learning_curve
from trainer.hooks.progress_log import read_episodes, rewind
from trainer.kernel.errors import TfcliError
from trainer.kernel.state import Episode
from trainer.run import run

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

# The budget and saver of this module's runs, finished_run's too (trainer_testkit).
TINY = {"total_timesteps": 400, "saver_frequency": "100t", "summary_frequency": "100t"}

# `python -m trainer run ...`, but the disk fills up the moment checkpoint 2 starts (checkpoint 1 is complete).
FILLS_THE_DISK_AT_CHECKPOINT_2 = """
import sys
sys.path.insert(0, sys.argv.pop(1))
disk = sys.argv.pop(1)
from pathlib import Path
from disk_kit import fill_disk
from trainer import checkpoints
from trainer.__main__ import main
save = checkpoints.CheckpointStore.save
def save_on_a_full_disk(self, agent, counters):
    if (self.directory / "1" / checkpoints.MARKER).is_file():
        fill_disk(Path(disk))
    return save(self, agent, counters)
checkpoints.CheckpointStore.save = save_on_a_full_disk
sys.exit(main(sys.argv[1:]))
"""


def trainer(*arguments: str, script: str | None = None) -> subprocess.CompletedProcess[str]:
    head = ["-c", script] if script else ["-m", "trainer"]
    return subprocess.run(
        [sys.executable, *head, *arguments], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_disk_full_at_a_checkpoint_is_one_line_leaves_no_temporary_file_and_resumes_exactly(
    small_disk: Any,
) -> None:
    disk = small_disk("16m")
    spec = disk / "experiment.yaml"
    spec.write_text(yaml.safe_dump(cartpole_spec(**TINY)))
    output = disk / "out"

    failed = trainer(
        str(ROOT / "tests"),
        str(disk),
        "run",
        "--spec",
        str(spec),
        "--output",
        str(output),
        script=(FILLS_THE_DISK_AT_CHECKPOINT_2),
    )
    assert failed.returncode == 1, failed.stderr
    assert "Traceback" not in failed.stderr and "ResourceExhaustedError" not in failed.stderr, failed.stderr
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: saving checkpoint 2 failed: No space left on device: {output}/checkpoints/2 ("), (
        last
    )
    assert last.endswith("free of 16.0 MiB on that disk)"), last
    # nothing half-written is left: no unfinished checkpoint, no temporary file of TensorFlow's or ours
    assert sorted(p.name for p in (output / "checkpoints").iterdir()) == ["1"]
    leftovers = [p for p in output.rglob("*") if ".tmp" in p.name or "_temp" in p.name or "tempstate" in p.name]
    assert leftovers == []
    assert [c["timesteps"] for c in complete_checkpoints(output)] == [100]

    (disk / "filler").unlink()  # space again: the same command resumes from checkpoint 1 and ends exactly
    resumed = trainer("run", "--spec", str(spec), "--output", str(output))
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from checkpoint 1: 100 timesteps" in resumed.stderr
    result, progress = read_result(output), read_progress(output)
    assert (result["status"], result["timesteps"]) == ("completed", 400)
    assert [line["episode"] for line in progress] == list(range(1, result["episodes"] + 1))
    assert complete_checkpoints(output)[-1]["timesteps"] == 400


@pytest.mark.parametrize("damage", ["same-size garbage", "truncated"])
def test_when_every_checkpoint_is_corrupt_the_run_fails_and_result_json_keeps_its_counts(
    copy_of_finished_run: Path, damage: str
) -> None:
    output = copy_of_finished_run
    before = read_result(output)
    progress = (output / "progress.jsonl").read_text()
    for data in (output / "checkpoints").glob("*/agent-*.data-*"):
        size = data.stat().st_size
        data.write_bytes(b"\xff" * size if damage == "same-size garbage" else b"\xff" * (size // 2))
    with pytest.raises(TfcliError, match="none of the checkpoints in the output folder loads"):
        run(RunConfig(experiment=cartpole(**TINY), output=output))
    after = read_result(output)
    assert after["status"] == "failed" and "none of the checkpoints" in after["error"]
    assert {key: after[key] for key in ("timesteps", "episodes", "updates", "wall_seconds")} == {
        key: before[key] for key in ("timesteps", "episodes", "updates", "wall_seconds")
    }
    assert before["timesteps"] == 400 and before["episodes"] > 0
    assert (output / "progress.jsonl").read_text() == progress  # not started over on top of it
    assert len(list((output / "checkpoints").iterdir())) == 3  # nor were the checkpoints pruned


def test_a_damaged_line_in_progress_jsonl_is_skipped_and_reported_not_the_end_of_the_file(
    copy_of_finished_run: Path, caplog: pytest.LogCaptureFixture
) -> None:
    output = copy_of_finished_run
    path = output / "progress.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) > 10
    damaged = '{"worker": 0, "episode": 5, "timest\x00\x00\x00\n'
    path.write_text("".join(lines[:4]) + damaged + "".join(lines[5:]))
    with caplog.at_level(logging.WARNING, logger="trainer"):
        result = run(RunConfig(experiment=cartpole(**TINY), output=output))  # resumes at 400: the budget is spent
    assert result.status == "completed"
    assert path.read_text() == "".join(lines[:4] + lines[5:])  # every intact record after the damage is kept
    assert (output / "progress.jsonl.damaged").read_text() == damaged
    assert "progress.jsonl: skipping 1 damaged line(s) (line 5); kept in progress.jsonl.damaged" in caplog.text


def episode(number: int) -> Episode:
    return Episode(worker=0, episode=number, timesteps=10 * number, length=10, wall_seconds=0.1, episode_return=1.0)


def test_rewinding_drops_only_the_episodes_past_the_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    lines = [json.dumps(episode(n).as_json()) + "\n" for n in range(1, 31)]
    lines[4] = "garbage\n"  # episode 5's line is damaged
    path.write_text("".join(lines) + '{"worker": 0, "epis')  # and the run was killed mid-line after episode 30
    kept = rewind(path, 27)  # the checkpoint counted 27 episodes: 28 to 30 are played again
    assert [e.episode for e in kept] == [n for n in range(1, 28) if n != 5]
    assert path.read_text() == "".join(lines[:4] + lines[5:27])
    assert (tmp_path / "progress.jsonl.damaged").read_text() == "garbage\n"
    assert read_episodes(path) == kept


def test_a_learning_curve_that_does_not_fit_leaves_no_temporary_file(small_disk: Any) -> None:
    disk = small_disk("1m")
    fill_disk(disk)
    with pytest.raises(OSError, match="No space left on device"):
        plot_learning_curve([episode(n) for n in range(1, 50)], disk / "learning_curve.png", title="full")
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_the_trainer_prints_an_io_error_in_one_line_and_the_traceback_only_when_debugging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(arguments: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "progress.jsonl"))

    monkeypatch.setattr(entry, "_run", full)
    monkeypatch.delenv("TFCLI_DEBUG", raising=False)
    assert entry.main(["run", "--spec", "x.yaml", "--output", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: training failed: No space left on device: {tmp_path}/progress.jsonl (")
    assert err.endswith(" on that disk)\n") and err.count("\n") == 1
    monkeypatch.setenv("TFCLI_DEBUG", "1")
    with pytest.raises(OSError, match="No space left"):
        entry.main(["run", "--spec", "x.yaml", "--output", str(tmp_path)])
