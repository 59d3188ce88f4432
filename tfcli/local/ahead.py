"""The trial a local sweep's queue starts ahead of its turn (the trial's side: :mod:`trainer.ahead`).

Where ``--parallel`` leaves a core idle (fewer trials at a time than the cores fit) and every slot trains, the queue
launches the trial that would start next, held: its supervisor starts, its
trainer forks from the warm trainer, builds its agent and traces TensorForce's graphs on the core the training
trial leaves idle (a trial of ``--parallel 1`` keeps about one of two cores busy), then waits. When a slot frees,
the queue releases it instead of launching it, and it trains at once: about 3 s of a 1,500-timestep PPO CartPole
trial's start-up leave the sweep's critical path (bench/README.md, eleventh pass). One trial at most is held, the
one the queue's own order picks next, so no trial starts earlier or in another order than it would have.

The hold is a file in the trial's folder naming the queue's pid; ``status`` shows such a trial ``ready``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from trainer.ahead import HOLD_VARIABLE

if TYPE_CHECKING:
    from tfcli.experiments.store import ExperimentDir

HELD_NAME = "held"


def held_path(trial: ExperimentDir) -> Path:
    return trial.root / HELD_NAME


def is_held(trial: ExperimentDir) -> bool:
    """Whether a running trial was started ahead and has not been given its slot: getting ready, waiting, or pausing
    itself because its queue died (``trainer.ahead.wait_for_turn``); it has not trained."""
    return held_path(trial).exists()


def clear_stale_hold(trial: ExperimentDir, env: dict[str, str] | None) -> None:
    """Before a launch that holds nothing: a dead queue's hold file must not make the run read ``ready``."""
    if HOLD_VARIABLE not in (env or {}):
        held_path(trial).unlink(missing_ok=True)


class Ahead:
    """The one trial a queue has started ahead of its turn, if any."""

    def __init__(self) -> None:
        self.trial: ExperimentDir | None = None

    def holds(self, trial: ExperimentDir) -> bool:
        return self.trial is not None and self.trial.name == trial.name

    def hold(self, trial: ExperimentDir) -> dict[str, str]:
        """Hold ``trial`` back (this process's pid in its hold file); the variables its launch passes on."""
        path = held_path(trial)
        part = path.with_name(f".{HELD_NAME}.{os.getpid()}")
        part.write_text(f"{os.getpid()}\n")
        part.replace(path)  # whole or absent: a trainer reading a half-written pid would not wait
        self.trial = trial
        return {HOLD_VARIABLE: str(path)}

    def release(self) -> None:
        """Let the held trial train (it notices within :data:`trainer.ahead.POLL_SECONDS`)."""
        if self.trial is not None:
            held_path(self.trial).unlink(missing_ok=True)
        self.trial = None
