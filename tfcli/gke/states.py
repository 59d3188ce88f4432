"""A GKE run's state in words, one rule for experiments and for a sweep's trials.

While its stack is deployed the run's own ``result.json`` in the bucket says how it ended or paused, and the stack's
``suspended`` output says whether its Job may run; once the stack is gone (or never came up) the last Pulumi
operation and the run record say it.
"""

from __future__ import annotations

from typing import Any

from tfcli.experiments.record import RunRecord
from tfcli.gke.stacks import StackState
from tfcli.gke.waiting import FINAL
from trainer.kernel.spec.outcomes import paused_at_cost_limit


def paused_at_max_cost(result: dict[str, Any]) -> bool:
    """The trainer paused itself at ``max_cost``: its Job has ended, whatever ``suspend`` says."""
    return paused_at_cost_limit(result.get("status"), result.get("reason"))


def deployed_state(result: dict[str, Any], *, suspended: bool, started: bool = True) -> str:
    """A deployed run's state from its ``result.json`` and its Job's ``suspend`` (``started``: it wrote anything)."""
    reported = result.get("status")
    if reported in FINAL:
        return str(reported)
    if paused_at_max_cost(result):
        return "paused"
    if not started:
        return "new"
    if suspended:
        return "paused" if reported == "paused" else "pausing"
    return "running"


def undeployed_state(record: RunRecord, stack: StackState) -> str:
    """A run whose stack has no outputs: being deployed or destroyed, stopped, failed, or new."""
    if stack.last_result == "in-progress":
        return "deploying" if stack.last_kind == "update" else "destroying"
    if record.stopped or stack.last_kind == "destroy":
        return "stopped"
    if stack.last_result == "failed":
        return "failed"
    return "new"
