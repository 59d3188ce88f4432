"""A local sweep's queue starts the next trial ahead of its turn while every slot trains (``tfcli/local/ahead.py``):
it is launched before the trial in its way has written its outcome, trains only after that, in the queue's order,
shows ``ready`` meanwhile, and no hold is left behind. The trial's own side (it traces, waits, then trains what it
trains alone) is tests/trainer/test_ahead.py; a real sweep's, tests/cli/test_sweep_warm.py."""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

import pytest
from cli_kit import invoke, stand_in_supervisors, tiny_sweep

import tfcli.local.processes
import tfcli.local.queue
from tfcli.experiments.store import ExperimentDir
from tfcli.local import experiments
from tfcli.local.ahead import Ahead, held_path

TRAINS_IN_ITS_TURN = """
import json, sys, time
from pathlib import Path
from trainer.ahead import hold_file, holding
root = Path(sys.argv[2])
(root / "launched").write_text(repr(time.monotonic()))
held = hold_file()
while held is not None and holding(held):
    time.sleep(0.01)
(root / "trains").write_text(repr(time.monotonic()))
time.sleep(0.6)
results = root / "results"
results.mkdir(parents=True, exist_ok=True)
(results / ".result.json.tmp").write_text(json.dumps({"status": "completed"}))
(root / "wrote").write_text(repr(time.monotonic()))
(results / ".result.json.tmp").rename(results / "result.json")
"""


def moment(trial: Path, what: str) -> float:
    return float((trial / what).read_text())


def test_the_next_trial_is_launched_while_one_trains_and_trains_only_in_its_turn(
    lab: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    stand_in_supervisors(monkeypatch, TRAINS_IN_ITS_TURN)
    assert tfcli.local.queue.run_queue(lab / "experiments" / "tiny", 1) == 0
    trials = [lab / "experiments" / f"tiny-{index}" for index in range(4)]
    assert sorted(trials, key=lambda trial: moment(trial, "trains")) == trials  # the queue's order
    for earlier, later in itertools.pairwise(trials):
        assert moment(later, "launched") < moment(earlier, "wrote"), f"{later.name} was not started ahead"
        assert moment(later, "trains") > moment(earlier, "wrote"), f"{later.name} trained before its turn"
    assert not any(held_path(ExperimentDir(trial)).exists() for trial in trials)
    log = capsys.readouterr().out  # the queue's log
    for trial in trials[1:]:
        assert f"{trial.name}: started (pid" in log and f"{trial.name}: its turn (started ahead, ready)" in log, log


def test_no_trial_starts_ahead_where_the_slots_take_every_core(
    lab: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """At ``--parallel 2`` on 2 cores a trial getting ready would take a training trial's core (11% slower sweeps,
    bench/README.md): each trial is launched as a slot frees, never earlier."""
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    stand_in_supervisors(monkeypatch, TRAINS_IN_ITS_TURN)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert tfcli.local.queue.run_queue(lab / "experiments" / "tiny", 2) == 0
    assert "ahead" not in capsys.readouterr().out
    trials = [lab / "experiments" / f"tiny-{index}" for index in range(4)]
    assert all(moment(trial, "launched") <= moment(trial, "trains") < moment(trial, "launched") + 1 for trial in trials)
    first_written = min(moment(trial, "wrote") for trial in trials[:2])
    assert all(moment(trial, "launched") > first_written for trial in trials[2:])


def test_a_held_trial_reads_ready_until_its_queue_releases_it(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    stand_in_supervisors(monkeypatch, TRAINS_IN_ITS_TURN.replace("time.sleep(0.6)", "time.sleep(60)"))
    trial = ExperimentDir(lab / "experiments" / "tiny-1")
    ahead = Ahead()
    process = experiments.launch(trial, env=ahead.hold(trial))
    try:
        assert experiments.status(trial).state == "ready"
        ahead.release()
        assert experiments.status(trial).state == "running"
        deadline = time.monotonic() + 30
        while not (trial.root / "trains").exists():
            assert time.monotonic() < deadline, "the released trial did not go on"
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
