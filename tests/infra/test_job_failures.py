"""What the Job controller does with the trainer's exit codes, on the Jobs tfcli deploys (rendered as ``pulumi up``
applies them), played by the stand-in of tests/job_controller.py, which fails Jobs the way Kubernetes 1.33 does.

A sweep survives its trials: a trial that exits 2 (bad input) or 3 (``max_cost``), crashes past its retries or is
preempted ends as itself, and every other trial runs to its end. An experiment's Job ends at once on 2 and 3.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from infra_testkit import LIBRARY, PROJECT, ZONE, experiment
from job_controller import Invalid, JobController, Outcome, index_ranges, validate, validate_update

from infra.manifests import build_manifests, context_for
from infra.pod_parts import RETRIES, failure_policy
from infra.sweep_config import sweep_settings_from_config
from infra.sweep_manifests import render_sweep
from infra.sweep_program import sweep_context
from tfcli.sweeps.create import SweepOptions, plan_sweep

BAD_INPUT, MAX_COST, PREEMPTED, CRASH = 1, 4, 2, 5


def sweep_job(parallelism: int = 3, seeds: int | None = None) -> dict[str, Any]:
    """The Indexed Job of the bundled sweep cartpole-lr (9 trials), as its stack deploys it."""
    planned = plan_sweep("cartpole-lr", SweepOptions(seeds=seeds), LIBRARY)
    config = {"gcp:project": PROJECT, "gcp:zone": ZONE, "tfcli:sweep": planned.sweep.model_dump(mode="json")}
    sweep = sweep_settings_from_config(config, stack="cartpole-lr")
    objects = yaml.safe_load_all(render_sweep(sweep.name, sweep.trials, sweep_context(sweep), parallelism=parallelism))
    (job,) = [obj for obj in objects if obj["kind"] == "Job"]
    return dict(job)


def learner_job() -> dict[str, Any]:
    spec = experiment("cartpole-ppo")
    objects = build_manifests(spec, context_for(spec, project=PROJECT, location=ZONE), token="t")
    return dict(objects[-1])


def troubled_trials() -> dict[int, list[Outcome]]:
    """Trial 1 has a bad spec, trial 4 reaches its max_cost, trial 2 is preempted once, trial 5 crashes every time."""
    return {
        BAD_INPUT: [Outcome(2, message="error: agent.learning_rate: must be positive")],
        MAX_COST: [Outcome(3, ticks=2, message="max_cost reached ($1.00 of $1.00)")],
        PREEMPTED: [Outcome(143, ticks=2, disrupted=True), Outcome(0, ticks=2)],
        CRASH: [Outcome(1, reason="OOMKilled", message="Killed")] * (RETRIES + 1),
    }


def ended_by_controller(controller: JobController) -> list[int]:
    """Indexes whose pod the controller terminated (rather than the pod ending as its script said)."""
    return [pod.index for pod in controller.pods if pod.ended is not None and pod.ended is not pod.outcome]


def test_a_sweep_survives_its_trials_and_ends_failed_with_its_failed_indexes() -> None:
    controller = JobController(sweep_job(), troubled_trials())
    controller.run()
    job = controller.job_document()
    assert job["status"]["failedIndexes"] == index_ranges({BAD_INPUT, MAX_COST, CRASH}) == "1,4-5"
    assert job["status"]["completedIndexes"] == "0,2-3,6-8"  # every other trial ran to its end
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (failed["reason"], failed["message"]) == ("FailedIndexes", "Job has failed indexes")
    assert ended_by_controller(controller) == []  # no trial was killed for another's failure
    # Exit 2 and 3 are not retried; a preemption is, without counting; a crash is, RETRIES times.
    attempts = {index: sum(1 for pod in controller.pods if pod.index == index) for index in range(9)}
    assert (attempts[BAD_INPUT], attempts[MAX_COST], attempts[PREEMPTED], attempts[CRASH]) == (1, 1, 2, RETRIES + 1)
    retried = next(p for p in controller.pod_documents() if p["metadata"]["name"].endswith(f"-{PREEMPTED}-00002"))
    annotations = retried["metadata"]["annotations"]
    assert (annotations["batch.kubernetes.io/job-index-ignored-failure-count"], annotations[
        "batch.kubernetes.io/job-index-failure-count"]) == ("1", "0")  # fmt: skip


def test_the_single_run_policy_on_a_sweep_would_end_every_trial_at_the_first_bad_one() -> None:
    """What the sweep's Job did before (FailJob and one shared backoffLimit): the stand-in shows the harm."""
    job = sweep_job()
    spec = job["spec"]
    for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
        del spec[key]
    spec["backoffLimit"] = 6 * 9
    spec["podFailurePolicy"] = failure_policy("trial")
    controller = JobController(job, troubled_trials())
    controller.run()
    status = controller.job_document()["status"]
    failed = next(c for c in status["conditions"] if c["type"] == "Failed")
    assert (
        failed["reason"] == "PodFailurePolicy"
        and "failed with exit code 2 matching FailJob rule at index 0" in (failed["message"])
    )
    assert ended_by_controller(controller) == [PREEMPTED]  # its running sibling was terminated
    assert "failedIndexes" not in status and status["completedIndexes"] == "0"
    assert {pod.index for pod in controller.pods} == {0, 1, 2}  # trials 3..8 never started


