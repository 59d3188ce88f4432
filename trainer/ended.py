"""What ``trainer run`` decides before it builds anything: whether the output folder's run has nothing to train.

Run again on the folder of a run that ended, the trainer continues it from its newest checkpoint (docs/design.md
§6.4) — a completed run whose budget was raised since (``resume --total-timesteps N``) trains exactly the rest. Two
cases need no TensorFlow, no environment and no agent, and so end in about a second:

- **already done**: ``result.json`` says ``completed`` and its counters reach the spec's budget. A GKE sweep resumed
  with a new Job runs every index again; its completed trials end here, with exit 0, and are not retrained;
- **held** (``--hold 1,4 --index $(TRIAL_INDEX)``, what a resumed GKE sweep's Job passes): the resume left this
  trial as it ended — a failed trial without ``--retry-failed``, a pruned one without ``--include-pruned``. A trial
  that had failed (or wrote no ``result.json``: its spec was refused) exits 2, so that its index fails at once
  (``FailIndex``) and the sweep still reads failed; any other exits 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.budget import Budget

RESULT = "result.json"
HELD_FAILED_EXIT = 2  # the index fails at once, without retries (the sweep Job's FailIndex)


@dataclass(frozen=True)
class Ended:
    """The trainer ends at once with ``exit_code``, saying ``message``."""

    exit_code: int
    message: str


def previous_result(output: Path) -> dict[str, Any]:
    try:
        data = json.loads((output / RESULT).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def parse_hold(text: str | None) -> frozenset[int]:
    """``--hold``: trial indexes, ``"1,4"`` (empty: none)."""
    if not text:
        return frozenset()
    try:
        return frozenset(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        from tfcli.errors import InvalidInput

        raise InvalidInput(f"--hold: expected trial indexes such as 1,4, got '{text}'") from None


def nothing_to_train(output: Path, budget: Budget, *, held: bool) -> Ended | None:
    """Whether the run in ``output`` ends at once (None: train, or continue, as usual)."""
    result = previous_result(output)
    status = str(result.get("status", ""))
    if held:
        if status in ("failed", ""):
            why = f": {result['error']}" if result.get("error") else ""
            return Ended(HELD_FAILED_EXIT, f"held: this trial failed in an earlier Job{why} (--retry-failed reruns it)")
        return Ended(0, f"held: this trial stays {status} (its sweep was resumed without it)")
    if status == "completed" and budget.reached_by(result):
        return Ended(0, f"already completed: {result.get('timesteps', 0):,} timesteps, {budget.describe()} budget")
    return None
