"""A GKE sweep survives its trials, and tfcli reports what the cluster did.

The sweep's Job is the one its stack deploys, run by the Job controller stand-in (tests/job_controller.py: FailJob,
FailIndex, Ignore, backoffLimitPerIndex, maxFailedIndexes, failedIndexes, the Failed condition), served by the fake
API server; the trainers write to the bucket on the GCS emulator what they write when they end that way. Trial 1
has a bad spec (exit 2), trial 4 reaches its max_cost (a trial exits 0 then, ``result.json`` paused), trial 2 is
preempted once (143), the rest complete.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_kube import Cluster
from gke_testkit import FakePulumi, serve_api
from job_controller import Outcome
from played_sweep import PlayedSweep
from test_sweep_gke import BUCKET, SWEEP, finished, gke_lab, invoke, result, upload

__all__ = ["gke_lab"]

BAD_SPEC, PREEMPTED, OVER_BUDGET = 1, 2, 4
TROUBLE = {
    BAD_SPEC: [Outcome(2, message="agent.learning_rate: must be greater than 0 (experiments/cartpole-lr-1)")],
    PREEMPTED: [Outcome(143, ticks=2, disrupted=True), Outcome(0, ticks=2)],
    OVER_BUDGET: [Outcome(0, ticks=3, message="max_cost reached ($1.00 of $1.00); raise max_cost ...")],
}


@pytest.fixture
def api(fake_pulumi: FakePulumi, auth_plugin: Path) -> Iterator[Cluster]:
    """The fake API server, named in the sweep stack's kubeconfig output."""
    yield from serve_api(fake_pulumi, SWEEP)


def played(pulumi: FakePulumi, gcs: Any, api: Cluster, script: dict[int, list[Outcome]]) -> PlayedSweep:
    return PlayedSweep(pulumi.state, SWEEP, gcs.bucket(BUCKET), api, script)


