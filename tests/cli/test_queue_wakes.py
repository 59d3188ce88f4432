"""A local sweep's queue starts the next trial as the running one's supervisor exits, not at the next poll tick, and
the CLI following a sweep notices the queue's exit the same way (issue 30: a tick slept after each trial adds up
over a sweep of short trials; ``bench.warm_sweep`` measures the sweep)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_kit import invoke, tiny_sweep

import tfcli.local.follow
import tfcli.local.processes
import tfcli.local.queue
from tfcli.local.follow import wait_a_tick
from tfcli.local.processes import sleep_until_one_ends
from tfcli.local.standing import OFF, WARM_VARIABLE

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


FAKE_SUPERVISOR = """
import json, sys, time
from pathlib import Path
time.sleep(0.2)
results = Path(sys.argv[2]) / "results"
results.mkdir(parents=True, exist_ok=True)
(results / "result.json").write_text(json.dumps({"status": "completed"}))
"""


def test_the_queue_starts_the_next_trial_as_one_ends(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four trials, each a stand-in supervisor that writes a completed result after 0.2 s, under a poll tick of 30 s:
    the queue gets through them in seconds only if it wakes when a supervisor exits (else in two minutes)."""
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, _, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr

    def stand_in(module: str, arguments: list[str], log_file: Path) -> subprocess.Popen[bytes]:
        log_file.parent.mkdir(parents=True, exist_ok=True)  # its command line names the module and the folder,
        return subprocess.Popen([sys.executable, "-c", FAKE_SUPERVISOR, module, *arguments])  # as alive() checks

    monkeypatch.setattr(tfcli.local.processes, "spawn", stand_in)
    monkeypatch.setattr(tfcli.local.queue, "handle_stop_signals", lambda handler: None)  # pytest keeps its own
    monkeypatch.setattr(tfcli.local.queue, "POLL_SECONDS", 30.0)
    monkeypatch.setenv(WARM_VARIABLE, OFF)  # no warm trainer to start for stand-ins
    began = time.monotonic()
    assert tfcli.local.queue.run_queue(lab / "experiments" / "tiny", 1) == 0
    assert time.monotonic() - began < 20
    trials = sorted((lab / "experiments").glob("tiny-*/results/result.json"))
    assert [json.loads(path.read_text())["status"] for path in trials] == ["completed"] * 4
