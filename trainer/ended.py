"""What ``trainer run`` decides before it builds anything: whether the output folder's run has nothing to train.

Run again on the folder of a run that ended, the trainer continues it from its newest checkpoint (docs/design.md
§6.4) — a completed run whose budget was raised since (``resume --total-timesteps N``) trains exactly the rest. Two
cases need no TensorFlow, no environment and no agent, and so end in about a second:

- **already done**: ``result.json`` says ``completed`` and its counters reach the spec's budget, exit 0. A GKE
  sweep's Job made by ``resume -s`` gives such a trial no pod (infra/sweep_manifests.py); one made by another change
  (``--parallel``, a new image) runs every trial again, and its completed ones end here, not retrained;
- **pruned**: ``result.json`` says ``pruned`` and nobody released it — ``resume --include-pruned`` (with a raised
  budget) writes ``early_stop_released`` into the trial's folder first (:func:`release`; locally its results folder,
  on GKE its bucket prefix). So a pruned trial stays pruned whatever else runs it again: a GKE Job replaced by a new
  image, an edited ``envs/``, a new tfcli version or an older checkout's stack file (none of which holds it), exit 0;
- **waiting at a rung** (:mod:`trainer.rung_wait`, :func:`trainer.hooks.early_stop.waiting_decided`): judged again;
  pruned there (exit 0) or still waiting (exit 143).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.kernel.budget import Budget
from trainer.result_file import read_result

# In a pruned trial's folder once ``resume --include-pruned`` released it (and kept there: a released trial that
# pauses, is preempted or crashes resumes without early stop, trainer/hooks/early_stop.py).
RELEASED = "early_stop_released"


@dataclass(frozen=True)
class Ended:
    """The trainer ends at once with ``exit_code``, saying ``message``."""

    exit_code: int
    message: str


def release_note(result: dict[str, Any]) -> str:
    """What ``early_stop_released`` holds: the pruning it overrides (its reason and timesteps)."""
    return json.dumps({"pruned": result.get("reason"), "timesteps": result.get("timesteps")})


def release(output: Path) -> None:
    """Release the pruned run in ``output`` to train on (``resume --include-pruned``, on this machine)."""
    from trainer.kernel.files import atomic_write_text

    atomic_write_text(output / RELEASED, release_note(read_result(output)))


def nothing_to_train(output: Path, budget: Budget) -> Ended | None:
    """Whether the run in ``output`` ends at once (None: train, or continue, as usual)."""
    result = read_result(output)
    status = str(result.get("status", ""))
    if status == "pruned" and not (output / RELEASED).is_file():
        why = f" ({result['reason']})" if result.get("reason") else ""
        return Ended(0, f"pruned{why}: it stays pruned (resume -s --include-pruned with a raised budget trains it on)")
    if status == "completed" and budget.reached_by(result):
        return Ended(0, f"already completed: {result.get('timesteps', 0):,} timesteps, {budget.describe()} budget")
    return None
