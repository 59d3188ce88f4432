"""What ``start``, ``resume``, ``new --start`` and ``sweep --start`` show once a run is started: what the backend
started, then either how to watch it or, followed, its progress and how it ended."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from tfcli.cli.console import out

if TYPE_CHECKING:  # the run's models (pydantic) load when a run is started, not for `tfcli --help`
    from tfcli.cli.context import CliContext
    from tfcli.runs.results import Started


def show_started(ctx: CliContext, started: Started, wait: bool | None) -> None:
    from tfcli.cli.views.compare import show_comparison
    from tfcli.cli.views.follow import TerminalWatcher, show_done, show_ended

    run = started.run
    for line in started.announce:
        out().print(line, markup=False)

    def table() -> None:
        show_comparison(ctx.backends.compare(run), run.sweep().target_return())

    if started.nothing_to_run:
        show_done(run, started.results_here, table)
        return
    follows = ctx.backends.named(started.backend).waits_by_default if wait is None else wait
    if not follows:
        out().print(started.detached_hint, markup=False)
        return
    with TerminalWatcher(started) as watcher:
        ended = ctx.backends.follow(started, watcher)
    show_ended(ended, table)
    if ended.exit_code:
        raise typer.Exit(ended.exit_code)
