"""Checkpoints a crash cannot spoil, and a progress file that agrees with the checkpoint a run resumes from.

The agent here is a stand-in that writes and reads a file the way TensorForce's checkpoints do (a real agent's
save and restore are covered by test_compat.py and the end-to-end runs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trainer.checkpoints import MARKER, CheckpointStore
from trainer.hooks.progress_log import read_episodes, rewind
from trainer.kernel.errors import TfcliError
from trainer.kernel.state import Episode


class FileAgent:
    """Saves ``weights`` into ``agent-1.data``; restores it back (and fails on a file it cannot read)."""

    def __init__(self, weights: str = "") -> None:
        self.weights = weights
        self.closed = False

    def save(self, directory: str, filename: str, format: str) -> str:
        (Path(directory) / f"{filename}-1.data").write_text(self.weights)
        return str(Path(directory) / f"{filename}-1")

    def restore(self, directory: str, filename: str, format: str) -> None:
        text = (Path(directory) / f"{filename}.data").read_text()
        if not text.startswith("weights"):
            raise ValueError("cannot parse the checkpoint")
        self.weights = text

    def close(self) -> None:
        self.closed = True


def counters(timesteps: int) -> dict[str, Any]:
    return {"timesteps": timesteps, "episodes": timesteps // 10, "updates": 0, "wall_seconds": 1.5}


def test_resume_takes_the_newest_complete_checkpoint_and_skips_one_a_crash_cut_short(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    store.save(FileAgent("weights at 100"), counters(100))
    store.save(FileAgent("weights at 200"), counters(200))
    # killed while writing checkpoint 3: TensorForce's files are there, the marker is not
    (tmp_path / "checkpoints" / "3").mkdir()
    (tmp_path / "checkpoints" / "3" / "agent-1.data").write_text("weights at 3")
    agent, checkpoint = store.resume(FileAgent)
    assert checkpoint is not None and checkpoint.state["timesteps"] == 200 and agent.weights == "weights at 200"
    # the next save goes to a fresh folder, and the unfinished one is cleaned away
    assert store.save(agent, counters(300)).number == 4
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["1", "2", "4"]


def test_a_checkpoint_whose_files_changed_after_marking_is_not_trusted(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    store.save(FileAgent("weights at 100"), counters(100))
    newest = store.save(FileAgent("weights at 200"), counters(200))
    (newest.folder / "agent-1.data").write_text("weights at 2")  # truncated by a broken copy
    assert [c.state["timesteps"] for c in store.complete()] == [100]


def test_resume_falls_back_to_an_older_checkpoint_that_loads(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    store.save(FileAgent("weights at 100"), counters(100))
    store.save(FileAgent("garbage of the same length"), counters(200))
    made: list[FileAgent] = []

    def make() -> FileAgent:
        made.append(FileAgent())
        return made[-1]

    agent, checkpoint = store.resume(make)
    assert checkpoint is not None and checkpoint.state["timesteps"] == 100 and agent.weights == "weights at 100"
    assert made[0].closed and agent is made[1]  # a failed restore's agent is thrown away


def test_when_no_checkpoint_loads_the_run_fails_instead_of_starting_over(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    store.save(FileAgent("not loadable"), counters(100))
    with pytest.raises(TfcliError, match="none of the checkpoints"):
        store.resume(FileAgent)


def test_only_the_newest_few_checkpoints_are_kept(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints", keep=2)
    for timesteps in (100, 200, 300, 400):
        store.save(FileAgent(f"weights at {timesteps}"), counters(timesteps))
    assert [c.number for c in store.complete()] == [4, 3]
    marker = json.loads((tmp_path / "checkpoints" / "4" / MARKER).read_text())
    assert set(marker["files"]) == {"agent-1.data", "state.json"}


def episode(number: int) -> Episode:
    return Episode(worker=0, episode=number, timesteps=10 * number, length=10, wall_seconds=0.1, episode_return=10.0)


def test_progress_is_cut_back_to_the_checkpoints_episodes_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    lines = [json.dumps(episode(n).as_json()) for n in range(1, 8)]
    path.write_text("\n".join(lines) + '\n{"worker": 0, "epis')  # killed mid-line after episode 7
    kept = rewind(path, 5)  # the checkpoint counted 5 episodes: 6 and 7 will be played again
    assert [e.episode for e in kept] == [1, 2, 3, 4, 5]
    assert path.read_text() == "\n".join(lines[:5]) + "\n"
    assert read_episodes(path) == kept
