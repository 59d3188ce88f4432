"""``resume`` on this machine with real (tiny) TensorForce runs: an interrupted sweep finished (queue and trials
killed), failed trials left failed then retried (``--retry-failed``), and completed runs extended
(``--total-timesteps``) — each extended run trains exactly the rest of its budget from its final checkpoint, its
curve going on from its last episode; and the flags' bad input (exit 2, naming the flag)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import invoke, states, sweep_status, tiny_spec, tiny_sweep, wait_for

from trainer.output_lock import holder

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("warm_trainers")]  # real trainings, trainers forked warm

TWO_TRIALS = tiny_sweep("duo", 300, seeds=None)
LONGER = 3000
ONE = tiny_spec("solo", 300)


def results(lab: Path, name: str) -> Path:
    return lab / "experiments" / name / "results"


def episodes(lab: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (results(lab, name) / "progress.jsonl").read_text().splitlines()]


def result(lab: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((results(lab, name) / "result.json").read_text()))


def assert_continued(before: list[dict[str, Any]], after: list[dict[str, Any]], budget: int) -> None:
    """The curve goes on: the old episodes kept as they were, the new ones numbered on from the last, timesteps
    growing and never past the budget."""
    assert after[: len(before)] == before and len(after) > len(before)
    assert [line["episode"] for line in after] == list(range(1, len(after) + 1))  # none re-run, none lost
    steps = [line["timesteps"] for line in after]
    assert steps == sorted(steps) and steps[len(before)] > before[-1]["timesteps"] and steps[-1] <= budget


def said(stdout: str, stderr: str) -> str:
    return " ".join((stdout + stderr).split())


def test_sweep_retry_failed_then_extend(lab: Path) -> None:
    (lab / "duo.yaml").write_text(TWO_TRIALS)
    assert invoke("experiment", "sweep", "-f", "duo.yaml", "--no-build")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-s", "duo", "--parallel", "1")
    assert code == 0, stdout + stderr
    assert states("duo") == ["completed", "completed"]

    # Trial 1 failed (as a crash past its checkpoint leaves it): a plain resume leaves it failed and says so.
    failed = {**result(lab, "duo-1"), "status": "failed", "error": "RuntimeError: boom"}
    (results(lab, "duo-1") / "result.json").write_text(json.dumps(failed))
    code, stdout, stderr = invoke("experiment", "resume", "-s", "duo")
    assert code == 0, stdout + stderr
    assert "1 failed trial(s) left as they are (duo-1); --retry-failed runs them again" in said(stdout, stderr)
    assert states("duo") == ["completed", "failed"]

    # Extended while trial 1 is failed: trial 0 trains on to exactly 500, the queue leaves trial 1 alone.
    before = {name: episodes(lab, name) for name in ("duo-0", "duo-1")}
    code, stdout, stderr = invoke("experiment", "resume", "-s", "duo", "--total-timesteps", "500")
    assert code == 0, stdout + stderr
    assert "budget raised to timesteps 500: 1 finished run(s) continue" in said(stdout, stderr)
    assert states("duo") == ["completed", "failed"] and result(lab, "duo-1")["timesteps"] == 300
    assert result(lab, "duo-0")["timesteps"] == 500  # exactly the rest: 200 more
    assert_continued(before["duo-0"], episodes(lab, "duo-0"), 500)
    log = (lab / "experiments" / "duo" / "logs" / "queue.log").read_text()
    assert "left as they ended: duo-1" in log and "duo-1: started" not in log.split("left as they ended")[-1]

    # --retry-failed: trial 1 again, from its last checkpoint (300 timesteps) to the sweep's budget, now 500.
    code, stdout, stderr = invoke("experiment", "resume", "-s", "duo", "--retry-failed")
    assert code == 0, stdout + stderr
    assert states("duo") == ["completed", "completed"] and result(lab, "duo-1")["timesteps"] == 500
    assert_continued(before["duo-1"], episodes(lab, "duo-1"), 500)
    log = (lab / "experiments" / "duo" / "logs" / "queue.log").read_text()
    assert log.count("duo-1: started") == 2 and log.count("duo-0: started") == 2  # the first run, the extension
    for name in ("duo-0", "duo-1"):
        spec = yaml.safe_load((lab / "experiments" / name / "experiment.yaml").read_text())
        assert spec["total_timesteps"] == 500
    assert yaml.safe_load((lab / "experiments" / "duo" / "sweep.yaml").read_text())["base"]["total_timesteps"] == 500
    stack = yaml.safe_load((lab / "stacks" / "Pulumi.duo.yaml").read_text())
    assert stack["config"]["tfcli:sweep"]["base"]["total_timesteps"] == 500

    # Bad input, exit 2 naming the flag, before anything is written.
    code, stdout, stderr = invoke("experiment", "resume", "-s", "duo", "--total-timesteps", "500")
    assert code == 2 and "--total-timesteps: 500 is not above the 500 timesteps duo-0 reached" in said(stdout, stderr)
    code, stdout, stderr = invoke("experiment", "resume", "-s", "duo", "--episodes", "90")
    assert code == 2 and "--episodes: duo's budget is counted in timesteps" in said(stdout, stderr)
    code, stdout, stderr = invoke("experiment", "resume", "-s", "duo", "--include-pruned")
    assert code == 2 and "--include-pruned: extends pruned trials' budget" in said(stdout, stderr)
    assert yaml.safe_load((lab / "experiments" / "duo" / "sweep.yaml").read_text())["base"]["total_timesteps"] == 500


def test_resume_finishes_a_sweep_whose_queue_and_trials_were_killed(lab: Path) -> None:
    # 3,000 timesteps: after its first checkpoint (100) trial 0 has seconds of training left, so the kill below
    # always finds it running (with 300 it could complete between the poll that sees the checkpoint and the kill).
    (lab / "duo.yaml").write_text(TWO_TRIALS.replace("total_timesteps: 300", f"total_timesteps: {LONGER}"))
    assert invoke("experiment", "sweep", "-f", "duo.yaml", "--no-build")[0] == 0
    code, _, stderr = invoke("experiment", "start", "-s", "duo", "--detach", "--parallel", "1")
    assert code == 0, stderr
    checkpoints = results(lab, "duo-0") / "checkpoints"
    wait_for(lambda: checkpoints.is_dir() and any((p / "COMPLETE").exists() for p in checkpoints.iterdir()),
             what="trial 0's first checkpoint", timeout=240)  # fmt: skip
    trial_pid = json.loads((lab / "experiments" / "duo-0" / "run.json").read_text())["local"]["pid"]
    queue_pid = json.loads((lab / "experiments" / "duo" / "run.json").read_text())["local"]["pid"]
    os.kill(queue_pid, signal.SIGKILL)
    trainer = holder(results(lab, "duo-0"))  # forked by the queue's warm trainer: a session of its own
    os.killpg(trial_pid, signal.SIGKILL)  # the machine went down: the trial's supervisor and trainer too
    if trainer:
        os.kill(trainer, signal.SIGKILL)
    assert not (results(lab, "duo-0") / "result.json").exists()  # it was killed while training, not after
    wait_for(lambda: states("duo")[0] == "interrupted", what="trial 0 to read as interrupted")
    assert sweep_status("duo")["state"] == "interrupted"
    kept = episodes(lab, "duo-0")

    code, stdout, stderr = invoke("experiment", "resume", "-s", "duo")  # no --restart
    assert code == 0, stdout + stderr
    assert sweep_status("duo")["state"] == "completed"
    assert [result(lab, name)["timesteps"] for name in ("duo-0", "duo-1")] == [LONGER, LONGER]
    after = episodes(lab, "duo-0")
    assert [line["episode"] for line in after] == list(range(1, len(after) + 1))
    resumed_at = next(p for p in (lab / "experiments" / "duo-0" / "logs" / "trainer.log").read_text().splitlines()
                      if "resuming from checkpoint" in p)  # fmt: skip
    assert "timesteps" in resumed_at and len(kept) > 0


def test_extend_an_experiment_exactly(lab: Path) -> None:
    (lab / "solo.yaml").write_text(ONE)
    code, stdout, stderr = invoke("experiment", "start", "-f", "solo.yaml", "--local")
    assert code == 0, stdout + stderr
    before = episodes(lab, "solo")
    code, stdout, stderr = invoke("experiment", "resume", "-e", "solo")
    assert code == 1 and "--total-timesteps N" in said(stdout, stderr)  # completed: only a raised budget goes on

    code, stdout, stderr = invoke("experiment", "resume", "-e", "solo", "--total-timesteps", "700")
    assert code == 0, stdout + stderr
    assert result(lab, "solo")["status"] == "completed" and result(lab, "solo")["timesteps"] == 700
    assert_continued(before, episodes(lab, "solo"), 700)
    log = (lab / "experiments" / "solo" / "logs" / "trainer.log").read_text()
    assert "resuming from checkpoint" in log and "300 timesteps" in log
    assert yaml.safe_load((lab / "experiments" / "solo" / "experiment.yaml").read_text())["total_timesteps"] == 700
    stack = yaml.safe_load((lab / "stacks" / "Pulumi.solo.yaml").read_text())
    assert stack["config"]["tfcli:experiment"]["total_timesteps"] == 700

    code, stdout, stderr = invoke("experiment", "resume", "-e", "solo", "--total-timesteps", "400")
    assert code == 2 and "--total-timesteps: 400 is not above the 700 timesteps solo reached" in said(stdout, stderr)
