"""What a sweep's Job adds to the bucket's view of its trials (tfcli/gke/sweep_job.py), on Job documents as the Job
controller stand-in (tests/job_controller.py) writes them."""

from __future__ import annotations

from typing import Any

import pytest
from job_controller import index_ranges

from tfcli.gke.pod_states import PodState
from tfcli.gke.sweep_job import JobReading, SlotTable, parse_indexes, sweep_state, trial_verdict, trials_job


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


def test_a_reading_keeps_the_completed_indexes_too() -> None:
    reading = JobReading.of(job([], failed="3", completed="0-2,4"))
    assert reading == JobReading(None, False, frozenset({3}), frozenset({0, 1, 2, 4}))
    assert JobReading.of({}) == JobReading(None, False, frozenset(), frozenset())


def test_the_newest_trials_job_is_the_one_read() -> None:
    def made(at: str | None, failed: str) -> dict[str, Any]:
        document = job([], failed=failed)
        document["metadata"]["creationTimestamp"] = at
        return document

    older, newer = made("2026-11-26T10:00:00Z", "1"), made("2026-11-26T11:00:00Z", "2")
    assert trials_job([older, newer]) == trials_job([newer, older]) == JobReading.of(newer)
    unstamped = made(None, "3")  # not stamped yet: older than any stamped one
    assert trials_job([newer, unstamped]) == trials_job([unstamped, newer]) == JobReading.of(newer)
    bare = {"metadata": None, "status": {"failedIndexes": "5"}}  # no metadata at all: not a trials Job
    assert trials_job([bare]) is None


def test_a_failed_index_of_a_trial_paused_at_max_cost_stays_paused_with_why() -> None:
    job_with_failure = JobReading(None, False, frozenset({2}), frozenset())
    paused_pod = PodState("trials-1-2-00001", "trial", "paused", "exit 3")
    assert trial_verdict(2, "running", job_with_failure, paused_pod) == ("paused", "exit 3")
    silent = PodState("trials-1-2-00001", "trial", "paused", "")
    assert trial_verdict(2, "running", job_with_failure, silent) == ("paused", "max_cost reached")
    # result.json's own reason comes first, before the pod's
    assert trial_verdict(2, "paused", job_with_failure, paused_pod, paused_for="max_cost reached ($2.00)") == (
        "paused",
        "max_cost reached ($2.00)",
    )
    assert trial_verdict(2, "paused", job_with_failure, None, paused_for="max_cost") == ("paused", "max_cost")


def test_a_failed_index_without_a_pod_says_the_job_failed_it() -> None:
    job_with_failure = JobReading(None, False, frozenset({2}), frozenset())
    assert trial_verdict(2, "running", job_with_failure, None) == (
        "failed",
        "its index failed (the Job's failedIndexes)",
    )
    unknown = PodState("trials-1-2-00003", "trial", "running", "")
    assert trial_verdict(2, "running", job_with_failure, unknown) == (
        "failed",
        "its index failed (the Job's failedIndexes)",
    )


def test_a_failed_job_stops_the_trials_that_had_not_ended_and_says_how() -> None:
    ended = JobReading("BackoffLimitExceeded: too many", False, frozenset(), frozenset())
    pod = PodState("trials-1-4-00001", "trial", "running", "")
    assert trial_verdict(4, "running", ended, pod) == (
        "stopped",
        "the sweep's Job failed (BackoffLimitExceeded: too many); this trial was stopped with it",
    )
    assert trial_verdict(5, "new", ended, None) == (
        "stopped",
        "the sweep's Job failed (BackoffLimitExceeded: too many); this trial never started",
    )
    for state in ("completed", "pruned", "failed", "paused"):  # ended already (paused: at max_cost)
        assert trial_verdict(4, state, ended, pod) is None


EARLIER = "it failed in an earlier Job (resume -s --retry-failed runs it again)"


