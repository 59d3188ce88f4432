"""``experiment list / status / compare / logs``: what runs are doing, read where they run."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import out, print_json
from tfcli.cli.context import CliContext
from tfcli.cli.experiment.options import Json, OptionalName, SweepName


def list_(as_json: Json = False, sweep: SweepName = None) -> None:
    """All experiments of the project: backend, run mode, status, progress, mean return (-s: a sweep compared)."""
    from tfcli.cli.views.compare import show_comparison
    from tfcli.cli.views.status import show_list

    ctx = CliContext()
    if sweep is not None:
        run = ctx.run(sweep=sweep)
        show_comparison(ctx.backends.compare(run), run.sweep().target_return(), as_json=as_json)
        return
    statuses = ctx.backends.statuses(ctx.store)
    if as_json:
        print_json([s.as_json() for s in statuses])
        return
    show_list(statuses)


def status(experiment: OptionalName = None, as_json: Json = False, sweep: SweepName = None) -> None:
    """One experiment's state, progress and result (-s: a sweep's state and its trials)."""
    from tfcli.cli.views.status import show_status

    ctx = CliContext()
    current = ctx.backends.status(ctx.run(experiment=experiment, sweep=sweep))
    if as_json:
        print_json(current.as_json())
        return
    show_status(current)


def compare(
    experiments: Annotated[
        list[str] | None, typer.Option("--experiment", "-e", help="Experiment name (repeatable: two or more).")
    ] = None,
    sweep: SweepName = None,
    as_json: Json = False,
) -> None:
    """Runs side by side: only the spec keys that differ, then each run's final return (-s: each combination's IQM
    over seeds with its 95% CI), timesteps, wall time and cost where known."""
    from tfcli.cli.views.compare import show_run_comparison
    from trainer.kernel.errors import InvalidInput

    names = list(dict.fromkeys(experiments or []))
    if names and sweep is not None:
        raise InvalidInput("--experiment/--sweep: give either -e NAME (two or more) or -s SWEEP, not both")
    if sweep is None and len(names) < 2:
        raise InvalidInput(
            "--experiment: compare needs at least two different experiments (-e A -e B), or a sweep (-s SWEEP)"
        )
    ctx = CliContext()
    runs = [ctx.run(sweep=sweep)] if sweep is not None else [ctx.run(experiment=name) for name in names]
    comparison = ctx.backends.compare_runs(runs)
    if as_json:
        print_json(comparison.as_json())
        return
    show_run_comparison(comparison)


def logs(
    experiment: OptionalName = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing while it runs.")] = False,
    worker: Annotated[int | None, typer.Option("--worker", help="An env-worker's log (distributed).")] = None,
    tail: Annotated[int | None, typer.Option("--tail", help="Start with the last N lines.")] = None,
    sweep: SweepName = None,
) -> None:
    """Print the trainer's log (or an env-worker's; -s: a sweep's queue log); on GKE streamed from the cluster."""
    from tfcli.runs.results import LogRequest

    ctx = CliContext()
    request = LogRequest(follow=follow, worker=worker, tail=tail)
    ctx.backends.logs(
        ctx.run(experiment=experiment, sweep=sweep),
        request,
        lambda text: out().print(text, end="", markup=False, highlight=False),
    )
