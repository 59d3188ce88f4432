"""The whole local life of an experiment through the CLI, with real (tiny) TensorForce runs.

init -> new -> start --wait -> list shows completed; start --detach -> pause -> resume -> the full budget;
stop; plot writes a PNG.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_kit import invoke, status, wait_for

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

BUDGET = 600


def test_new_start_wait_list_plot(lab: Path) -> None:
    code, _, stderr = invoke(
        "experiment", "new", "-f", "cartpole-ppo", "-n", "cp", "--total-timesteps", str(BUDGET), "--seed", "1"
    )
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", "cp", "--wait")
    assert code == 0, stdout + stderr
    assert "cp completed: 600 timesteps" in stdout
    assert "learning_curve.png" in stdout and "tfcli tensorboard experiments/" in stdout

    code, stdout, _ = invoke("experiment", "list", "--json")
    (entry,) = json.loads(stdout)
    assert (entry["name"], entry["state"], entry["timesteps"], entry["progress"]) == ("cp", "completed", BUDGET, 1.0)

    again_code, again, _ = invoke("experiment", "start", "-e", "cp")
    assert again_code == 0 and "already completed" in again

    code, stdout, stderr = invoke("experiment", "plot", "-e", "cp", "-o", "curves.png")
    assert code == 0, stderr
    assert (lab / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_detach_pause_resume_reaches_the_full_budget_then_stop(lab: Path) -> None:
    budget = 20_000
    code, _, stderr = invoke(
        "experiment", "new", "-f", "cartpole-ppo", "-n", "long", "--total-timesteps", str(budget),
        "--saver-frequency", "200t",
    )  # fmt: skip
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", "long", "--detach")
    assert code == 0, stderr
    assert "in the background" in stdout
    wait_for(lambda: status("long")["timesteps"] >= 400, what="some training")  # type: ignore[operator]

    second = invoke("experiment", "start", "-e", "long", "--detach")
    assert second[0] == 1 and "already running" in second[2]

    code, stdout, stderr = invoke("experiment", "pause", "-e", "long")
    assert code == 0, stderr
    paused = status("long")
    assert paused["state"] == "paused"
    assert 0 < paused["timesteps"] < budget  # type: ignore[operator]

    code, _, stderr = invoke("experiment", "resume", "-e", "long", "--wait")
    assert code == 0, stderr
    final = status("long")
    assert (final["state"], final["timesteps"]) == ("completed", budget)

    code, _, stderr = invoke("experiment", "stop", "-e", "long")
    assert code == 0, stderr
    assert status("long")["state"] == "stopped"
    code, stdout, _ = invoke("experiment", "logs", "-e", "long")
    assert code == 0 and stdout


def test_main_job_from_a_spec_name_in_a_fresh_project(lab: Path) -> None:
    """`tfcli experiment start -f SPEC --local` creates the experiment and trains it (tiny budget here)."""
    spec = lab / "tiny.yaml"
    spec.write_text(
        "name: tiny\nenvironment: cartpole\nagent: ppo\nnetwork: mlp2\nrun_mode: multi-threaded\n"
        "num_workers: 2\ntotal_timesteps: 301\n"
    )
    code, stdout, stderr = invoke("experiment", "start", "-f", "tiny.yaml", "--local")
    assert code == 0, stdout + stderr
    result = json.loads((lab / "experiments" / "tiny" / "results" / "result.json").read_text())
    assert (result["status"], result["timesteps"]) == ("completed", 301)
