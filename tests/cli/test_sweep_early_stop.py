"""An early-stopped sweep on this machine, with real (tiny) TensorForce trials: a hopeless combination (episodes cut
at 6 timesteps, so its return can never pass 6, where CartPole's random start averages ~20) is pruned by its own
trials at the first rung, checkpointed, exit 0; the other combination completes; every view says so.

Two trials at a time, in grid order: the good combination runs first, so the hopeless one meets it at the first rung
(a combination that ends before any other reaches a rung has nothing to be judged against, docs/design.md §6.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import early_stop_sweep, invoke, sweep_status

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

BUDGET = 600


def run_to_the_end(parallel: int) -> dict[str, dict[str, Any]]:
    """``start -s asha`` (it waits until the sweep ends), which must complete: each trial's status by name."""
    code, stdout, stderr = invoke("experiment", "start", "-s", "asha", "--parallel", str(parallel))
    assert code == 0, stdout + stderr
    status = sweep_status("asha")
    assert status["state"] == "completed", status
    return {t["trial"]: t for t in status["trials"]}


def test_a_hopeless_combination_is_pruned_at_the_first_rung(lab: Path) -> None:
    (lab / "asha.yaml").write_text(early_stop_sweep())
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "asha.yaml", "--no-build")
    assert code == 0, stderr
    said = " ".join(stdout.split())
    assert "rungs at 150, 300 timesteps" in said and "top 1/2" in said
    trial = yaml.safe_load((lab / "experiments" / "asha-3" / "experiment.yaml").read_text())
    assert trial["early_stop"] == {
        "sweep": "asha", "trials": 4, "seeds": 2, "reduction": 2, "rungs": [150, 300], "recheck_seconds": 1.0
    }  # fmt: skip

    trials = run_to_the_end(2)
    assert [trials[f"asha-{k}"]["state"] for k in range(4)] == ["completed", "completed", "pruned", "pruned"]
    for k in (0, 1):
        assert trials[f"asha-{k}"]["timesteps"] == BUDGET
    for k in (2, 3):
        pruned = trials[f"asha-{k}"]
        assert 150 <= pruned["timesteps"] < BUDGET
        assert (
            pruned["detail"].startswith("IQM ")
            and "at 150 timesteps, below the top 1/2 (2 combinations" in (pruned["detail"])
        )
        results = lab / "experiments" / f"asha-{k}" / "results"
        result = json.loads((results / "result.json").read_text())
        assert result["status"] == "pruned" and result["reason"] == pruned["detail"]
        markers = sorted(results.glob("checkpoints/*/COMPLETE"))
        assert (
            markers
            and json.loads((markers[-1].parent / "state.json").read_text())["timesteps"] == (result["timesteps"])
        )  # checkpointed where it stopped
        log = (lab / "experiments" / f"asha-{k}" / "logs" / "trainer.log").read_text()
        assert "pruned after" in log

    code, stdout, _ = invoke("experiment", "status", "-s", "asha")
    said = " ".join(stdout.split())
    assert code == 0 and "2 completed, 2 pruned" in said and "asha-2 pruned: IQM" in said

    code, stdout, stderr = invoke("experiment", "list", "-s", "asha", "--json")
    assert code == 0, stderr
    rows = json.loads(stdout)
    assert [(row["label"], row["completed"], row["pruned"], row["best"]) for row in rows] == [
        ("max_timesteps_per_episode=500", 2, 0, True),
        ("max_timesteps_per_episode=6", 0, 2, False),
    ]
    code, stdout, _ = invoke("experiment", "list", "-s", "asha")
    assert code == 0 and "(pruned)" in stdout
    code, stdout, stderr = invoke("experiment", "plot", "-s", "asha", "-o", "curves.png")
    assert code == 0, stderr and (lab / "curves.png").is_file()


def test_a_hopeless_combination_first_in_the_queue_waits_at_the_rung_and_is_pruned(lab: Path) -> None:
    """Issue 28: the hopeless combination comes first, one trial at a time. Its first trial reaches the first rung
    while no other combination has; under the old rule (train on while undecided) it trained to its budget. Now it
    waits there (checkpointed, its slot given to the next trial) until the rung is decided, and is pruned at it."""
    (lab / "asha.yaml").write_text(early_stop_sweep(hopeless_first=True))
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "asha.yaml", "--no-build")
    assert code == 0, stderr
    trials = run_to_the_end(1)
    assert [trials[f"asha-{k}"]["state"] for k in range(4)] == ["pruned", "pruned", "completed", "completed"]
    for k in (0, 1):
        assert 150 <= trials[f"asha-{k}"]["timesteps"] < 300, trials  # stopped at the first rung, not past it
        assert "at 150 timesteps, below the top 1/2 (2 combinations" in trials[f"asha-{k}"]["detail"]
    for k in (2, 3):
        assert trials[f"asha-{k}"]["timesteps"] == BUDGET
    queue_log = (lab / "experiments" / "asha" / "logs" / "queue.log").read_text()
    assert "asha-0: waiting (waiting at rung 150 timesteps for 1 more combination (1 of 2 there))" in queue_log
    started = [
        line.split()[1].rstrip(":") for line in queue_log.splitlines() if line.endswith(")") and "started" in line
    ]
    assert started[:2] == ["asha-0", "asha-2"]  # each combination's first seed first: the rung fills early
    # asha-2 waited too (at rung 300, while asha-1 could still get there) and was promoted: one run, continued
    assert "asha-2: waiting (waiting at rung 300 timesteps" in queue_log
    steps = [json.loads(line)["timesteps"] for line in (lab / "experiments" / "asha-2" / "results" / "progress.jsonl")
             .read_text().splitlines()]  # fmt: skip
    assert steps == sorted(steps) and len(set(steps)) == len(steps) and 300 < steps[-1] <= BUDGET  # no repeats
    code, stdout, stderr = invoke("experiment", "list", "-s", "asha", "--json")
    assert code == 0, stderr
    rows = {row["label"]: row for row in json.loads(stdout)}
    assert rows["max_timesteps_per_episode=500"]["best"] and rows["max_timesteps_per_episode=6"]["pruned"] == 2
    assert rows["max_timesteps_per_episode=500"]["completed"] == 2
    code, stdout, stderr = invoke("experiment", "plot", "-s", "asha", "-o", "curves.png")
    assert code == 0 and (lab / "curves.png").is_file(), stderr


def test_status_shows_a_trial_waiting_at_a_rung(lab: Path) -> None:
    """``status -s`` names a waiting trial's state and what it waits for (issue 28 item 5)."""
    (lab / "asha.yaml").write_text(early_stop_sweep())
    assert invoke("experiment", "sweep", "-f", "asha.yaml", "--no-build")[0] == 0
    results = lab / "experiments" / "asha-0" / "results"
    results.mkdir(parents=True)
    reason = "waiting at rung 150 timesteps for 1 more combination (1 of 2 there)"
    counts = {"timesteps": 152, "episodes": 9, "wall_seconds": 2.0, "timesteps_per_second": 76.0, "updates": 4}
    (results / "result.json").write_text(
        json.dumps({"status": "paused", **counts, "mean_return_last_100": 16.9, "reason": reason})
    )
    code, stdout, _ = invoke("experiment", "status", "-s", "asha")
    assert code == 0 and f"asha-0 waiting: {reason}" in " ".join(stdout.split()), stdout
    assert sweep_status("asha")["trials"][0]["state"] == "waiting"
