"""A sweep's local life through the CLI, with real (tiny) TensorForce trials: created and validated, queued one at a
time, the queue killed in the middle (finished trials kept, the running one adopted, the rest resumed), paused and
resumed, then compared (``list -s --json``) and plotted (``plot -s``)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from cli_kit import invoke, states, sweep_status, tiny_sweep, wait_for

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")


def test_queue_crash_pause_resume_then_compare(lab: Path) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep(target_return=15))
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stderr
    assert "2 combination(s) x 2 seed(s) = 4 trials (tiny-0 .. tiny-3)" in stdout
    assert (lab / "stacks" / "Pulumi.tiny.yaml").is_file() and not (lab / "stacks" / "Pulumi.tiny-0.yaml").exists()

    code, stdout, stderr = invoke("experiment", "start", "-s", "tiny", "--detach", "--parallel", "1")
    assert code == 0, stderr
    wait_for(lambda: states("tiny")[0] in ("completed", "failed"), what="the first trial to end", timeout=240)
    assert states("tiny")[0] == "completed", (lab / "experiments" / "tiny-0" / "logs" / "trainer.log").read_text()
    first_result = lab / "experiments" / "tiny-0" / "results" / "result.json"
    kept = first_result.stat().st_mtime_ns, (first_result.parent / "progress.jsonl").read_bytes()
    queue_pid = json.loads((lab / "experiments" / "tiny" / "run.json").read_text())["local"]["pid"]
    os.kill(queue_pid, signal.SIGKILL)  # the queue crashes; a trial it launched keeps training in its own session
    wait_for(lambda: sweep_status("tiny")["state"] == "interrupted", what="the sweep to read as interrupted")

    code, _, stderr = invoke("experiment", "start", "-s", "tiny", "--detach", "--parallel", "1")
    assert code == 0, stderr
    wait_for(lambda: "running" in states("tiny")[2:], what="a later trial to run", timeout=240)
    code, stdout, stderr = invoke("experiment", "pause", "-s", "tiny")
    assert code == 0, stderr
    paused = sweep_status("tiny")
    assert paused["state"] == "paused" and "running" not in states("tiny")

    code, stdout, stderr = invoke("experiment", "resume", "-s", "tiny")  # waits, as a local start does
    assert code == 0, stdout + stderr
    final = sweep_status("tiny")
    assert final["state"] == "completed"
    assert [(t["state"], t["timesteps"]) for t in final["trials"]] == [("completed", 300)] * 4
    assert (first_result.stat().st_mtime_ns, (first_result.parent / "progress.jsonl").read_bytes()) == kept
    log = (lab / "experiments" / "tiny" / "logs" / "queue.log").read_text()
    assert log.count("tiny-0: started") == 1  # never run twice
    assert "1 of 4 trials already completed" in log or "2 of 4 trials already completed" in log

    code, stdout, stderr = invoke("experiment", "list", "-s", "tiny", "--json")
    assert code == 0, stderr
    rows = json.loads(stdout)
    assert [row["label"] for row in rows] == ["learning_rate=0.001", "learning_rate=0.003"]
    assert all(row["completed"] == 2 and row["ci_low"] <= row["iqm"] <= row["ci_high"] for row in rows)
    assert sum(row["best"] for row in rows) == 1
    code, stdout, stderr = invoke("experiment", "plot", "-s", "tiny", "-o", "tiny.png")
    assert code == 0, stderr
    assert (lab / "tiny.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, stdout, _ = invoke("experiment", "status", "-e", "tiny-2", "--json")  # a trial is an ordinary experiment
    assert code == 0 and json.loads(stdout)["state"] == "completed"


def test_bad_trials_are_refused_before_anything_is_written(lab: Path) -> None:
    code, stdout, stderr = invoke(
        "experiment", "sweep", "-f", "cartpole-ppo", "-n", "bad", "--set", "run_mode=single,turbo",
        "--set", "agent.learnin_rate=1e-3", "--no-build",
    )  # fmt: skip
    assert code == 2, stdout + stderr
    assert "trial bad-0 (run_mode=single learnin_rate=0.001, seed 1): agent.learnin_rate: not an argument" in stderr
    assert "trial bad-1 (run_mode=turbo learnin_rate=0.001, seed 1): run_mode: got 'turbo'" in stderr
    assert "Traceback" not in stderr
    assert not any((lab / "experiments").iterdir()) and not any((lab / "stacks").iterdir())
    code, _, stderr = invoke("experiment", "status", "-e", "x", "-s", "y")
    assert code == 2 and "exactly one of -e NAME" in stderr


def test_sweep_names_do_not_clash_and_a_changed_sweep_needs_restart(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sweep = ("experiment", "sweep", "-f", "cartpole-ppo", "-n", "ok", "--no-build")
    code, _, stderr = invoke(*sweep, "--set", "agent.batch_size=8")
    assert code == 0, stderr
    assert invoke(*sweep, "--set", "agent.batch_size=8")[0] == 0  # the same sweep again: reused
    written = sorted(path.relative_to(lab) for path in lab.rglob("*"))
    built: list[object] = []
    monkeypatch.setattr("tfcli.experiments.preflight.build_experiments", lambda pairs: built.extend(pairs) or [])
    code, _, stderr = invoke(*sweep[:-1], "--set", "agent.batch_size=16")  # with the build: the clash comes first
    assert code == 2 and "-n/name: sweep 'ok' already exists with a different definition" in stderr, stderr
    assert "hint: pick another name with -n, or start over with --restart" in stderr
    assert built == [] and sorted(path.relative_to(lab) for path in lab.rglob("*")) == written
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "ok")
    assert code == 2 and "is a sweep's name" in stderr
    code, _, stderr = invoke("experiment", "status", "-s", "nope")
    assert code == 2 and "no sweep named 'nope' in this project (known: ok)" in stderr


def test_logs_of_a_sweep_honour_tail(lab: Path) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep(target_return=15))
    assert invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")[0] == 0
    code, _, stderr = invoke("experiment", "logs", "-s", "tiny", "--tail", "2")
    assert code == 1 and "sweep 'tiny' has no queue log yet" in stderr
    # the queue's log as the queue writes it (tfcli/local/queue.py appends a line per event)
    log = lab / "experiments" / "tiny" / "logs" / "queue.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(f"tiny-{k}: started\ntiny-{k}: completed\n" for k in range(4)))
    code, stdout, stderr = invoke("experiment", "logs", "-s", "tiny", "--tail", "2")
    assert code == 0, stderr
    assert stdout.splitlines() == [
        "tiny-3: started",
        "tiny-3: completed",
        "(each trial's own log: `tfcli experiment logs -e tiny-K`)",
    ]
    code, stdout, _ = invoke("experiment", "logs", "-s", "tiny", "--tail", "0")
    assert code == 0 and stdout.splitlines() == ["(each trial's own log: `tfcli experiment logs -e tiny-K`)"]
    code, stdout, _ = invoke("experiment", "logs", "-s", "tiny")
    assert code == 0 and len(stdout.splitlines()) == 9
