"""The local queue starts an early-stopped sweep's trials in the order that fills rungs early, by the one rule a GKE
sweep's workers claim by (``trainer.sweep_queue.fill_order``), not a copy of it (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest

import trainer.sweep_queue
from tfcli.experiments.store import ExperimentDir
from tfcli.local.waiting import interleaved


def names(trials: list[ExperimentDir]) -> list[str]:
    return [trial.name for trial in trials]


def test_the_queue_takes_each_combinations_first_seed_first(tmp_path: Path) -> None:
    trials = [ExperimentDir(tmp_path / f"lr-asha-{k}") for k in (5, 0, 3, 1, 4, 2)]
    assert names(interleaved(trials, 2)) == [f"lr-asha-{k}" for k in (0, 2, 4, 1, 3, 5)]
    assert names(interleaved(trials, 3)) == [f"lr-asha-{k}" for k in (0, 3, 1, 4, 2, 5)]


def test_the_queue_order_is_the_workers_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Change the workers' rule and the local queue's order changes with it: one function decides both."""
    trials = [ExperimentDir(tmp_path / f"s-{k}") for k in range(4)]
    monkeypatch.setattr(trainer.sweep_queue, "fill_order", lambda indexes, seeds: sorted(indexes, reverse=True))
    assert names(interleaved(trials, 2)) == ["s-3", "s-2", "s-1", "s-0"]
