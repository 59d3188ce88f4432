"""``experiment new`` and ``experiment sweep``: a run from a spec (or flags), stored with its stack file."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import err, out
from tfcli.cli.context import CliContext
from tfcli.cli.experiment.launch import show_started
from tfcli.cli.experiment.options import BackendName, Wait, chosen_backend


def show_notes(notes: list[str]) -> None:
    """The notes of TensorForce-form files that were translated (trainer/kernel/spec/translation.py), on stderr."""
    for note in notes:
        err().print(f"note: {note}", markup=False, highlight=False)


def new(
    file: Annotated[
        str | None,
        typer.Option(
            "--file", "-f", help="Experiment spec: a path or a config-library name (optional: flags alone do)."
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", "-n", help="Name (default: the spec's; required without -f).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", "-A", help="Agent: name or path (or inline in the spec).")
    ] = None,
    network: Annotated[str | None, typer.Option("--network", "-M", help="Network: name or path.")] = None,
    environment: Annotated[str | None, typer.Option("--environment", "-E", help="Environment: name or path.")] = None,
    cluster: Annotated[str | None, typer.Option("--cluster", "-c", "-C", help="Cluster: name or path.")] = None,
    episodes: Annotated[int | None, typer.Option("--episodes", "-e", help="Episode budget (all workers).")] = None,
    total_timesteps: Annotated[
        int | None, typer.Option("--total-timesteps", "-t", help="Timestep budget (all workers).")
    ] = None,
    max_timesteps_per_episode: Annotated[int | None, typer.Option(help="Cut episodes at this length.")] = None,
    deterministic: Annotated[
        bool | None, typer.Option("--deterministic/--stochastic", "-d", help="Act without exploration.")
    ] = None,
    run_mode: Annotated[str | None, typer.Option(help="single, multi-threaded or distributed.")] = None,
    num_workers: Annotated[int | None, typer.Option("--num-workers", "-w", help="Environments / env-workers.")] = None,
    num_parameter_servers: Annotated[
        int | None, typer.Option("--num-parameter-servers", "-p", help="0 or 1 (the learner).")
    ] = None,
    repeat_actions: Annotated[int | None, typer.Option(help="Repeat each action this many times.")] = None,
    saver_frequency: Annotated[str | None, typer.Option(help="Checkpoint every 600s, 100e or 5000t.")] = None,
    summary_frequency: Annotated[str | None, typer.Option(help="Summaries every 120s or 5000t.")] = None,
    debug_logging: Annotated[
        bool | None, typer.Option("--debug-logging/--no-debug-logging", help="Verbose trainer logs.")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed.")] = None,
    start: Annotated[bool, typer.Option("--start", "-s", help="Start it right away (as `experiment start`).")] = False,
    local: Annotated[bool, typer.Option("--local", help="With --start: run on this machine.")] = False,
    backend: BackendName = None,
) -> None:
    """Create an experiment from a spec (-f), with flags overriding the spec's keys, or from flags alone
    (-n NAME -A AGENT -E ENVIRONMENT and a budget, as the original client's `experiment new`)."""
    from tfcli.experiments.create import create_experiment
    from tfcli.runs.results import StartOptions
    from trainer.kernel.spec.documents import display_path
    from trainer.kernel.spec.translation import collect_notes

    overrides = {
        "name": name, "agent": agent, "network": network, "environment": environment, "cluster": cluster,
        "episodes": episodes, "total_timesteps": total_timesteps,
        "max_timesteps_per_episode": max_timesteps_per_episode, "deterministic": deterministic,
        "run_mode": run_mode, "num_workers": num_workers, "num_parameter_servers": num_parameter_servers,
        "repeat_actions": repeat_actions, "saver_frequency": saver_frequency,
        "summary_frequency": summary_frequency, "debug_logging": debug_logging, "seed": seed,
    }  # fmt: skip
    chosen = chosen_backend(local, backend)
    ctx = CliContext()
    if start:
        ctx.backends.check_start(ctx.project, backend=chosen, shared_cluster=None)  # before anything is written
    with collect_notes() as notes:
        experiment = create_experiment(ctx.store, file, overrides)
    show_notes(notes)
    out().print(f"Created experiment '{experiment.name}' in {display_path(experiment.root)}")
    stack_file = display_path(ctx.project.stacks / f"Pulumi.{experiment.name}.yaml")
    if ctx.project.settings.gcp_project:
        out().print(f"  its stack: {stack_file} (`pulumi up -s {experiment.name}` deploys it without tfcli)")
    else:
        out().print(f"  its stack: {stack_file}, with a placeholder GCP project (tfcli.yaml names none)")
    if not start:
        out().print(f"Start it with `tfcli experiment start -e {experiment.name}`")
        return
    run = ctx.run(experiment=experiment.name)
    show_started(ctx, ctx.backends.start(run, backend=chosen, options=StartOptions()), None)


def sweep(
    file: Annotated[str, typer.Option("--file", "-f", help="A sweep file or an experiment spec (path or name).")],
    name: Annotated[str | None, typer.Option("--name", "-n", help="Sweep name; trials are NAME-0, NAME-1, ...")] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option("--set", help="DOTTED.KEY=V1,V2,... (repeatable): values to try; every combination is run."),
    ] = None,
    seeds: Annotated[int | None, typer.Option("--seeds", help="Runs of each combination, seeds 1..K.")] = None,
    random: Annotated[int | None, typer.Option("--random", help="Try N combinations drawn from the grid.")] = None,
    random_seed: Annotated[int | None, typer.Option("--random-seed", help="Which N (default 0).")] = None,
    parallel: Annotated[
        int | None, typer.Option("--parallel", "-p", help="Trials at a time, locally and on GKE (default: what fits).")
    ] = None,
    build: Annotated[
        bool, typer.Option("--build/--no-build", help="Build and step one trial of each combination first.")
    ] = True,
    early_stop: Annotated[
        bool | None,
        typer.Option("--early-stop/--no-early-stop", help="Prune hopeless combinations at rungs (ASHA)."),
    ] = None,
    reduction: Annotated[
        int | None, typer.Option("--reduction", help="Early stop: keep the top 1/N at each rung (default 3).")
    ] = None,
    min_timesteps: Annotated[
        int | None, typer.Option("--min-timesteps", help="Early stop: the first rung (default: budget/N²).")
    ] = None,
    start: Annotated[bool, typer.Option("--start", help="Start it right away (as `start -s`).")] = False,
    local: Annotated[bool, typer.Option("--local", help="With --start: run on this machine.")] = False,
    backend: BackendName = None,
    wait: Wait = None,
    restart: Annotated[bool, typer.Option("--restart", help="Replace a sweep of this name and its results.")] = False,
) -> None:
    """Create a sweep: the spec's settings x values (grid or --random N) x seeds, each trial an experiment."""
    from rich.markup import escape

    from tfcli.runs.results import StartOptions
    from tfcli.sweeps.create import SweepOptions, build_trials, create_sweep, plan_sweep, refuse_taken_name
    from trainer.kernel.spec import ConfigLibrary
    from trainer.kernel.spec.documents import display_path

    chosen = chosen_backend(local, backend) if start else None
    ctx = CliContext()
    if start:
        ctx.backends.check_start(ctx.project, backend=chosen, shared_cluster=None)  # before anything is written
    options = SweepOptions(
        name, tuple(sets or ()), seeds, random, random_seed, parallel, early_stop, reduction, min_timesteps
    )
    on_gke = ctx.backends.chosen(ctx.project, chosen) == "gke"  # where `start -s` runs it
    planned = plan_sweep(file, options, ConfigLibrary.for_project(ctx.project.root), for_gke=on_gke)
    refuse_taken_name(ctx.store, planned, replace=restart)  # before any combination is built
    if build:
        for line in build_trials(planned):
            err().print(f"  {escape(line)}")
    created = create_sweep(
        ctx.store,
        planned,
        replace=restart,
        refuse_replacing=lambda sweep: ctx.backends.refuse_replacing(ctx.run(sweep=sweep.name)),
    )
    combos = len(planned.trials) // planned.sweep.seeds
    out().print(
        f"Created sweep '{created.name}' in {display_path(created.root)}: {combos} combination(s) x "
        f"{planned.sweep.seeds} seed(s) = {len(planned.trials)} trials "
        f"({planned.trials[0].name} .. {planned.trials[-1].name}), every one validated"
    )
    stopping = planned.trials[0].data.get("early_stop")
    if stopping:
        rungs = ", ".join(f"{rung:,}" for rung in stopping["rungs"])
        out().print(
            f"  early stopping (ASHA): rungs at {rungs} timesteps; at each, a trial goes on only if its combination "
            f"is in the top 1/{stopping['reduction']} of those that reached it"
        )
    if not start:
        out().print(f"Start it with `tfcli experiment start -s {created.name}`")
        return
    run = ctx.run(sweep=created.name)
    show_started(ctx, ctx.backends.start(run, backend=chosen, options=StartOptions(restart=restart)), wait)
