"""Every bundled experiment, as shipped, trains through the user's own path: ``tfcli init``, ``experiment new``,
``experiment start --local`` (the supervisor, the trainer and, in distributed mode, env-worker processes), and
``experiment status`` — only the budget is cut, so that the suite stays short.

The original client's walk-through, ``space-invaders-dqn``, also trains in the two other run modes; and a run that
fails in its first seconds says why, with the trainer's own line, and exits non-zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_kit import invoke, status
from journey_kit import bundled

BUDGET = {"cartpole-ppo": 400, "space-invaders-dqn": 120, "gridworld-ppo": 400}


def test_every_bundled_experiment_is_covered() -> None:
    assert set(bundled("experiments")) == set(BUDGET)


@pytest.mark.parametrize(
    ("spec", "run_mode"),
    [
        ("cartpole-ppo", None),  # shipped: multi-threaded, 16 environments
        ("space-invaders-dqn", None),  # shipped: distributed, 4 env-workers
        ("space-invaders-dqn", "multi-threaded"),
        ("space-invaders-dqn", "single"),
        ("gridworld-ppo", None),  # the project's envs/gridworld.py; all run modes: tests/cli/test_own_environment.py
    ],
)
def test_bundled_experiment_trains_with_start_local(spec: str, run_mode: str | None, lab: Path) -> None:
    name = f"{spec}-{run_mode or 'shipped'}"[:40]
    flags = ["--total-timesteps", str(BUDGET[spec])] + (["--run-mode", run_mode] if run_mode else [])
    code, _, stderr = invoke("experiment", "new", "-f", spec, "-n", name, *flags)
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", name, "--local")
    assert code == 0, stdout + stderr
    assert f"{name} completed: {BUDGET[spec]:,} timesteps" in stdout
    shown = status(name)
    assert shown["state"] == "completed", shown
    code, text, _ = invoke("experiment", "status", "-e", name)
    assert code == 0 and f"{BUDGET[spec]:,} timesteps" in text and "timesteps/s)" in text, text
    result = json.loads((lab / "experiments" / name / "results" / "result.json").read_text())
    assert result["status"] == "completed" and result["timesteps"] == BUDGET[spec]
    assert (lab / "experiments" / name / "results" / "learning_curve.png").stat().st_size > 0


def test_a_run_that_fails_at_once_says_why_and_exits_non_zero(lab: Path) -> None:
    # `experiment new` checks the schema only; the trainer refuses the dense network on images at start.
    (lab / "dense-on-images.yaml").write_text(
        "name: dense-on-images\nenvironment: space-invaders\nagent: ppo\nnetwork: mlp2\ntotal_timesteps: 100\n"
    )
    code, _, stderr = invoke("experiment", "new", "-f", "dense-on-images.yaml")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", "dense-on-images", "--local")
    assert code == 2, stdout + stderr
    reason = "network.0: a dense layer needs a vector input"
    assert reason in stderr
    shown = status("dense-on-images")
    assert shown["state"] == "failed"
    assert reason in str(shown["detail"])
