"""What ``status`` reads off ``progress.jsonl`` while a run goes on: counts, mean return and the recent speed."""

from __future__ import annotations

import json
from pathlib import Path

from tfcli.experiments.progress import ProgressReader


def line(episode: int, timesteps: int, wall: float, ret: float = 1.0) -> str:
    record = {"worker": 0, "episode": episode, "timesteps": timesteps, "return": ret, "length": 5, "wall_seconds": wall}
    return json.dumps(record) + "\n"


def test_the_speed_is_that_of_the_recent_episodes_not_of_the_whole_run(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    # 100 slow episodes (10 timesteps/s, before DQN's replay starts, say), then 100 at 50 timesteps/s
    slow = [line(i, 10 * i, float(i)) for i in range(1, 101)]
    fast = [line(100 + i, 1000 + 50 * i, 100.0 + i) for i in range(1, 101)]
    path.write_text("".join(slow + fast[:-1]) + fast[-1][:20])  # the last line half-written
    reader = ProgressReader(path)
    reader.read()
    assert reader.episodes == 199 and reader.timesteps == 1000 + 50 * 99
    assert reader.wall_seconds == 199.0
    # the window is the last 100 finished episodes: 99 fast ones and the last slow one
    assert reader.timesteps_per_second == (1000 + 50 * 99 - 1000) / (199.0 - 100.0)
    with open(path, "a") as handle:
        handle.write(fast[-1][20:])
    reader.read()
    assert reader.timesteps_per_second == 50.0 and reader.mean_return == 1.0


def test_no_speed_before_two_episodes(tmp_path: Path) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_text(line(1, 10, 1.0))
    reader = ProgressReader(path)
    reader.read()
    assert reader.timesteps_per_second is None and reader.wall_seconds == 1.0
