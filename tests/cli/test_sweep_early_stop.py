"""An early-stopped sweep on this machine, with real (tiny) TensorForce trials: a hopeless combination (episodes cut
at 6 timesteps, so its return can never pass 6, where CartPole's random start averages ~20) is pruned by its own
trials at the first rung, checkpointed, exit 0; the other combination completes; every view says so.

Two trials at a time, in grid order: the good combination runs first, so the hopeless one meets it at the first rung
(a combination that ends before any other reaches a rung has nothing to be judged against, docs/design.md §6.6)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from cli_kit import early_stop_sweep, invoke, sweep_status

BUDGET = 600


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

    code, stdout, stderr = invoke("experiment", "start", "-s", "asha", "--parallel", "2")  # waits until it ends
    assert code == 0, stdout + stderr
    status = sweep_status("asha")
    assert status["state"] == "completed", status
    trials = {t["trial"]: t for t in status["trials"]}
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
