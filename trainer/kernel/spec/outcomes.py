"""How a run ends, as the processes tell each other: the exit codes and the stop reason that the trainer writes, the
Job's ``podFailurePolicy`` (infra) matches and tfcli reads back, defined once here.

They live in trainer.kernel.spec because that is the layer tfcli, trainer and infra may all import (pyproject's
``[tool.importlinter]``); a value written in two places drifts, and a drifted exit code turns a pause into a
failure (docs/design.md §7).
"""

from __future__ import annotations

import signal

EXIT_COMPLETED = 0  # the budget is spent, or a trial was pruned (its Job index completes)
EXIT_FAILED = 1  # the run failed
EXIT_INVALID = 2  # the spec or a flag is invalid: retrying does not help
EXIT_COST_LIMIT = 3  # paused by the experiment's max_cost: the Job ends (a 143 would start it again)
EXIT_PAUSED = 128 + signal.SIGTERM  # 143: checkpointed and stopped by SIGTERM/SIGINT; resumable

COST_LIMIT_KEY = "max_cost"  # what result.json's ``reason`` starts with when max_cost paused the run
COST_LIMIT_REASON = f"{COST_LIMIT_KEY} reached"  # the words the trainer writes there, before the dollars


def paused_at_cost_limit(status: object, reason: object) -> bool:
    """Whether ``result.json``'s ``status`` and ``reason`` say the run paused itself at its ``max_cost``."""
    return status == "paused" and str(reason or "").startswith(COST_LIMIT_KEY)
