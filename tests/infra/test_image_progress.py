"""A trainer build's progress line (infra/image_progress.py): what the build provider writes on stderr and tfcli's
display reads back from the engine's diagnostic events — status, time since submission, the running step."""

from __future__ import annotations

import pytest

from infra.image_progress import BuildProgress, clock, parse, running_step, step_label

IMAGE = "us-central1-docker.pkg.dev/p/tfcli/trainer:abc123-cpu"
BUILD = {
    "id": "b-1",
    "status": "WORKING",
    "steps": [
        {"name": "gcr.io/cloud-builders/docker", "args": ["build", "--file", "trainer/Dockerfile", "."]},
        {"name": "gcr.io/cloud-builders/docker", "id": "push", "args": ["push"]},
    ],
}
LOG = "starting build\n\nFETCHSOURCE\nBUILD\nStep #0: Sending build context\nStep #0: done\nStep #1: pushing\n"


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (9, "9s"), (59, "59s"), (60, "1m00s"), (65, "1m05s"),
                                               (3725, "62m05s"), (-3, "0s")])  # fmt: skip
def test_elapsed_time_reads_as_minutes_and_seconds(seconds: int, text: str) -> None:
    assert clock(seconds) == text


def test_the_running_step_is_the_last_one_the_log_has_reached() -> None:
    assert running_step(LOG) == 1
    assert running_step('Step #0: a\nStep #12: b\nStep #3 - "x": c\n') == 3
    assert running_step("FETCHSOURCE\n  Step #4 is quoted\n") is None  # only a line that starts with it
    assert running_step("") is None and running_step(None) is None


def test_a_step_is_labelled_by_its_id_or_its_builder_and_first_argument() -> None:
    assert step_label(BUILD, 0) == "step 1/2 docker build"
    assert step_label(BUILD, 1) == "step 2/2 push"
    assert step_label(BUILD, 2) == "" and step_label(BUILD, -1) == "" and step_label(BUILD, None) == ""
    assert step_label({"steps": [{"name": "ubuntu"}]}, 0) == "step 1/1 ubuntu"


def test_a_working_build_says_its_step_and_a_queued_or_ended_one_does_not() -> None:
    working = BuildProgress.of(BUILD, IMAGE, 65.7, LOG)
    assert working.line() == f"tfcli build b-1 {IMAGE}: WORKING 1m05s, step 2/2 push"
    assert working.summary() == "trainer:abc123-cpu WORKING 1m05s, step 2/2 push"
    assert not working.final
    queued = BuildProgress.of({**BUILD, "status": "QUEUED"}, IMAGE, 2, LOG)
    assert queued.line() == f"tfcli build b-1 {IMAGE}: QUEUED 2s" and queued.step == ""
    ended = BuildProgress.of({**BUILD, "status": "FAILURE"}, IMAGE, 300, LOG)
    assert ended.final and ended.summary() == "trainer:abc123-cpu FAILURE 5m00s"


@pytest.mark.parametrize("status", ["QUEUED", "WORKING", "SUCCESS", "FAILURE", "TIMEOUT", "CANCELLED"])
def test_a_line_reads_back_as_what_it_says(status: str) -> None:
    progress = BuildProgress.of({**BUILD, "status": status}, IMAGE, 125, LOG)
    assert parse(progress.line()) == progress
    assert parse(progress.line() + "\n") == progress  # as the engine forwards it


def test_other_text_is_no_progress() -> None:
    assert parse("Cloud Build b-1: WORKING") is None
    assert parse(f"tfcli build b-1 {IMAGE}: working 5s") is None
    assert parse(f"tfcli build b-1 {IMAGE}: WORKING") is None
    assert parse(f"x tfcli build b-1 {IMAGE}: WORKING 5s") is None


def test_only_a_new_status_or_step_is_a_change() -> None:
    first = BuildProgress("b", IMAGE, "WORKING", 10, "step 1/2 docker build")
    assert first.changed_from(None)
    assert not BuildProgress("b", IMAGE, "WORKING", 40, "step 1/2 docker build").changed_from(first)
    assert BuildProgress("b", IMAGE, "WORKING", 40, "step 2/2 push").changed_from(first)
    assert BuildProgress("b", IMAGE, "SUCCESS", 40, "step 1/2 docker build").changed_from(first)
