"""What a sweep's Job adds to the bucket's view of its trials (tfcli/gke/sweep_job.py), on Job documents as the Job
controller stand-in (tests/job_controller.py) writes them."""

from __future__ import annotations

from typing import Any

import pytest
from job_controller import index_ranges

from tfcli.gke.pod_states import PodState
from tfcli.gke.sweep_job import JobReading, parse_indexes, sweep_state, trial_verdict, trials_job


@pytest.mark.parametrize("indexes", [set(), {0}, {0, 1, 2}, {1, 3, 4, 5, 9}, set(range(0, 1000, 3))])
def test_index_lists_read_back_what_the_controller_wrote(indexes: set[int]) -> None:
    assert parse_indexes(index_ranges(indexes)) == indexes


def test_what_is_not_an_index_list_reads_as_empty() -> None:
    assert parse_indexes("1,x-3") == frozenset() and parse_indexes(None) == frozenset()


def job(conditions: list[dict[str, Any]], failed: str = "", completed: str = "") -> dict[str, Any]:
    return {
        "metadata": {"name": "trials-1", "annotations": {"tfcli/job": "trials"}, "creationTimestamp": "T1"},
        "status": {"conditions": conditions, "failedIndexes": failed, "completedIndexes": completed},
    }


def test_the_failed_condition_and_its_reason_end_the_sweep() -> None:
    failed = {"type": "Failed", "status": "True", "reason": "FailedIndexes", "message": "Job has failed indexes"}
    reading = JobReading.of(job([failed], failed="1,4"))
    assert reading.failed == "FailedIndexes: Job has failed indexes" and reading.failed_indexes == {1, 4}
    assert sweep_state(reading) == "failed"
    target = {**failed, "type": "FailureTarget", "reason": "MaxFailedIndexesExceeded"}
    assert JobReading.of(job([target])).failed is not None  # pods still terminating: failed already
    assert JobReading.of(job([{**failed, "status": "False"}])).failed is None
    complete = JobReading.of(job([{"type": "Complete", "status": "True"}], completed="0-8"))
    assert complete.complete and sweep_state(JobReading.of(job([]))) is None
    assert sweep_state(complete) is None  # the trials decide: one paused at max_cost completed its index too
    other = {"metadata": {"name": "learner-1", "annotations": {"tfcli/job": "learner"}}}
    assert trials_job([other]) is None and trials_job([other, job([failed])]) == reading.__class__.of(job([failed]))


def test_a_trial_is_judged_by_its_index_and_its_last_pod() -> None:
    running = JobReading(None, False, frozenset({2}), frozenset())
    crashed = PodState("trials-1-2-00007", "trial", "failed", "OOMKilled")
    at_budget = PodState("trials-1-2-00001", "trial", "paused", "max_cost reached ($1.00 of $1.00)")
    assert trial_verdict(2, "running", running, crashed) == ("failed", "OOMKilled")
    assert trial_verdict(2, "paused", running, at_budget, paused_for="max_cost reached ($1.00 of $1.00)") == (
        "paused",
        "max_cost reached ($1.00 of $1.00)",
    )
    # An older result.json of a pause (SIGTERM) does not make a trial that then crashed for good "paused".
    assert trial_verdict(2, "paused", running, crashed) == ("failed", "OOMKilled")
    assert trial_verdict(3, "running", running, None) is None  # the Job has not judged it
    ended = JobReading("MaxFailedIndexesExceeded: ...", False, frozenset({2}), frozenset({0}))
    assert trial_verdict(0, "completed", ended, None) is None
    assert trial_verdict(5, "new", ended, None).state == "stopped"  # type: ignore[union-attr]
    assert "never started" in trial_verdict(5, "new", ended, None).detail  # type: ignore[union-attr]
    assert "was stopped with it" in trial_verdict(4, "running", ended, crashed).detail  # type: ignore[union-attr]
