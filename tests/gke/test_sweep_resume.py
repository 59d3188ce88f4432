"""``resume -s`` of a GKE sweep against the fakes: a Job that ended ``Failed`` is replaced by a new one (another
digest) with a slot (a pod) only for each trial left to train, the failed and completed ones held as they ended;
``--retry-failed`` runs the failed ones again; ``--total-timesteps`` raises every trial's budget in the stack file
and the ConfigMap, and the completed trials read as going on. The Job controller stand-in runs each Job; the
trainers' own ends (already done, pruned) are tested with the real trainer in tests/trainer/test_ended.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from fake_kube import Cluster
from gke_testkit import FakePulumi
from job_controller import Outcome
from played_sweep import deployed_job
from test_sweep_failures import api, by_trial, played, sweep_json
from test_sweep_gke import BUCKET, BUDGET, SWEEP, gke_lab, invoke

from infra.code_bundle import CODE_CONFIG_MAP
from infra.sweep_config import sweep_settings_from_config
from infra.sweep_program import sweep_objects

__all__ = ["api", "gke_lab"]

BAD = {0, 1, 2, 3, 4}  # more than half of the 9 trials: the Job fails early, trials 5 .. 8 never finish


def said(stdout: str, stderr: str) -> str:
    return " ".join((stdout + stderr).split())


def stack_config(lab: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((lab / "stacks" / f"Pulumi.{SWEEP}.yaml").read_text())["config"])


def args(job: dict[str, Any]) -> list[str]:
    return list(job["spec"]["template"]["spec"]["containers"][0]["args"])


def test_failed_job_resumed_then_retry_failed_then_extended(
    gke_lab: Path, gcs: Any, api: Cluster, fake_pulumi: FakePulumi
) -> None:
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3")
    assert code == 0, stdout + stderr
    first = played(fake_pulumi, gcs, api, {k: [Outcome(2, message="agent.learning_rate: must be > 0")] for k in BAD})
    first.deploy()
    first.run()
    status = sweep_json()
    assert status["state"] == "failed" and status["detail"].startswith("MaxFailedIndexesExceeded")
    assert {by_trial(status)[k]["state"] for k in range(5, 9)} == {"stopped"}
    failed_job = deployed_job(fake_pulumi.state, SWEEP)

    # A plain resume: a new Job (the Failed one starts no pod again) with a slot for each trial left, 5 .. 8 only;
    # the failed trials are held (no pod), and said so.
    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP)
    assert code == 0, stdout + stderr
    names = ", ".join(f"{SWEEP}-{k}" for k in range(4))
    assert f"5 failed trial(s) left as they are ({names}); --retry-failed runs them again" in said(stdout, stderr)
    job = deployed_job(fake_pulumi.state, SWEEP)
    assert job["metadata"]["name"] != failed_job["metadata"]["name"]
    assert (job["spec"]["completions"], failed_job["spec"]["completions"]) == (4, 9)
    assert job["spec"]["maxFailedIndexes"] == 4  # half of the 9 trials, capped at the 4 slots
    assert (stack_config(gke_lab)["tfcli:heldTrials"], stack_config(gke_lab)["tfcli:rerun"]) == ("0,1,2,3,4", 1)
    second = played(fake_pulumi, gcs, api, {1: [Outcome(2, message="env: no such level")]})  # slot 1: trial 6
    assert [second.slot_trial(slot) for slot in range(4)] == [f"{SWEEP}-{k}" for k in range(5, 9)]
    controller = second.deploy()
    second.run()
    assert (controller.completed, controller.failed_indexes) == ({0, 2, 3}, {1})
    status = sweep_json()
    trials = by_trial(status)
    assert trials[6]["state"] == "failed" and "env: no such level" in trials[6]["detail"]  # slot 1 read as trial 6
    assert {trials[k]["state"] for k in BAD} == {"failed"} and {trials[k]["state"] for k in (5, 7, 8)} == {"completed"}
    assert status["state"] == "failed"

    # --retry-failed: another new Job, its slots the six trials not completed (5, 7, 8 get no pod); it completes.
    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP, "--retry-failed")
    assert code == 0, stdout + stderr
    retry_job = deployed_job(fake_pulumi.state, SWEEP)
    assert retry_job["metadata"]["name"] not in (job["metadata"]["name"], failed_job["metadata"]["name"])
    assert retry_job["spec"]["completions"] == 6 and stack_config(gke_lab)["tfcli:rerun"] == 2
    third = played(fake_pulumi, gcs, api, {})
    assert [third.slot_trial(slot) for slot in range(6)] == [f"{SWEEP}-{k}" for k in (0, 1, 2, 3, 4, 6)]
    third.deploy()
    third.run()
    status = sweep_json()
    assert status["state"] == "completed" and {t["timesteps"] for t in status["trials"]} == {BUDGET}

    # Extended: the budget in sweep.yaml, the stack file and the ConfigMap; a new Job; the trials go on.
    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP, "--total-timesteps", str(2 * BUDGET))
    assert code == 0, stdout + stderr
    assert f"budget raised to timesteps {2 * BUDGET:,}: 9 finished run(s) continue" in said(stdout, stderr)
    config = stack_config(gke_lab)
    assert config["tfcli:sweep"]["base"]["total_timesteps"] == 2 * BUDGET
    (config_map,) = [  # the trials' specs (the project's envs/ code travels in a ConfigMap of its own)
        o
        for o in sweep_objects(sweep_settings_from_config(config, stack=SWEEP))
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] != CODE_CONFIG_MAP
    ]
    assert {yaml.safe_load(text)["total_timesteps"] for text in config_map["data"].values()} == {2 * BUDGET}
    extended_job = deployed_job(fake_pulumi.state, SWEEP)
    assert extended_job["metadata"]["name"] != retry_job["metadata"]["name"]
    played(fake_pulumi, gcs, api, {}).deploy()  # the new Job replaced the Complete one
    status = sweep_json()
    assert status["state"] == "running" and {t["state"] for t in status["trials"]} == {"running"}
    assert {t["timesteps"] for t in status["trials"]} == {BUDGET}  # where they go on from

    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP, "--total-timesteps", str(BUDGET))
    assert code == 2 and f"--total-timesteps: {BUDGET:,} is not above" in said(stdout, stderr)


def test_rerun_alone_makes_a_new_job_and_held_trials_are_checked(gke_lab: Path) -> None:
    """``--retry-failed`` right after a failed Job holds nothing, so only ``tfcli:rerun`` can make the Job new."""
    import pytest

    from trainer.kernel.errors import InvalidInput

    config = stack_config(gke_lab)

    def job(extra: dict[str, Any]) -> dict[str, Any]:
        objects = sweep_objects(sweep_settings_from_config({**config, **extra}, stack=SWEEP))
        return next(o for o in objects if o["kind"] == "Job")

    assert job({"tfcli:rerun": 1})["metadata"]["name"] != job({})["metadata"]["name"]
    assert job({"tfcli:heldTrials": ""})["metadata"]["name"] == job({})["metadata"]["name"]  # deployed ones stay
    with pytest.raises(InvalidInput, match=r"tfcli:heldTrials: the sweep's trials are 0 \.\. 8"):
        job({"tfcli:heldTrials": "3,9"})


def test_include_pruned_releases_only_the_pruned_trials_in_the_bucket(
    gke_lab: Path, gcs: Any, api: Cluster, fake_pulumi: FakePulumi
) -> None:
    """``resume -s --include-pruned`` writes ``early_stop_released`` beside each pruned trial's result before the new
    Job runs: without it the trainer ends a pruned trial at once (trainer/ended.py, tests/trainer/test_ended.py)."""
    import json

    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3")
    assert code == 0, stdout + stderr
    first = played(fake_pulumi, gcs, api, {})
    first.deploy()
    first.run()
    blob = gcs.bucket(BUCKET).blob(f"{SWEEP}/{SWEEP}-2/result.json")
    pruned = {**json.loads(blob.download_as_text()), "status": "pruned", "reason": "IQM 5.0 at 100 timesteps"}
    blob.upload_from_string(json.dumps(pruned))

    code, stdout, stderr = invoke("experiment", "resume", "-s", SWEEP)  # pruned stays pruned: nothing released
    assert code == 0, stdout + stderr
    assert not [b.name for b in gcs.list_blobs(BUCKET) if b.name.endswith("early_stop_released")]
    code, stdout, stderr = invoke(
        "experiment", "resume", "-s", SWEEP, "--include-pruned", "--total-timesteps", str(2 * BUDGET)
    )
    assert code == 0, stdout + stderr
    released = [b.name for b in gcs.list_blobs(BUCKET) if b.name.endswith("early_stop_released")]
    assert released == [f"{SWEEP}/{SWEEP}-2/early_stop_released"]
    assert json.loads(gcs.bucket(BUCKET).blob(released[0]).download_as_text()) == {
        "pruned": pruned["reason"],
        "timesteps": pruned["timesteps"],
    }