def test_more_than_half_of_the_trials_failing_ends_the_sweep_early() -> None:
    bad = {index: [Outcome(2)] for index in range(5)}
    controller = JobController(sweep_job(parallelism=2), bad)
    controller.run()
    status = controller.job_document()["status"]
    assert sweep_job()["spec"]["maxFailedIndexes"] == 4
    failed = next(c for c in status["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "MaxFailedIndexesExceeded"
    assert status["failedIndexes"] == "0-4" and ended_by_controller(controller) == [5]  # trial 5 was terminated
    assert {pod.index for pod in controller.pods} == set(range(6))  # trials 6..8 never started


def test_an_experiment_ends_at_once_on_exit_2_and_3_and_survives_preemptions() -> None:
    for code in (2, 3):
        controller = JobController(learner_job(), {0: [Outcome(code)]})
        controller.run()
        failed = next(c for c in controller.job_document()["status"]["conditions"] if c["type"] == "Failed")
        assert failed["reason"] == "PodFailurePolicy" and len(controller.pods) == 1
    controller = JobController(learner_job(), {0: [Outcome(143, disrupted=True)] * 10 + [Outcome(0)]})
    controller.run()
    assert controller.job_document()["status"]["conditions"][-1]["type"] == "Complete"
    crashing = JobController(learner_job(), {0: [Outcome(1)] * 10})
    crashing.run()
    failed = next(c for c in crashing.job_document()["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "BackoffLimitExceeded" and len(crashing.pods) == RETRIES + 1


def test_a_new_parallelism_is_a_new_job_and_other_trials_are_too() -> None:
    """``start -s --parallel`` again: a Job of another name (pulumi-kubernetes replaces a Job whose parallelism
    changes; under the same name its create would meet the old Job still being deleted)."""
    three, five = sweep_job(parallelism=3), sweep_job(parallelism=5)
    assert three["metadata"]["name"] != five["metadata"]["name"]
    validate_update(three, {**three, "spec": {**three["spec"], "suspend": True}})  # pausing keeps the Job
    other = sweep_job(parallelism=3, seeds=2)  # other trials: another Job
    assert other["metadata"]["name"] != three["metadata"]["name"]
    with pytest.raises(Invalid, match=r"spec\.completions: Invalid value: field is immutable"):
        validate_update(three, {**other, "metadata": three["metadata"]})


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda s: s.pop("backoffLimitPerIndex"), "FailIndex rule action requires the backoffLimitPerIndex"),
        (lambda s: s.update(completionMode="NonIndexed"), "spec.backoffLimitPerIndex: Invalid value: 6: requires"),
        (lambda s: s.update(maxFailedIndexes=10), "must be less than or equal to completions"),
        (lambda s: s["template"]["spec"].update(restartPolicy="OnFailure"), 'only "Never" is supported'),
        (lambda s: s["podFailurePolicy"]["rules"][0]["onExitCodes"].update(values=[3, 2]), "ordered and unique"),
        (lambda s: s["podFailurePolicy"]["rules"][1]["onExitCodes"].update(containerName="learner"), "container"),
    ],
)
def test_the_stand_in_refuses_what_the_api_server_refuses(change: Any, problem: str) -> None:
    job = sweep_job()
    validate(job)  # as deployed: valid
    broken = copy.deepcopy(job)
    change(broken["spec"])
    with pytest.raises(Invalid, match=problem):
        validate(broken)
