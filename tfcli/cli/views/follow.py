"""Following a run in the terminal: a progress bar for an experiment, a line per trial for a sweep, then how it ended.

The backend runs the loop (:meth:`tfcli.runs.backend.Backend.follow`) and reports to :class:`TerminalWatcher`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from tfcli.cli.console import err, out
from tfcli.experiments.store import ExperimentDir
from tfcli.runs.results import Ended, Started
from tfcli.runs.run import Run
from tfcli.sweeps.status import SweepStatus
from trainer.kernel.spec.documents import display_path
from trainer.kernel.spec.outcomes import EXIT_PAUSED

if TYPE_CHECKING:
    from trainer.kernel.spec import Experiment

LOG_TAIL_LINES = 25


def _budget(spec: Experiment) -> tuple[int, str]:
    """What the bar counts: timesteps when the experiment has a timestep budget, else episodes."""
    return spec.total_timesteps or spec.episodes or 0, "timesteps" if spec.total_timesteps else "episodes"


class TerminalWatcher:
    """Shows a followed run: an experiment's progress bar (budget done, episodes and mean return, elapsed time), or
    a line for each trial of a sweep that starts or ends."""

    def __init__(self, started: Started) -> None:
        self.run = started.run
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.unit = "timesteps"
        self.seen: dict[str, str] = {}
        if self.run.kind == "experiment":
            spec = self.run.experiment().spec()
            total, self.unit = _budget(spec)
            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[detail]}"),
                TimeElapsedColumn(),
                console=out(),
                transient=False,
            )
            where = f" {started.where}" if started.where else ""
            self.task = self.bar.add_task(f"{spec.name}{where} ({self.unit})", total=total, detail="starting…")

    def __enter__(self) -> TerminalWatcher:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, error, trace)

    def progress(self, timesteps: int, episodes: int, mean_return: float | None) -> None:
        if self.bar is None or self.task is None:
            return
        detail = f"episodes {episodes:,}" + (f"  mean return {mean_return:.1f}" if mean_return is not None else "")
        self.bar.update(self.task, completed=timesteps if self.unit == "timesteps" else episodes, detail=detail)

    def progress_detail(self, text: str) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, detail=text)

    def trials(self, status: SweepStatus) -> None:
        """A line for each trial that started or ended since the last poll, with why it failed, paused or stopped."""
        ended = [
            s
            for _, s in status.trials
            if s.state in ("completed", "pruned", "failed") or (s.detail and s.state != "running")
        ]
        for trial, current in status.trials:
            announced = ("completed", "pruned", "failed", "running", "paused", "stopped", "waiting")
            if current.state != self.seen.get(trial.name) and current.state in announced:
                self.seen[trial.name] = current.state
                mean = f", mean return {current.mean_return:.1f}" if current.mean_return is not None else ""
                wall = (
                    f" in {current.wall_seconds:.0f} s" if current.state == "completed" and current.wall_seconds else ""
                )
                why = (
                    f" ({current.detail})"
                    if current.detail and current.state in ("failed", "paused", "stopped", "pruned", "waiting")
                    else ""
                )
                out().print(
                    f"  {trial.name} ({escape(trial.label)}, seed {trial.seed}): {current.state}{wall}{mean}"
                    f"{escape(why)} [{len(ended)}/{len(status.trials)} done]"
                )

    def say(self, text: str) -> None:
        out().print(text, markup=False)


def _tail(experiment: ExperimentDir) -> list[str]:
    try:
        lines = (experiment.logs / "trainer.log").read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []
    return lines[-LOG_TAIL_LINES:]


def report_end(experiment: ExperimentDir, code: int) -> None:
    """How an experiment ended, from its ``result.json`` here: its numbers, or where it paused, or why it failed."""
    result = experiment.result()
    status = result.get("status")
    results = display_path(experiment.results)
    if code == 0 and status == "completed":
        out().print(
            f"[green]✓[/] {experiment.name} completed: {result.get('timesteps', 0):,} timesteps, "
            f"{result.get('episodes', 0):,} episodes in {result.get('wall_seconds', 0):.1f} s "
            f"({result.get('timesteps_per_second', 0):,.0f} timesteps/s)"
        )
        if result.get("mean_return_last_100") is not None:
            out().print(f"  mean return (last 100 episodes): {result['mean_return_last_100']:.1f}")
        out().print(f"  learning curve: {results}/learning_curve.png")
        out().print(f"  TensorBoard:    tfcli tensorboard {results}/summaries")
        return
    if code == EXIT_PAUSED or status == "paused":
        out().print(
            f"[yellow]⏸[/] {experiment.name} paused at {result.get('timesteps', 0):,} timesteps (checkpoint saved); "
            f"resume with `tfcli experiment resume -e {experiment.name}`"
        )
        return
    err().print(f"[bold red]error:[/] {experiment.name} {status or 'ended'} (exit code {code})")
    if result.get("error"):
        err().print(f"       {escape(str(result['error']))}")
    tail = _tail(experiment)
    if tail:
        err().print(f"last lines of {display_path(experiment.logs / 'trainer.log')}:")
        for line in tail:
            err().print(f"  {escape(line)}")


def show_done(run: Run, started_here: bool, table: Callable[[], None]) -> None:
    """A run that had nothing left to do: an experiment's result (when it is here), a sweep's comparison."""
    if run.kind == "sweep":
        table()
    elif started_here:
        report_end(run.experiment(), 0)


def show_ended(ended: Ended, table: Callable[[], None]) -> None:
    """How a followed run ended, then the backend's notes (``table`` shows a sweep's comparison)."""
    run = ended.run
    if ended.report and run.kind == "sweep":
        out().print(f"Sweep {run.name}: {ended.state} after {ended.seconds:.0f} s")
        table()
    elif ended.report:
        report_end(run.experiment(), ended.process_code if ended.process_code is not None else 1)
    for note in ended.notes:
        out().print(note, markup=False)
    for warning in ended.warnings:
        err().print(warning, markup=False)
