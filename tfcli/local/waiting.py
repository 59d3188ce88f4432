"""What the local queue (:mod:`tfcli.local.queue`) needs of early stopping's waiting trials (docs/design.md §6.6):
the order that fills rungs early, and whether a trial that waits at a rung should be started again.

A trial of an early-stopped sweep that the queue starts may wait at an undecided rung (:mod:`trainer.rung_wait`):
it checkpoints and ends, state ``waiting``, and its slot goes to the next trial. The queue starts it again once the
rung is decided or nobody is left to decide it — judged here by the trainer's own rule on the same published
scores, so the trial started again does what the queue expected (pruned in about a second, or promoted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcli.experiments.store import ExperimentDir
    from trainer.rung_scores import SweepRungs


def interleaved(trials: list[ExperimentDir], seeds: int) -> list[ExperimentDir]:
    """Trials in the order that fills rungs early, by the one rule a GKE sweep's workers claim by too
    (:func:`trainer.sweep_queue.fill_order`; trial ``k`` of ``<sweep>-<k>``)."""
    from trainer.sweep_queue import fill_order

    by_index = {int(trial.name.rsplit("-", 1)[1]): trial for trial in trials}
    return [by_index[k] for k in fill_order(list(by_index), seeds)]


class Rungs:
    """The sweep's rungs as its trials publish them, read once per queue (scores are kept: they never change)."""

    def __init__(self, trials: list[ExperimentDir]) -> None:
        self._rungs: SweepRungs | None = None
        for trial in trials[:1]:
            from trainer.hooks.early_stop import sweep_rungs
            from trainer.kernel.spec.early_stop import TrialEarlyStop

            data = trial.spec_view().early_stop
            if data is not None:
                found = sweep_rungs(TrialEarlyStop.model_validate(data), trial.name, trial.results)
                self._rungs = found[0] if found is not None else None

    def ready(self, trial: ExperimentDir) -> bool:
        """Whether the waiting ``trial`` should start again: its rung is decided, or nobody is left to decide it."""
        from trainer.rung_wait import standing, waiting_rung

        rung = waiting_rung(trial.result())
        if self._rungs is None or rung is None:
            return True
        index = self._rungs.settings.index_of(trial.name)
        return index is None or standing(self._rungs, index, rung).decision != "wait"
