"""The terminal display of a Pulumi update: a bar of resources done out of the plan's count, the operation running
now (a trainer build's Cloud Build status, elapsed time and step while one runs), errors as Pulumi reports them, and
a one-line summary at the end."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from tfcli.cli.console import err, out
from tfcli.gke.events import UpdateTracker

_TITLES = {"up": "pulumi up", "destroy": "pulumi destroy"}


class RichUpdateObserver:
    """An :class:`tfcli.gke.events.UpdateObserver` drawing with rich (events arrive on Pulumi's event thread)."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task = TaskID(0)
        self._shown_errors = 0
        self._shown_builds: dict[str, str] = {}  # image -> the status and step last printed

    def begin(self, tracker: UpdateTracker) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[current]}"),
            console=out(),
            transient=False,
        )
        self._progress.start()
        title = f"{_TITLES.get(tracker.operation, tracker.operation)} {tracker.stack}"
        self._task = self._progress.add_task(title, total=tracker.total, current="starting…")
        self._shown_errors = 0
        self._shown_builds = {}

    def changed(self, tracker: UpdateTracker) -> None:
        if self._progress is None:
            return
        for message in tracker.errors[self._shown_errors :]:
            self._progress.console.print(f"[red]{escape(message)}[/]")
        self._shown_errors = len(tracker.errors)
        self._print_build_changes(tracker, self._progress.console)
        self._progress.update(
            self._task, completed=tracker.completed, total=tracker.total, current=escape(running_now(tracker))
        )

    def _print_build_changes(self, tracker: UpdateTracker, console: Console) -> None:
        """A line of its own, which stays, for each new status or step of a trainer build."""
        for image, progress in dict(tracker.builds).items():
            said = f"{progress.status} {progress.step}"
            if self._shown_builds.get(image) != said:
                self._shown_builds[image] = said
                console.print(f"  Cloud Build {escape(progress.summary())}")

    def end(self, tracker: UpdateTracker) -> None:
        if self._progress is None:
            return
        self.changed(tracker)
        self._progress.update(self._task, current="done" if tracker.succeeded else "[red]failed[/]")
        self._progress.stop()
        self._progress = None
        if tracker.succeeded and (summary := tracker.change_summary()):
            out().print(f"  resources: {summary}")
        elif tracker.failed:
            err().print(f"  failed: {escape(', '.join(tracker.failed))}")


def running_now(tracker: UpdateTracker) -> str:
    """What the bar says runs now: the trainer builds that have not ended (status, elapsed time, step), else the
    resource operation."""
    running = [progress.summary() for progress in dict(tracker.builds).values() if not progress.final]
    return "; ".join(running) or tracker.current
