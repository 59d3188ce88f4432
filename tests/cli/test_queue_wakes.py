"""A local sweep's queue starts the next trial as the running one's supervisor exits, not at the next poll tick, and
the CLI following a sweep notices the queue's exit the same way (issue 30: a tick slept after each trial adds up
over a sweep of short trials; ``bench.warm_sweep`` measures the sweep)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_kit import invoke, stand_in_supervisors, tiny_sweep

import tfcli.local.folder_watch
import tfcli.local.follow
import tfcli.local.processes
import tfcli.local.queue
from tfcli.local.folder_watch import FolderWatch
from tfcli.local.follow import wait_a_tick
from tfcli.local.processes import sleep_until_one_ends
from tfcli.local.queue import Outcomes

LONG_TICK = 120.0  # far longer than anything here takes: a wait that sits it out fails the elapsed-time check


def sleeper(seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


def test_the_sleep_ends_as_the_first_child_exits() -> None:
    slow, quick = sleeper(60), sleeper(0.2)
    try:
        began = time.monotonic()
        sleep_until_one_ends([slow, quick], LONG_TICK)
        assert time.monotonic() - began < 30
        assert quick.wait(timeout=5) == 0 and slow.poll() is None
    finally:
        slow.kill()
        slow.wait()


def test_a_reaped_child_is_not_waited_on_and_does_not_cut_the_tick_short() -> None:
    """The queue keeps a trial whose supervisor it reaped while an orphaned trainer still holds the results: its
    pid may be another process's by then, and a wait that returned at once for it would spin the queue."""
    done = sleeper(0)
    done.wait()
    began = time.monotonic()
    sleep_until_one_ends([done], 0.3)
    assert time.monotonic() - began >= 0.3


def test_following_a_sweep_waits_for_its_queue_not_for_the_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tfcli.local.follow, "POLL_SECONDS", LONG_TICK)
    queue = sleeper(0.2)
    began = time.monotonic()
    wait_a_tick(queue, ticks=2)
    assert time.monotonic() - began < 30 and queue.returncode == 0


WAITS_ITS_TURN = """
import time
from trainer.ahead import hold_file, holding
held = hold_file()
while held is not None and holding(held):  # a trial started ahead of its turn trains once released (trainer/ahead.py)
    time.sleep(0.01)
"""

FAKE_SUPERVISOR = (
    WAITS_ITS_TURN
    + """
import json, sys, time
from pathlib import Path
time.sleep(0.2)
results = Path(sys.argv[2]) / "results"
results.mkdir(parents=True, exist_ok=True)
(results / "result.json").write_text(json.dumps({"status": "completed"}))
"""
)


def test_the_queue_starts_the_next_trial_as_one_ends(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four trials, each a stand-in supervisor that writes a completed result after 0.2 s, under a poll tick of 30 s:
    the queue gets through them in seconds only if it wakes when a supervisor exits (else in two minutes)."""
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr

    stand_in_supervisors(monkeypatch, FAKE_SUPERVISOR)
    monkeypatch.setattr(tfcli.local.queue, "POLL_SECONDS", 30.0)
    began = time.monotonic()
    assert tfcli.local.queue.run_queue(lab / "experiments" / "tiny", 1) == 0
    assert time.monotonic() - began < 20
    trials = sorted((lab / "experiments").glob("tiny-*/results/result.json"))
    assert [json.loads(path.read_text())["status"] for path in trials] == ["completed"] * 4


LINGERING_SUPERVISOR = (
    WAITS_ITS_TURN
    + """
import json, sys, time
from pathlib import Path
root = Path(sys.argv[2])
(root / "started").write_text(repr(time.monotonic()))
results = root / "results"
results.mkdir(parents=True, exist_ok=True)
time.sleep(0.2)
temporary = results / ".result.json.tmp"
temporary.write_text(json.dumps({"status": "completed"}))
temporary.rename(results / "result.json")  # as trainer/results.py writes it
time.sleep(3.0)  # as a trainer draws its curve and exits, and its supervisor records the exit
(root / "exited").write_text(repr(time.monotonic()))
"""
)


def test_a_trial_that_wrote_its_result_frees_its_slot_before_it_exits(
    lab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--parallel 1``, each stand-in lingering 3 s after its ``result.json``: each next trial starts before the one
    before has exited, woken by the file (the tick is 30 s), and every exit is still waited for."""
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr

    stand_in_supervisors(monkeypatch, LINGERING_SUPERVISOR)
    monkeypatch.setattr(tfcli.local.queue, "POLL_SECONDS", 30.0)
    assert tfcli.local.queue.run_queue(lab / "experiments" / "tiny", 1) == 0
    trials = sorted((lab / "experiments").glob("tiny-*/started"), key=lambda path: float(path.read_text()))
    assert len(trials) == 4
    for earlier, later in itertools.pairwise(trials):
        exited = float((earlier.parent / "exited").read_text())  # the queue waited for every exit
        assert float(later.read_text()) < exited - 1.0, (
            f"{later.parent.name} started only as {earlier.parent.name} exited"
        )


def test_an_adopted_or_resumed_trials_old_result_does_not_free_its_slot(lab: Path) -> None:
    """The result there at launch (a paused trial resumed) is not the run's outcome: only a new file is."""
    from tfcli.experiments.store import ExperimentDir

    trial = ExperimentDir(lab / "experiments" / "t")
    trial.results.mkdir(parents=True)
    trial.result_file.write_text('{"status": "paused"}')
    with FolderWatch() as watch:
        outcomes = Outcomes(watch)
        assert not outcomes.written(trial)  # never launched here: adopted, it holds its slot until it exits
        outcomes.launching(trial)
        assert not outcomes.written(trial)
        trial.result_file.unlink()  # the trainer withdraws the stale one as it starts
        assert not outcomes.written(trial)
        (trial.results / ".tmp").write_text('{"status": "completed"}')
        (trial.results / ".tmp").rename(trial.result_file)
        assert outcomes.written(trial)
        outcomes.ended(trial)
        assert not outcomes.written(trial)


def test_a_file_renamed_into_a_watched_folder_ends_the_sleep(tmp_path: Path) -> None:
    with FolderWatch() as watch:
        assert watch.fd is not None  # Linux: inotify is there
        wd = watch.add(tmp_path)
        writer = subprocess.Popen(
            [sys.executable, "-c", f"import time, os; time.sleep(0.3); open('{tmp_path}/x', 'w').close()"]
        )
        began = time.monotonic()
        sleep_until_one_ends([], LONG_TICK, watch.fd)
        assert time.monotonic() - began < 30
        writer.wait()
        watch.drain()
        watch.forget(wd)
        watch.drain()  # the kernel's IN_IGNORED for the removed watch
        (tmp_path / "y").write_text("")  # no longer watched: the sleep lasts its tick
        began = time.monotonic()
        sleep_until_one_ends([], 0.3, watch.fd)
        assert time.monotonic() - began >= 0.3


def test_without_inotify_the_queue_waits_on_exits_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def no_libc(*_: object, **__: object) -> None:
        raise OSError("no libc here")

    monkeypatch.setattr(tfcli.local.folder_watch.ctypes, "CDLL", no_libc)
    with FolderWatch() as watch:
        assert watch.fd is None and watch.add(tmp_path) is None
        watch.drain()
        quick = sleeper(0.2)
        began = time.monotonic()
        sleep_until_one_ends([quick], LONG_TICK, watch.fd)
        assert time.monotonic() - began < 30