def test_a_held_trial_that_had_not_ended_failed_in_an_earlier_job() -> None:
    quiet = JobReading(None, False, frozenset(), frozenset())
    for state in ("new", "running", "waiting"):
        assert trial_verdict(3, state, quiet, None, held=True) == ("failed", EARLIER)
    for state in ("completed", "pruned", "failed", "paused"):  # it ended there: the bucket's state stands
        assert trial_verdict(3, state, quiet, None, held=True) is None
    # Held, its index means nothing (another trial's slot may carry it): not read as failed nor stopped.
    other = JobReading("BackoffLimitExceeded: too many", False, frozenset({3}), frozenset())
    pod = PodState("trials-2-3-00001", "trial", "failed", "OOMKilled")
    assert trial_verdict(3, "completed", other, pod, held=True) is None
    assert trial_verdict(3, "running", other, pod, held=True) == ("failed", EARLIER)
    # A pause at max_cost that result.json records comes first, held or not.
    assert trial_verdict(3, "paused", quiet, None, paused_for="max_cost reached", held=True) == (
        "paused",
        "max_cost reached",
    )


@pytest.mark.parametrize(
    ("outputs", "trials", "table"),
    [
        ({"slots": [4, 1, 7]}, 9, (4, 1, 7)),
        ({"slots": ["2", "0"]}, 9, (2, 0)),  # as a stack output may read back: strings of digits
        ({"slots": []}, 3, ()),  # a re-run Job with nothing left to train
        ({}, 3, (0, 1, 2)),  # deployed before the output existed: slot k ran trial k
        ({"slots": None}, 2, (0, 1)),
        ({"slots": "1,2"}, 2, (0, 1)),  # not a list
        ({"slots": [1, "x"]}, 2, (0, 1)),  # not all slots are trial numbers
        ({"slots": [1, -2]}, 2, (0, 1)),
        ({"slots": [1, None]}, 2, (0, 1)),
    ],
)
def test_the_slot_table_is_read_from_the_stack_outputs(outputs: dict[str, Any], trials: int, table: tuple) -> None:
    read = SlotTable.of(outputs, trials)
    assert read == SlotTable(table) and all(type(trial) is int for trial in read.trials)


@pytest.mark.parametrize(
    ("workers", "read"), [(True, True), ("true", True), ("True", True), (False, False), (None, False)]
)
def test_workers_are_read_from_the_stack_outputs(workers: Any, read: bool) -> None:
    assert SlotTable.of({"slots": [0, 2], "workers": workers}, 3) == SlotTable((0, 2), read)
    assert SlotTable.of({"workers": workers}, 2) == SlotTable((0, 1), read)


def test_a_worker_pod_is_no_trial_but_a_held_trial_stays_held() -> None:
    """Early stopping's pods are workers (trainer/sweep_worker.py): no index, pod or failed index is one trial's."""
    table = SlotTable((0, 2, 3), workers=True)
    assert [table.trial(slot) for slot in (0, 1, 2)] == [None, None, None]
    assert table.by_trial({0: "a", 1: "b"}) == {}
    assert table.slot(1) is None and table.slot(2) == 1  # trial 1 held by a resume
    by_index = JobReading("BackoffLimitExceeded", False, frozenset({0}), frozenset({1}))
    assert table.reading(by_index) == JobReading("BackoffLimitExceeded", False, frozenset(), frozenset())


def test_a_slot_is_its_trial_and_a_trial_its_slot() -> None:
    table = SlotTable((4, 1, 7))
    assert [table.trial(slot) for slot in (-1, 0, 1, 2, 3)] == [None, 4, 1, 7, None]
    assert [table.slot(trial) for trial in (4, 1, 7, 0, 2)] == [0, 1, 2, None, None]
    assert SlotTable(()).trial(0) is None and SlotTable(()).slot(0) is None
    assert table.by_trial({0: "a", 2: "c", 3: "lost", -1: "lost"}) == {4: "a", 7: "c"}
    assert table.by_trial({}) == {}


def test_a_reading_by_slot_becomes_a_reading_by_trial() -> None:
    table = SlotTable((4, 1, 7))
    by_slot = JobReading("FailedIndexes: Job has failed indexes", True, frozenset({0, 2, 5}), frozenset({1, 6}))
    assert table.reading(by_slot) == JobReading(
        "FailedIndexes: Job has failed indexes", True, frozenset({4, 7}), frozenset({1})
    )
    quiet = JobReading(None, False, frozenset(), frozenset({0}))
    assert table.reading(quiet) == JobReading(None, False, frozenset(), frozenset({4}))
