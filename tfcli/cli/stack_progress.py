"""The terminal display of a Pulumi update: a bar of resources done out of the plan's count, the operation running
now, errors as Pulumi reports them, and a one-line summary at the end."""

from __future__ import annotations

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

    def changed(self, tracker: UpdateTracker) -> None:
        if self._progress is None:
            return
        for message in tracker.errors[self._shown_errors :]:
            self._progress.console.print(f"[red]{escape(message)}[/]")
        self._shown_errors = len(tracker.errors)
        self._progress.update(
            self._task, completed=tracker.completed, total=tracker.total, current=escape(tracker.current)
        )

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
