"""What a person watching the run sees: a rich progress bar on a terminal, else one line per summary period.

In a container or a CI log a progress bar is noise, so there (stdout not a terminal) the run prints one line every
``summary_frequency`` instead, e.g.
``timesteps 12,000/100,000 (12.0%)  episodes 340  return(100) 123.4  850 timesteps/s  elapsed 0:00:14``.
"""

from __future__ import annotations

import datetime
import logging
import sys
import time
from typing import Any

from trainer.hooks import Hook
from trainer.hooks.summaries import RateMeter
from trainer.kernel.budget import Budget
from trainer.kernel.spec import Frequency
from trainer.kernel.state import RunState
from trainer.schedule import Every


def _elapsed(seconds: float) -> str:
    return str(datetime.timedelta(seconds=int(seconds)))


def _fraction(budget: Budget, state: RunState) -> float:
    """How much of the budget is spent (the larger share when both budgets are set)."""
    shares = []
    if budget.timesteps:
        shares.append(state.timesteps / budget.timesteps)
    if budget.episodes:
        shares.append(state.episodes / budget.episodes)
    return min(max(shares, default=0.0), 1.0)


def status_line(budget: Budget, state: RunState, rate: float) -> str:
    if budget.timesteps:
        head = f"timesteps {state.timesteps:,}/{budget.timesteps:,}"
        episodes = f"episodes {state.episodes:,}" + (f"/{budget.episodes:,}" if budget.episodes else "")
    else:
        head = f"episodes {state.episodes:,}/{budget.episodes or 0:,}"
        episodes = f"timesteps {state.timesteps:,}"
    mean = state.mean_recent_return
    mean_text = "-" if mean is None else f"{mean:.1f}"
    return (
        f"{head} ({_fraction(budget, state):.1%})  {episodes}  return(100) {mean_text}  "
        f"{rate:,.0f} timesteps/s  elapsed {_elapsed(state.wall_seconds)}"
    )


class LogLines(Hook):
    def __init__(self, budget: Budget, frequency: Frequency, state: RunState) -> None:
        self._budget = budget
        self._every = Every(frequency, state)
        self._rate = RateMeter(state)

    def _print(self, state: RunState) -> None:
        print(status_line(self._budget, state, self._rate.read(state)), flush=True)

    def after_step(self, state: RunState) -> None:
        if self._every.due(state):
            self._print(state)

    def on_end(self, state: RunState, status: str) -> None:
        self._print(state)
        print(f"{status}: {state.timesteps:,} timesteps, {state.episodes:,} episodes", flush=True)


class ProgressBar(Hook):
    """A rich progress bar; log records are routed through it (printed above the bar) while it is shown."""

    REFRESH_SECONDS = 0.2

    def __init__(self, budget: Budget, state: RunState) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._budget = budget
        self._progress: Any = Progress(
            TextColumn("[bold]training[/]"),
            BarColumn(bar_width=30),
            TextColumn("{task.percentage:>5.1f}%"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[status]}"),
        )
        self._rate = RateMeter(state)
        self._shown_rate = 0.0
        self._rate_read_at = time.monotonic()
        self._task = self._progress.add_task("training", total=1.0, status="")
        self._last = 0.0
        self._progress.start()  # from here on sys.stdout and sys.stderr print above the bar
        self._handlers = [
            (handler, handler.setStream(sys.stderr))
            for handler in logging.getLogger().handlers
            if type(handler) is logging.StreamHandler
        ]
        self._update(state)

    def _update(self, state: RunState) -> None:
        now = time.monotonic()
        if now - self._rate_read_at >= 1.0:  # a rate over less than a second jumps about
            self._shown_rate, self._rate_read_at = self._rate.read(state), now
        mean = state.mean_recent_return
        status = (
            f"{state.timesteps:,} timesteps  {state.episodes:,} episodes  "
            f"return(100) {'-' if mean is None else f'{mean:.1f}'}  {self._shown_rate:,.0f}/s"
        )
        self._progress.update(self._task, completed=_fraction(self._budget, state), status=status)
        self._last = now

    def after_step(self, state: RunState) -> None:
        if time.monotonic() - self._last >= self.REFRESH_SECONDS:
            self._update(state)

    def on_end(self, state: RunState, status: str) -> None:
        self._update(state)
        for handler, stream in self._handlers:
            handler.setStream(stream)
        self._progress.stop()
        print(f"{status}: {state.timesteps:,} timesteps, {state.episodes:,} episodes", flush=True)


def reporter(budget: Budget, frequency: Frequency, state: RunState, *, progress_bar: bool | None) -> Hook:
    """A progress bar when asked (or, by default, when stdout is a terminal), else log lines."""
    if progress_bar is None:
        progress_bar = sys.stdout.isatty()
    return ProgressBar(budget, state) if progress_bar else LogLines(budget, frequency, state)
