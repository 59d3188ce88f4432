"""A trial at an undecided rung waits there instead of training past it, when something will start it again
(docs/design.md §6.6; Li et al., 2020: a configuration is promoted only once it is in the top 1/η at its rung, and a
worker with nothing to promote starts a new configuration).

At a rung fewer than ``reduction`` combinations have reached, a trial whose siblings could still reach it (a
combination without a score there has a trial that has not ended) checkpoints and ends ``paused`` with the reason
``waiting at rung R timesteps for N more combinations (K of M there)``, so that its slot goes to a queued trial.
Started again, it is judged before anything is built (:func:`decide_waiting`, about a second, no TensorFlow):
pruned there (``result.json`` says ``pruned``, exit 0), promoted (it resumes from the checkpoint at the rung,
exactly, as every resume does), or still waiting (exit 143 again). A trial with nobody left to compare against goes
on.

Only a scheduler that starts waiting trials again may let them wait: the local queue (:mod:`tfcli.local.queue`)
sets :data:`WAIT_ENV` for its trials. Without it (a trial started on its own, a GKE sweep's Job) an undecided rung is
judged again while the trial trains on, as before.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.kernel.files import atomic_write_json
from trainer.kernel.spec.early_stop import TrialEarlyStop
from trainer.kernel.spec.outcomes import EXIT_PAUSED
from trainer.result_file import FILENAME
from trainer.rung_scores import SweepRungs
from trainer.rungs import judge

log = logging.getLogger(__name__)

WAIT_ENV = "TFCLI_RUNG_WAIT"  # "1": whoever started this trial starts it again once its rung is decided
PREFIX = "waiting at rung "


def may_wait() -> bool:
    """Whether this trial was started by a scheduler that starts waiting trials again."""
    return os.environ.get(WAIT_ENV) == "1"


@dataclass(frozen=True)
class Standing:
    """A trial's standing at a rung: ``"prune"``, ``"go"`` (promoted, or nobody left to compare against) or
    ``"wait"``, and why in words."""

    decision: str
    words: str


def standing(rungs: SweepRungs, own: int, rung: int) -> Standing:
    """Trial ``own``'s standing at ``rung`` from what its sweep has published."""
    settings = rungs.settings
    scores = rungs.scores(rung)
    verdict = judge(own // settings.seeds, scores, settings.reduction)
    if verdict is not None:
        if verdict.goes_on:
            return Standing("go", f"IQM {verdict.score:,.1f}, in the top {verdict.kept} of {verdict.combinations}")
        return Standing("prune", verdict.reason(rung, settings.reduction))
    if not rungs.could_still_decide(rung):
        return Standing("go", f"{len(scores)} combination(s) at rung {rung:,} and nobody left to compare against")
    missing = settings.reduction - len(scores)
    return Standing(
        "wait",
        f"{PREFIX}{rung:,} timesteps for {missing} more combination{'s' if missing > 1 else ''} "
        f"({len(scores)} of {settings.reduction} there)",
    )


def waiting_rung(result: dict[str, Any]) -> int | None:
    """The rung a run's ``result.json`` says it waits at (None: it does not wait)."""
    reason = str(result.get("reason") or "")
    if result.get("status") != "paused" or not reason.startswith(PREFIX):
        return None
    number = reason[len(PREFIX) :].split(" ", 1)[0].replace(",", "")
    return int(number) if number.isdigit() else None


def decide_waiting(
    settings: TrialEarlyStop | None, rungs: SweepRungs | None, own: int, output: Path, result: dict[str, Any]
) -> tuple[int, str] | None:
    """Before anything is built: a trial that waits at a rung is pruned there (exit 0), or waits on (exit 143), or
    goes on (None: train from the checkpoint at the rung)."""
    rung = waiting_rung(result)
    if settings is None or rungs is None or rung is None:
        return None
    now = standing(rungs, own, rung)
    if now.decision == "prune":
        atomic_write_json(output / FILENAME, {**result, "status": "pruned", "reason": now.words})
        return 0, f"pruned after {int(result.get('timesteps', 0)):,} timesteps: {now.words}"
    if now.decision == "wait" and may_wait():
        return EXIT_PAUSED, f"still {now.words}"
    log.info("early stop: rung %s: %s; going on from the checkpoint there", f"{rung:,}", now.words)
    return None