def sweep_json() -> dict[str, Any]:
    code, stdout, stderr = invoke("experiment", "status", "-s", SWEEP, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


def by_trial(status: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {int(trial["trial"].rsplit("-", 1)[1]): trial for trial in status["trials"]}


def test_status_shows_each_trials_true_state_and_the_others_went_on(
    gke_lab: Path, gcs: Any, api: Cluster, fake_pulumi: FakePulumi
) -> None:
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3")
    assert code == 0, stdout + stderr
    sweep = played(fake_pulumi, gcs, api, TROUBLE)
    controller = sweep.deploy()
    while not any(pod.index == BAD_SPEC and pod.ended for pod in controller.pods):
        sweep.tick()
    status = sweep_json()  # trial 1 has failed; the sweep goes on
    assert status["state"] == "running" and by_trial(status)[BAD_SPEC]["state"] == "failed"
    assert "agent.learning_rate: must be greater than 0" in by_trial(status)[BAD_SPEC]["detail"]
    sweep.run()
    assert [pod.index for pod in controller.pods if pod.ended is not pod.outcome] == []  # nothing else was killed

    status = sweep_json()
    trials = by_trial(status)
    assert status["state"] == "failed" and status["detail"] == "FailedIndexes: Job has failed indexes"
    assert trials[BAD_SPEC]["state"] == "failed" and trials[BAD_SPEC]["cluster"]["pod"] == "failed"
    assert (trials[OVER_BUDGET]["state"], trials[OVER_BUDGET]["detail"]) == (
        "paused",
        "max_cost reached ($1.00 of $1.00)",
    )
    assert {k: trials[k]["state"] for k in set(range(9)) - {BAD_SPEC, OVER_BUDGET}} == dict.fromkeys(
        set(range(9)) - {BAD_SPEC, OVER_BUDGET}, "completed"
    )  # the preempted trial resumed and completed; the unstarted ones started
    code, stdout, _ = invoke("experiment", "status", "-s", SWEEP)
    said = " ".join(stdout.split())
    assert code == 0 and "cartpole-lr (sweep, gke, 3 at a time): failed" in said
    assert f"{SWEEP}-1 failed: agent.learning_rate: must be greater than 0" in said
    assert f"{SWEEP}-4 paused: max_cost reached ($1.00 of $1.00)" in said

    # Stopped, its stack gone: the reasons stay (a failed trial wrote no result.json to download).
    code, stdout, stderr = invoke("experiment", "stop", "-s", SWEEP)
    assert code == 0, stdout + stderr
    status = sweep_json()
    trials = by_trial(status)
    assert (status["state"], status["detail"]) == ("failed", "FailedIndexes: Job has failed indexes")
    assert trials[BAD_SPEC]["state"] == "failed" and "learning_rate" in trials[BAD_SPEC]["detail"]
    assert trials[OVER_BUDGET]["state"] == "paused" and trials[0]["state"] == "completed"


def test_wait_returns_non_zero_and_tears_down_the_sweeps_own_cluster(
    gke_lab: Path, gcs: Any, api: Cluster, fake_pulumi: FakePulumi
) -> None:
    sweep = played(fake_pulumi, gcs, api, TROUBLE)
    thread = sweep.start()
    try:
        code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3", "--wait")
    finally:
        sweep.stop.set()
        thread.join()
    assert sweep.problem is None
    assert code == 1, stdout + stderr
    said = " ".join((stdout + stderr).split())
    assert "tearing its cluster down" in said and "FailedIndexes: Job has failed indexes" in said
    assert (
        f"{SWEEP}-4 (learning_rate=0.001, seed 2): paused, mean return 100.0 (max_cost reached ($1.00 of $1.00))"
        in said
    )
    assert "[9/9 done]" in said
    assert f"{SWEEP}-1 failed: agent.learning_rate" in said and f"{SWEEP}-4 paused: max_cost reached" in said
    assert fake_pulumi.verbs().count("destroy") == 1 and fake_pulumi.stacks()[SWEEP]["resources"] == []
    results = gke_lab / "experiments"
    assert all((results / f"{SWEEP}-{k}" / "results" / "result.json").is_file() for k in (0, 2, 3, 5, 6, 7, 8))
    assert not (results / f"{SWEEP}-{BAD_SPEC}" / "results" / "result.json").exists()


def test_a_job_that_fails_early_leaves_its_unstarted_trials_stopped_and_wait_returns(
    gke_lab: Path, gcs: Any, api: Cluster, fake_pulumi: FakePulumi
) -> None:
    """More than half of the trials fail (a broken image, say): the Job fails; the rest never start."""
    broken = {index: [Outcome(1, reason="Error", message="ImportError: libcuda.so.1")] * 7 for index in range(9)}
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3", "-c", "nope")
    assert code == 2  # (an unknown shared cluster is bad input)
    code, _, stderr = invoke("cluster", "create", "-f", "single-node", "-c", "shared-cpu")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--parallel", "3", "-c", "shared-cpu")
    assert code == 0, stdout + stderr
    sweep = played(fake_pulumi, gcs, api, broken)
    sweep.deploy()
    sweep.run()
    status = sweep_json()
    trials = by_trial(status)
    assert status["state"] == "failed" and status["detail"].startswith("MaxFailedIndexesExceeded")
    assert [k for k, trial in trials.items() if trial["state"] == "failed"] == [0, 1, 2, 3, 4]
    assert "this trial was stopped with it" in trials[5]["detail"]  # running when the Job failed
    assert all("this trial never started" in trials[k]["detail"] for k in (6, 7, 8))
    assert {trials[k]["state"] for k in (5, 6, 7, 8)} == {"stopped"}
    assert "ImportError: libcuda.so.1" in trials[0]["detail"]
    # On a shared cluster --wait downloads and leaves the workloads to `stop -s`; it returns, non-zero.
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--wait")
    assert code == 1, stdout + stderr
    assert fake_pulumi.stacks()[SWEEP]["resources"]


def test_without_the_cluster_a_trial_paused_at_max_cost_still_ends_the_sweep(
    gke_lab: Path, gcs: Any, fake_pulumi: FakePulumi
) -> None:
    """Read from the bucket alone (no kubeconfig): a trial at its max_cost is over, so --wait returns."""
    for trial in range(9):
        if trial == OVER_BUDGET:
            reason = "max_cost reached ($1.00 of $1.00)"
            returns = [5.0] * 10
            upload(gcs, trial, {"result.json": json.dumps({**json.loads(result("paused", returns)), "reason": reason})})
        else:
            finished(gcs, trial, 10.0)
    code, stdout, stderr = invoke("experiment", "start", "-s", SWEEP, "--wait")
    assert code == 1, stdout + stderr
    assert fake_pulumi.stacks()[SWEEP]["resources"] == []  # its own cluster: torn down as a completed sweep's is
    status = sweep_json()
    assert (status["state"], status["detail"]) == ("failed", f"1 of 9 trials did not complete: {SWEEP}-4 paused")
