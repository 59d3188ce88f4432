"""A GKE run's state in words (tfcli/gke/states.py), on made-up ``result.json`` contents, Job ``suspend`` flags,
stack states and run records: one rule for experiments and a sweep's trials."""

from __future__ import annotations

from typing import Any

import pytest

from tfcli.experiments.record import RunRecord
from tfcli.gke.stacks import StackState
from tfcli.gke.states import deployed_state, paused_at_max_cost, undeployed_state

AT_MAX_COST = {"status": "paused", "reason": "max_cost reached ($1.00 of $1.00)"}


@pytest.mark.parametrize(
    ("result", "paused"),
    [
        (AT_MAX_COST, True),
        ({"status": "paused", "reason": "max_cost"}, True),
        ({"status": "paused", "reason": "SIGTERM"}, False),
        ({"status": "paused", "reason": "the max_cost"}, False),
        ({"status": "paused"}, False),
        ({"status": "completed", "reason": "max_cost reached"}, False),
        ({}, False),
    ],
)
def test_paused_at_max_cost_is_a_pause_whose_reason_starts_with_max_cost(result: dict[str, Any], paused: bool) -> None:
    assert paused_at_max_cost(result) is paused


@pytest.mark.parametrize("final", ["completed", "pruned", "failed"])
def test_an_ended_run_is_what_its_result_says_suspended_or_not(final: str) -> None:
    assert deployed_state({"status": final}, suspended=False) == final
    assert deployed_state({"status": final, "reason": "max_cost"}, suspended=True, started=False) == final


def test_a_run_paused_at_max_cost_is_paused_even_while_its_job_may_run() -> None:
    assert deployed_state(AT_MAX_COST, suspended=False) == "paused"
    assert deployed_state(AT_MAX_COST, suspended=False, started=False) == "paused"


def test_a_run_that_wrote_nothing_is_new_whatever_its_job() -> None:
    assert deployed_state({}, suspended=False, started=False) == "new"
    assert deployed_state({}, suspended=True, started=False) == "new"


def test_a_suspended_job_is_pausing_until_the_run_says_paused() -> None:
    assert deployed_state({"status": "running"}, suspended=True) == "pausing"
    assert deployed_state({}, suspended=True) == "pausing"
    assert deployed_state({"status": "paused", "reason": "SIGTERM"}, suspended=True) == "paused"


def test_otherwise_it_is_running() -> None:
    assert deployed_state({"status": "running"}, suspended=False) == "running"
    assert deployed_state({"status": "paused", "reason": "SIGTERM"}, suspended=False) == "running"  # resumed
    assert deployed_state({}, suspended=False) == "running"


def stack(kind: str | None, result: str | None) -> StackState:
    return StackState("s", exists=True, outputs={}, last_kind=kind, last_result=result)


@pytest.mark.parametrize(
    ("kind", "result", "stopped", "state"),
    [
        ("update", "in-progress", False, "deploying"),
        ("update", "in-progress", True, "deploying"),
        ("destroy", "in-progress", False, "destroying"),
        ("destroy", "succeeded", False, "stopped"),
        ("destroy", "failed", False, "stopped"),
        ("update", "succeeded", True, "stopped"),
        ("update", "failed", True, "stopped"),
        ("update", "failed", False, "failed"),
        (None, "failed", False, "failed"),
        ("update", "succeeded", False, "new"),
        (None, None, False, "new"),
    ],
)
def test_an_undeployed_run_from_its_stacks_last_operation_and_its_record(
    kind: str | None, result: str | None, stopped: bool, state: str
) -> None:
    assert undeployed_state(RunRecord(stopped=stopped), stack(kind, result)) == state
