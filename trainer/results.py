"""``result.json``: how the run ended, written atomically so a reader never sees half of it.

``status`` is "completed" (the budget is spent; exit 0), "paused" (stopped by SIGTERM/SIGINT after a checkpoint;
exit 143 — or by the experiment's ``max_cost``, exit 3, see :mod:`trainer.hooks.cost_limit`; ``reason`` says which),
"pruned" (a trial of an early-stopped sweep stopped itself at a rung, after a checkpoint; exit 0, ``reason`` says
why: :mod:`trainer.hooks.early_stop`) or "failed" (with ``error``; exit 1, or 2 when the input was at fault). The
numbers cover the whole run, resumed segments included; ``timesteps_per_second`` is timesteps over training wall
time; ``starts`` counts the trainer's starts on the run (what ``max_cost`` adds node time for,
trainer/kernel/budget.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from trainer.kernel.budget import starts_seen
from trainer.kernel.files import atomic_write_json
from trainer.kernel.spec.outcomes import EXIT_COMPLETED, EXIT_COST_LIMIT, EXIT_FAILED, EXIT_PAUSED, paused_at_cost_limit
from trainer.kernel.state import RunState
from trainer.result_file import FILENAME, read_result

# A pruned trial has ended for good: exit 0, so that its Job index completes and is not run again.
EXIT_CODES = {"completed": EXIT_COMPLETED, "pruned": EXIT_COMPLETED, "paused": EXIT_PAUSED, "failed": EXIT_FAILED}
# ... except a sweep's trial (``--output-parent``, a GKE sweep's slot): exit 0 ends its index of the Indexed Job
# as completed, where 3 would fail it (``FailIndex``) and half the trials at their limit would fail the whole Job as
# a fault all trials share (``maxFailedIndexes``). ``result.json`` still says ``paused`` with the reason, which is
# what tfcli reads.
TRIAL_COST_LIMIT_EXIT_CODE = EXIT_COMPLETED
_COUNTS = ("timesteps", "episodes", "wall_seconds", "timesteps_per_second", "mean_return_last_100", "updates")


@dataclass(frozen=True)
class Result:
    status: str
    timesteps: int
    episodes: int
    wall_seconds: float
    timesteps_per_second: float
    mean_return_last_100: float | None
    updates: int
    starts: int = 0  # times the trainer started on the run (each a node's start-up and scale-down on GKE)
    error: str | None = None
    reason: str | None = (
        None  # why a paused run stopped (the signal's name, "max_cost reached ($X of $Y)") or was pruned
    )

    @classmethod
    def of(cls, status: str, state: RunState, error: str | None = None, reason: str | None = None) -> Result:
        wall = state.wall_seconds
        return cls(
            status=status,
            timesteps=state.timesteps,
            episodes=state.episodes,
            wall_seconds=round(wall, 3),
            timesteps_per_second=round(state.timesteps / wall, 2) if wall > 0 else 0.0,
            mean_return_last_100=None if state.mean_recent_return is None else round(state.mean_recent_return, 4),
            updates=state.updates,
            starts=state.starts,
            error=error,
            reason=reason,
        )

    @property
    def cost_limited(self) -> bool:
        return paused_at_cost_limit(self.status, self.reason)

    @property
    def exit_code(self) -> int:
        return EXIT_COST_LIMIT if self.cost_limited else EXIT_CODES[self.status]

    def exit_code_of(self, *, trial: bool) -> int:
        """The exit code of a run, or of a sweep's trial (``trial``), which ends at its cost limit with 0."""
        return TRIAL_COST_LIMIT_EXIT_CODE if trial and self.cost_limited else self.exit_code

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        for optional in ("error", "reason"):
            if data[optional] is None:
                del data[optional]
        return data

    @classmethod
    def failed_before_resume(cls, output: Path, error: str) -> Result:
        """A run that failed before it knew its counters (every checkpoint corrupt, the pool never came up): the
        numbers of the ``result.json`` already in ``output``, with the failure — a resume that restored nothing
        must not report that nothing was done (0 where the last segment ended at 3,540 timesteps)."""
        return cls.ended_before_start(output, "failed", error=error)

    @classmethod
    def ended_before_start(
        cls, output: Path, status: str, *, error: str | None = None, reason: str | None = None
    ) -> Result:
        """A run that ended ``status`` before it trained: the counters of the ``result.json`` already in ``output``
        (zeros without one), with the new ending."""
        previous = read_result(output)
        try:
            kept = {name: previous[name] for name in _COUNTS}
            starts = starts_seen(previous.get("starts"), 0.0)  # kept where the previous result counted them
            return cls(status=status, error=error, reason=reason, starts=starts, **kept)
        except (KeyError, TypeError):  # none yet (or unreadable, or without the counts): nothing to keep
            return cls.of(status, RunState(), error=error, reason=reason)

    def write(self, output: Path) -> None:
        atomic_write_json(output / FILENAME, self.as_json())


def checkpointed_timesteps(output: Path) -> int:
    """The timesteps ``output``'s ``result.json`` counts when a checkpoint backed them (0: none, unreadable, or
    ``failed``). Every other ending saves a checkpoint before the result is written
    (trainer/hooks/checkpointing.py), so such a result says a checkpoint existed — the evidence for folders from
    before :data:`trainer.checkpoints.CHECKPOINTED`; a failed run may have failed before its first one."""
    data = read_result(output)
    value, status = data.get("timesteps", 0), data.get("status")
    return value if isinstance(value, int) and value > 0 and status != "failed" else 0


def withdraw(output: Path) -> None:
    """Remove the previous segment's ``result.json`` as a new segment starts training: it said how that segment
    ended, and a segment killed outright (SIGKILL, a lost node) writes no result of its own, so a kept one would
    report the old ending and counts — ``paused`` at the previous budget for an extended run, ``pruned`` with the old
    reason for an extended pruned trial — where the run is in fact interrupted past them. Without it, tfcli reads
    the run as running while its process lives, else as interrupted, its counts from ``progress.jsonl``
    (docs/design.md §9.3)."""
    (output / FILENAME).unlink(missing_ok=True)
