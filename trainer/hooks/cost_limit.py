"""Pause the run once it has cost the experiment's ``max_cost``, wherever it runs and whether or not anyone watches.

The stack hands the learner its run's hourly price (``TFCLI_HOURLY_PRICE``, dollars per hour of what the run holds: its
learner's node, its CPU nodes, their GPUs and disks and, on a cluster of its own, GKE's fee; see
:mod:`infra.run_price`). The accrued cost is that price times the run's training wall time, which counts the segments
before a resume (the checkpoint's ``wall_seconds``), so a run paused and resumed keeps counting where it stopped. When
it reaches the limit the hook asks the loop to stop: the run checkpoints, writes ``status: paused`` with the reason in
``result.json`` and exits :data:`tfcli.spec.outcomes.EXIT_COST_LIMIT`, which ends its Job for good (a plain pause, 143,
would be started again by the Job and pause again at once, keeping a GPU node up). A sweep's trial exits 0 instead
(:data:`trainer.results.TRIAL_COST_LIMIT_EXIT_CODE`): its index of the Indexed Job ends without counting as failed, so
trials at their limit never fail the sweep's Job as a shared fault would. Raising ``max_cost`` and starting the
experiment again (``resume -s`` for a sweep, whose new Job runs such a trial again) continues it from the checkpoint.

The price covers the run's time in training, not the minutes of scheduling and start-up around it: a floor of what
the run cost, which is what a limit needs to be safe to leave unattended only with a margin (``status`` warns at 80 %).
"""

from __future__ import annotations

import logging
import math

from tfcli.spec.outcomes import COST_LIMIT_REASON
from trainer.hooks import Hook
from trainer.signals import StopRequest
from trainer.state import RunState

log = logging.getLogger(__name__)

HOURLY_PRICE_VARIABLE = "TFCLI_HOURLY_PRICE"


def parse_hourly_price(text: str | None) -> float | None:
    """``TFCLI_HOURLY_PRICE``'s value as dollars per hour; None when unset or empty. Raises ValueError otherwise."""
    if text is None or not text.strip():
        return None
    problem = f"{HOURLY_PRICE_VARIABLE}: expected dollars per hour (a number >= 0), got '{text}'"
    try:
        price = float(text)
    except ValueError:
        raise ValueError(problem) from None
    if not math.isfinite(price) or price < 0:
        raise ValueError(problem)
    return price


def cost_limit_reason(accrued: float, max_cost: float) -> str:
    return f"{COST_LIMIT_REASON} (${accrued:,.2f} of ${max_cost:,.2f})"


class CostLimit(Hook):
    """Requests a stop once ``hourly_price`` x training wall time reaches ``max_cost``."""

    def __init__(self, max_cost: float, hourly_price: float, stop: StopRequest) -> None:
        self.max_cost = max_cost
        self.hourly_price = hourly_price
        self._stop = stop

    def accrued(self, state: RunState) -> float:
        """Dollars the run has cost so far (all its segments)."""
        return self.hourly_price * state.wall_seconds / 3600

    def check(self, state: RunState) -> None:
        """Ask for the stop when the limit is reached (also before the first step of a resumed run)."""
        accrued = self.accrued(state)
        if accrued >= self.max_cost and not self._stop.requested:
            reason = cost_limit_reason(accrued, self.max_cost)
            log.warning("%s: checkpointing and pausing; raise max_cost to continue", reason)
            self._stop.request(reason)

    def after_step(self, state: RunState) -> None:
        self.check(state)
