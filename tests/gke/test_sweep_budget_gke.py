"""A GKE sweep's own ``max_cost``, kept by its trial pods from what the bucket holds (no process on the user's
machine): one trial at a time, the first pauses once the sweep's trials together reach the limit, and the next ones,
whose turn comes after it ran out, end before building anything, each paused with the sweep's reason and its Job
index completed, not failed. Raising ``max_cost`` in ``sweep.yaml`` and ``resume -s`` trains them all to the end.
Each pod is a real trainer with the deployed Job's own args, env (its ``TFCLI_HOURLY_PRICE``) and ConfigMap, run by
the Job controller stand-in over the shared results folder (tests/gke/played_sweep.py, tests/job_controller.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import invoke
from fake_kube import Cluster
from gke_testkit import FakePulumi
from played_sweep import deployed_job
from test_sweep_max_cost import api, sweep_status
from test_sweep_resume_trainers import BUDGET, SWEEP, play, start_sweep, sweep_file

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")
__all__ = ["api"]  # the fixture: the Kubernetes API stand-in

TRIALS = [f"{SWEEP}-{k}" for k in range(3)]
SWEEP_FILE = sweep_file("agent.learning_rate: [1e-3, 3e-3, 1e-2]") + "max_cost: 1.0e-09\n"


def test_the_trial_pods_keep_the_sweeps_budget_and_resume_goes_on_once_it_is_raised(
    lab: Path, fake_pulumi: FakePulumi, gcs: Any, api: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    start_sweep(lab, gcs, SWEEP_FILE, parallel=1)
    job = deployed_job(fake_pulumi.state, SWEEP)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert any(item["name"] == "TFCLI_HOURLY_PRICE" for item in container["env"])  # the sweep's budget needs it
    mount = tmp_path / "mount"
    controller = play(fake_pulumi, gcs, api, mount)
    assert not controller.failed_indexes and controller.completed == {0, 1, 2}, controller.job_document()["status"]

    trials = {trial["trial"]: trial for trial in sweep_status()["trials"]}
    for name in TRIALS:
        assert trials[name]["state"] == "paused", trials[name]
        assert trials[name]["detail"].startswith("max_cost reached ($"), trials[name]
        assert f"sweep {SWEEP}, all its trials" in trials[name]["detail"]
    # The first trial's trainer stopped itself (a billionth of a dollar goes before its first step); the others'
    # turn came after the budget ran out, and they ended before anything was built.
    assert "checkpointing and pausing" in (mount / f"{TRIALS[0]}.log").read_text()
    for name in TRIALS[1:]:
        log = (mount / f"{name}.log").read_text()
        assert "raise the sweep's max_cost" in log and "checkpointing and pausing" not in log, log[-2000:]
        assert trials[name]["timesteps"] == 0

    sweep_yaml = lab / "experiments" / SWEEP / "sweep.yaml"
    definition = yaml.safe_load(sweep_yaml.read_text())
    definition["max_cost"] = 1000.0
    sweep_yaml.write_text(yaml.safe_dump(definition, sort_keys=False))
    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP)
    assert code == 0, stdout + stderr
    controller = play(fake_pulumi, gcs, api, mount)
    assert not controller.failed_indexes
    status = sweep_status()
    assert status["state"] == "completed", status
    assert {t["trial"]: (t["state"], t["timesteps"]) for t in status["trials"]} == dict.fromkeys(
        TRIALS, ("completed", BUDGET)
    )
