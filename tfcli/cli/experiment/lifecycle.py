"""``experiment start / resume / pause / stop``: one call to the run's backend each (``-e`` an experiment, ``-s`` a
sweep)."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import out
from tfcli.cli.context import CliContext
from tfcli.cli.experiment.launch import show_started
from tfcli.cli.experiment.options import BackendName, OptionalName, Spec, SweepName, Wait, chosen_backend


def start(
    experiment: OptionalName = None,
    file: Spec = None,
    local: Annotated[
        bool, typer.Option("--local", help="Run on this machine (the default without a GCP project).")
    ] = False,
    backend: BackendName = None,
    cluster: Annotated[
        str | None, typer.Option("--cluster", "-c", help="Run on this shared cluster (GKE; `tfcli cluster create`).")
    ] = None,
    wait: Wait = None,
    resume: Annotated[bool, typer.Option("--resume", "-R", help="Continue a paused experiment.")] = False,
    restart: Annotated[bool, typer.Option("--restart", help="Delete earlier results and start over.")] = False,
    sweep: SweepName = None,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel", "-p", help="Sweeps: trials at a time (default: the sweep file's parallel, else what fits)."
        ),
    ] = None,
) -> None:
    """Start an experiment by name (-e) or straight from a spec (-f), locally or on GKE (`pulumi up`); -s a sweep."""
    from tfcli.experiments.create import create_experiment
    from tfcli.experiments.store import checked_flag
    from tfcli.runs.results import StartOptions
    from trainer.kernel.errors import InvalidInput

    if sweep is not None and (experiment is not None or file is not None):
        raise InvalidInput("-s SWEEP: give no -e or -f with it")
    if sweep is None and (experiment is None) == (file is None):
        raise InvalidInput("give exactly one of -e NAME (an existing experiment) or -f SPEC")
    if resume and restart:
        raise InvalidInput("--resume and --restart contradict each other")
    if cluster is not None:
        checked_flag(cluster, "--cluster")
    chosen = chosen_backend(local, backend)
    ctx = CliContext()
    ctx.backends.check_start(ctx.project, backend=chosen, shared_cluster=cluster)  # before anything is written
    if file is not None:
        experiment = create_experiment(
            ctx.store,
            file,
            {},
            replace=restart,
            refuse_replacing=lambda made: ctx.backends.refuse_replacing(ctx.run(experiment=made.name)),
        ).name
    run = ctx.run(experiment=experiment, sweep=sweep)
    options = StartOptions(restart=restart, shared_cluster=cluster, parallel=parallel)
    show_started(ctx, ctx.backends.start(run, backend=chosen, options=options, resume=resume), wait)


def resume(
    experiment: OptionalName = None,
    wait: Wait = None,
    sweep: SweepName = None,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Sweeps: run failed trials again, from their last checkpoint.")
    ] = False,
    total_timesteps: Annotated[
        int | None, typer.Option("--total-timesteps", help="Raise the budget: completed runs train on to N.")
    ] = None,
    episodes: Annotated[
        int | None, typer.Option("--episodes", help="Raise the budget: completed runs train on to N episodes.")
    ] = None,
    include_pruned: Annotated[
        bool, typer.Option("--include-pruned", help="With a raised budget: pruned trials train on too.")
    ] = False,
    after_stop: Annotated[
        bool, typer.Option("--after-stop", help="Continue a run that `stop` ended (stop is for good otherwise).")
    ] = False,
) -> None:
    """Continue a paused or interrupted run from its newest checkpoint, where it last ran (-s: a sweep's unfinished
    trials; failed ones with --retry-failed); --total-timesteps/--episodes extend finished runs."""
    from tfcli.runs.resuming import ResumeOptions

    options = ResumeOptions(retry_failed, include_pruned, total_timesteps, episodes, after_stop)
    ctx = CliContext()
    show_started(ctx, ctx.backends.resume(ctx.run(experiment=experiment, sweep=sweep), options), wait)


def pause(experiment: OptionalName = None, sweep: SweepName = None) -> None:
    """Checkpoint and stop the run (GKE: suspend its Jobs); `resume` continues it. -s: a sweep's running trials."""
    ctx = CliContext()
    out().print(ctx.backends.pause(ctx.run(experiment=experiment, sweep=sweep)).summary(), markup=False)


def stop(
    experiment: OptionalName = None,
    no_download: Annotated[bool, typer.Option("--no-download", help="Do not download results first (GKE).")] = False,
    sweep: SweepName = None,
) -> None:
    """Stop the experiment for good: checkpoint, end its processes (GKE: download, destroy its stack). -s: a sweep."""
    ctx = CliContext()
    stopped = ctx.backends.stop(ctx.run(experiment=experiment, sweep=sweep), download=not no_download)
    out().print(stopped.summary(), markup=False)
