"""Following a local experiment notices its supervisor's exit at once, not at the next poll tick (issue 30): a tick
of ``tfcli.local.follow.POLL_SECONDS`` slept after the run ended adds straight to the wall time of every
``experiment start --local``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

import tfcli.local.follow
from tfcli.experiments.store import ExperimentDir
from tfcli.local.follow import follow_experiment
from tfcli.runs.results import Started
from tfcli.runs.run import Run


class _OneExperiment:
    """The part of a :class:`Run` that following an experiment reads: its folder."""

    def __init__(self, folder: ExperimentDir) -> None:
        self.folder = folder

    def experiment(self) -> ExperimentDir:
        return self.folder


class _Seen:
    """A watcher that keeps what it was told."""

    def __init__(self) -> None:
        self.progress_calls: list[tuple[int, int, float | None]] = []

    def progress(self, timesteps: int, episodes: int, mean_return: float | None) -> None:
        self.progress_calls.append((timesteps, episodes, mean_return))

    def progress_detail(self, text: str) -> None:
        pass


def test_the_follower_returns_as_the_supervisor_exits_not_a_tick_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tfcli.local.follow, "POLL_SECONDS", 120.0)  # a tick far longer than the run
    folder = ExperimentDir(tmp_path / "quick")
    folder.results.mkdir(parents=True)
    (folder.results / "result.json").write_text('{"status": "completed", "timesteps": 200, "episodes": 7}')
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    started = Started(cast(Run, _OneExperiment(folder)), "local", launched=process)
    watcher = _Seen()
    began = time.monotonic()
    ended = follow_experiment(started, cast(Any, watcher))
    waited = time.monotonic() - began
    assert waited < 60.0  # it would have slept out the 120 s tick
    assert (ended.state, ended.exit_code, ended.process_code) == ("completed", 0, 0)
    assert watcher.progress_calls[-1] == (200, 7, None)  # the final numbers, read from result.json
