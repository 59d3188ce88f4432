"""What a sweep's trials have cost together, read by each trial from what its siblings published (docs/design.md
§6.5, "A sweep's budget"), so that the sweep's ``max_cost`` holds with no process on the user's machine.

A sibling's cost is the run price times its training time plus the node-time allowance for each of its starts
(:func:`trainer.kernel.budget.counted_usd`, the one rule a trial's own ``max_cost`` counts by too): every trial of a
sweep has the same price and allowance (one ``TFCLI_HOURLY_PRICE`` and ``TFCLI_START_ALLOWANCE_SECONDS`` in the GKE
sweep's pod template; locally, the environment's), so the sum needs only each sibling's training seconds and starts.
Those come from the files the sibling writes anyway: ``result.json``'s ``wall_seconds`` and ``starts`` (a trial that
ended) and the last line of ``progress.jsonl`` (a trial that trains: each finished episode's ``wall_seconds``, segments
included, and the ``start`` that trained it). The larger counts; a sibling's figure never goes down, so the largest ever
read is kept, and an unreadable file (missing, half published, ``ESTALE`` on the GCS FUSE mount: any ``OSError``) is "no
more than last time".

A floor, as the trial's own figure is: a sibling's episode under way, and on GKE what it wrote since it last
published its progress (60 s, ``TFCLI_PUBLISH_SECONDS``) plus the mount's metadata TTL (10 s), are not seen yet.
Siblings are read again every :data:`RECHECK_SECONDS`, not at every step.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from trainer.hooks.early_stop import sibling_folder
from trainer.kernel.budget import billed_seconds, counted_usd, starts_seen
from trainer.kernel.spec.outcomes import COST_LIMIT_REASON
from trainer.kernel.spec.sweep_budget import SweepBudget
from trainer.result_file import read_result

RECHECK_SECONDS = 10.0  # the results mount's metadata TTL: a sooner read would see what the mount cached
TAIL_BYTES = 4096  # enough for the last progress line (about 120 bytes)


def _last_progress(progress: Path) -> tuple[float, object]:
    """The ``wall_seconds`` and ``start`` of the last complete line of a ``progress.jsonl`` (0 and None without
    one)."""
    with open(progress, "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - TAIL_BYTES))
        tail = handle.read()
    for line in reversed(tail[: tail.rfind(b"\n") + 1].splitlines()):
        try:
            record = json.loads(line)
            return float(record["wall_seconds"]), record.get("start")
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return 0.0, None


def _result_progress(folder: Path) -> tuple[float, object]:
    result = read_result(folder)
    value = result.get("wall_seconds", 0.0)
    return (float(value) if isinstance(value, int | float) else 0.0), result.get("starts")


def folder_reading(folder: Path) -> tuple[float, int]:
    """(training seconds, starts) a trial's results folder shows: the larger of ``result.json``'s and the last
    ``progress.jsonl`` line's (0 and 0 when nothing in it can be read; starts at least 1 once it trained)."""
    seconds, starts = 0.0, 0
    for read in (_result_progress, lambda f: _last_progress(f / "progress.jsonl")):
        try:
            more, recorded = read(folder)
        except (OSError, ValueError):
            continue
        seconds, starts = max(seconds, more), max(starts, starts_seen(recorded, 0.0))
    return seconds, starts_seen(starts, seconds)


def trained_seconds(folder: Path) -> float:
    """The training seconds a trial's results folder shows (0 when nothing in it can be read)."""
    return folder_reading(folder)[0]


def billed_seconds_of(folder: Path, allowance_seconds: float) -> float:
    """What ``max_cost`` counts of a trial's folder, in seconds: its training time plus ``allowance_seconds`` of node
    time for each start (:func:`trainer.kernel.budget.billed_seconds`)."""
    seconds, starts = folder_reading(folder)
    return billed_seconds(seconds, starts, allowance_seconds)


def sweep_reason(total: float, budget: SweepBudget) -> str:
    """``result.json``'s ``reason`` for a trial the sweep's budget paused (it starts as a trial's own cost limit's
    does, so every reader takes it as paused at ``max_cost``:
    :func:`trainer.kernel.spec.outcomes.paused_at_cost_limit`)."""
    return f"{COST_LIMIT_REASON} (${total:,.2f} of ${budget.max_cost:,.2f}: sweep {budget.sweep}, all its trials)"


class SweepSpend:
    """The sweep's cost as trial ``own`` (results in ``output``) sees it: its siblings' published cost plus its own."""

    def __init__(
        self, budget: SweepBudget, own: str, output: Path, hourly_price: float, allowance_seconds: float = 0.0
    ) -> None:
        self.budget, self.hourly_price, self.allowance_seconds = budget, hourly_price, allowance_seconds
        output = output.absolute()
        found = {name: sibling_folder(output, own, name) for name in budget.siblings(own)}
        self.folders = {name: folder for name, folder in found.items() if folder is not None}
        self.seen: dict[str, float] = dict.fromkeys(self.folders, 0.0)
        self.read_at: float | None = None

    def siblings_usd(self, now: float | None = None) -> float:
        """What the siblings have cost, read again once :data:`RECHECK_SECONDS` have passed since the last read."""
        now = time.monotonic() if now is None else now
        if self.read_at is None or now - self.read_at >= RECHECK_SECONDS:
            self.read_at = now
            for name, folder in self.folders.items():
                self.seen[name] = max(self.seen[name], billed_seconds_of(folder, self.allowance_seconds))
        return counted_usd(self.hourly_price, sum(self.seen.values()))

    def total(self, own_usd: float, now: float | None = None) -> float:
        return own_usd + self.siblings_usd(now)

    def spent(self, own_usd: float, now: float | None = None) -> str | None:
        """The reason to pause when the sweep's trials together reached its ``max_cost`` (None below it)."""
        total = self.total(own_usd, now)
        return sweep_reason(total, self.budget) if total >= self.budget.max_cost else None
