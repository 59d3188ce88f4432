"""Pause the run once it has cost the experiment's ``max_cost``, wherever it runs and whether or not anyone watches.

The stack hands the learner its run's hourly price (``TFCLI_HOURLY_PRICE``, dollars per hour of what the run holds: its
learner's node, its CPU nodes, their GPUs and disks and, on a cluster of its own, GKE's fee; see
:mod:`infra.run_price`). The accrued cost is that price times the run's training wall time, which counts the segments
before a resume (the checkpoint's ``wall_seconds``), so a run paused and resumed keeps counting where it stopped. When
it reaches the limit the hook asks the loop to stop: the run checkpoints, writes ``status: paused`` with the reason in
``result.json`` and exits :data:`trainer.kernel.spec.outcomes.EXIT_COST_LIMIT`, which ends its Job for good (a plain
pause, 143, would be started again by the Job and pause again at once, keeping a GPU node up). A sweep's trial exits 0
instead (:data:`trainer.results.TRIAL_COST_LIMIT_EXIT_CODE`): its index of the Indexed Job ends without counting as
failed, so trials at their limit never fail the sweep's Job as a shared fault would. Raising ``max_cost`` and starting
the experiment again (``resume -s`` for a sweep, whose new Job runs such a trial again) continues it from the
checkpoint.

**A sweep's budget** (the sweep file's ``max_cost``, written into each trial's spec as ``sweep_budget``): the hook
also adds what the sweep's other trials have cost, from the files they published in the shared results folder
(:mod:`trainer.hooks.sweep_spend`), and pauses the trial once the trials together reach the sweep's limit, exactly as at
its own limit (``status: paused``, a ``max_cost reached`` reason naming the sweep; a GKE trial exits 0). A trial the
sweep's limit already holds ends before anything is built (:func:`sweep_spent`). Raising the sweep's ``max_cost``
and ``resume -s`` continues them: one rule, kept by the trials, locally and on GKE.

**Node time.** On GKE a node bills before the first step (start-up, driver, image pull) and after the pod ends (the
autoscaler's scale-down delay), at every start of the trainer: the stack hands the learner a stated allowance per
start (``TFCLI_START_ALLOWANCE_SECONDS``, :data:`trainer.kernel.budget.START_ALLOWANCE_SECONDS`), and the accrued cost
is the price times training time plus that allowance for each start the run has made, this one included
(:func:`trainer.kernel.budget.counted_usd`, ``result.json``'s ``starts``). So the run pauses that much earlier, leaving
room for the node time still to bill after the pause. A local run gets no allowance (no node starts for it). What is
still left out — scheduling waits, a preempted node's minutes after its last checkpoint — keeps the figure an estimate:
``status`` warns at 80 %.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

from trainer.hooks import Hook
from trainer.hooks.sweep_spend import SweepSpend, billed_seconds_of
from trainer.kernel.budget import counted_usd
from trainer.kernel.spec import Experiment
from trainer.kernel.spec.outcomes import COST_LIMIT_REASON
from trainer.kernel.spec.sweep_budget import SweepBudget
from trainer.kernel.state import RunState
from trainer.results import Result
from trainer.signals import StopRequest

log = logging.getLogger(__name__)

HOURLY_PRICE_VARIABLE = "TFCLI_HOURLY_PRICE"
START_ALLOWANCE_VARIABLE = "TFCLI_START_ALLOWANCE_SECONDS"


def _non_negative(variable: str, what: str, text: str | None) -> float | None:
    """An environment variable's value as a number >= 0; None when unset or empty. Raises ValueError otherwise."""
    if text is None or not text.strip():
        return None
    problem = f"{variable}: expected {what} (a number >= 0), got '{text}'"
    try:
        value = float(text)
    except ValueError:
        raise ValueError(problem) from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(problem)
    return value


def parse_hourly_price(text: str | None) -> float | None:
    """``TFCLI_HOURLY_PRICE``'s value as dollars per hour; None when unset or empty. Raises ValueError otherwise."""
    return _non_negative(HOURLY_PRICE_VARIABLE, "dollars per hour", text)


def parse_start_allowance(text: str | None) -> float:
    """``TFCLI_START_ALLOWANCE_SECONDS``'s value (0 when unset: no node starts for a local run). Raises ValueError."""
    return _non_negative(START_ALLOWANCE_VARIABLE, "seconds of node time per start", text) or 0.0


def cost_limit_reason(accrued: float, max_cost: float) -> str:
    return f"{COST_LIMIT_REASON} (${accrued:,.2f} of ${max_cost:,.2f})"


class CostLimit(Hook):
    """Requests a stop once ``hourly_price`` x (training wall time + ``allowance_seconds`` per start) reaches
    ``max_cost`` (None: the run has no limit of its own), or once the sweep's trials together reach its limit
    (``sweep``)."""

    def __init__(
        self,
        max_cost: float | None,
        hourly_price: float,
        stop: StopRequest,
        sweep: SweepSpend | None = None,
        allowance_seconds: float = 0.0,
    ) -> None:
        self.max_cost = max_cost
        self.hourly_price = hourly_price
        self.sweep = sweep
        self.allowance_seconds = allowance_seconds
        self._stop = stop

    def accrued(self, state: RunState) -> float:
        """Dollars the run has cost so far (all its segments, and node time for each of its starts)."""
        return counted_usd(self.hourly_price, state.wall_seconds, state.starts, self.allowance_seconds)

    def check(self, state: RunState) -> None:
        """Ask for the stop when a limit is reached (also before the first step of a resumed run)."""
        if self._stop.requested:
            return
        accrued = self.accrued(state)
        reason = None
        if self.max_cost is not None and accrued >= self.max_cost:
            reason = cost_limit_reason(accrued, self.max_cost)
        elif self.sweep is not None:
            reason = self.sweep.spent(accrued)
        if reason is not None:
            log.warning("%s: checkpointing and pausing; raise max_cost to continue", reason)
            self._stop.request(reason)

    def after_step(self, state: RunState) -> None:
        self.check(state)


def cost_limit(
    experiment: Experiment, output: Path, price: float | None, allowance_seconds: float, stop: StopRequest
) -> CostLimit | None:
    """The hook for a run with a price and a limit (its own ``max_cost``, its sweep's, or both); None otherwise."""
    budget = experiment.sweep_budget
    if not price or (experiment.max_cost is None and budget is None):
        return None
    sweep = None if budget is None else SweepSpend(budget, experiment.name, output, price, allowance_seconds)
    return CostLimit(experiment.max_cost, price, stop, sweep, allowance_seconds)


def sweep_spent(
    output: Path, budget: SweepBudget | None, name: str, price: float | None, allowance_seconds: float = 0.0
) -> Result | None:
    """A trial whose sweep's trials together have already cost the sweep's ``max_cost``: before anything is built,
    its ``result.json`` says ``paused`` with the reason (its counters kept) and the result is returned for the exit
    code; None when it may train. A trial started by a queue or a worker after the budget ran out ends in a second."""
    if budget is None or not price:
        return None
    own = counted_usd(price, billed_seconds_of(output, allowance_seconds))
    reason = SweepSpend(budget, name, output, price, allowance_seconds).spent(own)
    if reason is None:
        return None
    result = Result.ended_before_start(output, "paused", reason=reason)
    result.write(output)
    return result
