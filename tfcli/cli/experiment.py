"""``tfcli experiment ...``: create, run, watch, pause, stop and plot experiments.

Commands parse options, call one library function and render the result; the work lives in
``tfcli.experiments`` and the backends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from tfcli.cli.console import err, out
from tfcli.cli.errors import TfcliGroup

app = typer.Typer(
    cls=TfcliGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Create, run, watch, pause, stop and plot experiments.",
)

Name = Annotated[str, typer.Option("--experiment", "-e", help="Experiment name (a folder under experiments/).")]
OptionalName = Annotated[str | None, typer.Option("--experiment", "-e", help="Experiment name.")]
Spec = Annotated[str | None, typer.Option("--file", "-f", help="Experiment spec: a path or a config-library name.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
SweepName = Annotated[str | None, typer.Option("--sweep", "-s", help="A sweep: act on all its trials.")]


def _sweep_or(experiment: object, sweep: str | None) -> bool:
    """True for a sweep (``-s``); exactly one of ``-e`` and ``-s`` must be given."""
    if (experiment is None) == (sweep is None):
        from tfcli.errors import InvalidInput

        raise InvalidInput("give exactly one of -e NAME (an experiment) or -s SWEEP (a sweep)")
    return sweep is not None


def _context() -> Any:
    from tfcli.experiments.store import ExperimentStore
    from tfcli.project import open_project

    return ExperimentStore(open_project())


@app.command()
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
) -> None:
    """Create an experiment from a spec (-f), with flags overriding the spec's keys, or from flags alone
    (-n NAME -A AGENT -E ENVIRONMENT and a budget, as the original client's `experiment new`)."""
    from tfcli.experiments.create import create_experiment

    overrides = {
        "name": name, "agent": agent, "network": network, "environment": environment, "cluster": cluster,
        "episodes": episodes, "total_timesteps": total_timesteps,
        "max_timesteps_per_episode": max_timesteps_per_episode, "deterministic": deterministic,
        "run_mode": run_mode, "num_workers": num_workers, "num_parameter_servers": num_parameter_servers,
        "repeat_actions": repeat_actions, "saver_frequency": saver_frequency,
        "summary_frequency": summary_frequency, "debug_logging": debug_logging, "seed": seed,
    }  # fmt: skip
    store = _context()
    experiment = create_experiment(store, file, overrides)
    from tfcli.spec.documents import display_path

    out().print(f"Created experiment '{experiment.name}' in {display_path(experiment.root)}")
    stack_file = display_path(store.project.stacks / f"Pulumi.{experiment.name}.yaml")
    if store.project.settings.gcp_project:
        out().print(f"  its stack: {stack_file} (`pulumi up -s {experiment.name}` deploys it without tfcli)")
    else:
        out().print(f"  its stack: {stack_file}, with a placeholder GCP project (tfcli.yaml names none)")
    if start:
        _start(store, experiment.name, local=local, wait=None)
    else:
        out().print(f"Start it with `tfcli experiment start -e {experiment.name}`")


@app.command()
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
        int | None, typer.Option("--parallel", "-p", help="Local trials at a time (default: what the cores fit).")
    ] = None,
    build: Annotated[
        bool, typer.Option("--build/--no-build", help="Build and step one trial of each combination first.")
    ] = True,
    start: Annotated[bool, typer.Option("--start", help="Start it right away (as `start -s`).")] = False,
    local: Annotated[bool, typer.Option("--local", help="With --start: run on this machine.")] = False,
    wait: Annotated[bool | None, typer.Option("--wait/--detach", help="With --start: follow it (default).")] = None,
    restart: Annotated[bool, typer.Option("--restart", help="Replace a sweep of this name and its results.")] = False,
) -> None:
    """Create a sweep: the spec's settings x values (grid or --random N) x seeds, each trial an experiment."""
    from tfcli.cli import sweep_view
    from tfcli.sweeps.create import SweepOptions

    options = SweepOptions(name, tuple(sets or ()), seeds, random, random_seed, parallel)
    sweep_view.create(file, options, build=build, start=start, local=local, wait=wait, restart=restart)


def _start(
    store: Any,
    name: str,
    *,
    local: bool,
    wait: bool | None,
    restart: bool = False,
    cluster: str | None = None,
    resume: bool = False,
) -> None:
    from tfcli.cli.follow import follow, follow_gke, report_end
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.experiments.run import resume_experiment, start_experiment

    observer = RichUpdateObserver()
    if resume:
        launched = resume_experiment(store, name, observer=observer)
    else:
        launched = start_experiment(
            store, name, local=local, restart=restart, shared_cluster=cluster, observer=observer
        )
    experiment = launched.experiment
    if launched.nothing_to_run:
        out().print(f"{experiment.name} has already completed (`--restart` starts it over).")
        if launched.backend == "local":
            report_end(experiment, 0)
        return
    if launched.backend == "gke":
        deployment = launched.deployment
        assert deployment is not None
        outputs = deployment.outputs
        where = f"shared cluster {deployment.shared_cluster}" if deployment.shared_cluster else "its own cluster"
        out().print(
            f"Deployed {experiment.name} on GKE ({where} {outputs.get('clusterName', '')}, "
            f"namespace {outputs.get('namespace', '?')}); results go to {outputs.get('resultsUrl', 'its bucket')}"
        )
        if not wait:
            out().print(
                f"Watch it with `tfcli experiment status -e {experiment.name}`; "
                f"`tfcli experiment download -e {experiment.name}` copies its results so far."
            )
            return
        code = follow_gke(store, experiment, deployment)
        if code:
            raise typer.Exit(code)
        return
    assert launched.process is not None
    if wait is False:
        out().print(
            f"Started {experiment.name} in the background (pid {launched.process.pid}). "
            f"Watch it with `tfcli experiment logs -e {experiment.name} -f` "
            f"or `tfcli experiment status -e {experiment.name}`."
        )
        return
    code = follow(experiment, launched.process)
    if code:
        raise typer.Exit(code)


@app.command()
def start(
    experiment: OptionalName = None,
    file: Spec = None,
    local: Annotated[
        bool, typer.Option("--local", help="Run on this machine (the default without a GCP project).")
    ] = False,
    cluster: Annotated[
        str | None, typer.Option("--cluster", "-c", help="Run on this shared cluster (GKE; `tfcli cluster create`).")
    ] = None,
    wait: Annotated[
        bool | None,
        typer.Option("--wait/--detach", help="Wait for the end (default locally) or return at once (default on GKE)."),
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", "-R", help="Continue a paused experiment.")] = False,
    restart: Annotated[bool, typer.Option("--restart", help="Delete earlier results and start over.")] = False,
    sweep: SweepName = None,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel", "-p", help="Sweeps: trials at a time (locally default: cores fit; GKE: tfcli:parallelism)."
        ),
    ] = None,
) -> None:
    """Start an experiment by name (-e) or straight from a spec (-f), locally or on GKE (`pulumi up`); -s a sweep."""
    from tfcli.errors import InvalidInput
    from tfcli.experiments.create import create_experiment
    from tfcli.experiments.store import checked_flag

    if sweep is not None:
        if experiment is not None or file is not None:
            raise InvalidInput("-s SWEEP: give no -e or -f with it")
        if cluster is not None:
            checked_flag(cluster, "--cluster")
        from tfcli.cli import sweep_view

        sweep_view.start_cli(sweep, parallel=parallel, local=local, wait=wait, restart=restart, cluster=cluster)
        return
    if (experiment is None) == (file is None):
        raise InvalidInput("give exactly one of -e NAME (an existing experiment) or -f SPEC")
    if resume and restart:
        raise InvalidInput("--resume and --restart contradict each other")
    if cluster is not None:
        checked_flag(cluster, "--cluster")
        if local:
            raise InvalidInput("--cluster: a shared cluster is a GKE cluster; it has no meaning with --local")
    store = _context()
    if cluster is not None:  # checked before anything is written
        if store.project.settings.default_backend == "local":
            raise InvalidInput(
                "--cluster: a shared cluster is a GKE cluster, and this project names no GCP project "
                "(set one with `tfcli init -r PROJECT_ID`)"
            )
        from tfcli.gke.stack_files import cluster_spec

        cluster_spec(store.project, cluster)
    if file is not None:
        experiment = create_experiment(store, file, {}, replace=restart).name
    assert experiment is not None
    if resume:
        from tfcli.experiments.run import require_resumable

        require_resumable(store, store.get(experiment))
    _start(store, experiment, local=local, wait=wait, restart=restart, cluster=cluster)


@app.command()
def resume(
    experiment: OptionalName = None,
    wait: Annotated[bool | None, typer.Option("--wait/--detach")] = None,
    sweep: SweepName = None,
) -> None:
    """Continue a paused experiment from its newest checkpoint, where it last ran (-s: a sweep's unfinished trials)."""
    if _sweep_or(experiment, sweep):
        from tfcli.cli import sweep_view

        assert sweep is not None
        sweep_view.resume_cli(sweep, wait)
        return
    assert experiment is not None
    _start(_context(), experiment, local=False, wait=wait, resume=True)


@app.command("list")
def list_(as_json: Json = False, sweep: SweepName = None) -> None:
    """All experiments of the project: backend, run mode, status, progress, mean return (-s: a sweep compared)."""
    if sweep is not None:
        from tfcli.cli import sweep_view

        sweep_view.list_cli(sweep, as_json)
        return
    from tfcli.experiments.run import statuses as all_statuses

    statuses = all_statuses(_context())
    if as_json:
        out().print_json(json.dumps([s.as_json() for s in statuses]))
        return
    from rich.table import Table

    if not statuses:
        out().print("No experiments yet: `tfcli experiment start -f cartpole-ppo` runs the quick-start one.")
        return
    table = Table("name", "backend", "run mode", "status", "progress", "mean return", box=None, pad_edge=False)
    watched = any(s.cluster or s.cost for s in statuses)  # GKE: the pods' state and the cost so far
    if watched:
        table.add_column("cost")
        table.add_column("pods")
    for s in statuses:
        progress = f"{s.progress:.0%}" if s.progress is not None else "-"
        mean = f"{s.mean_return:.1f}" if s.mean_return is not None else "-"
        row = [s.name, s.backend, s.run_mode, s.state, progress, mean]
        if watched:
            row += [f"${s.cost['usd']:,.2f}" if s.cost else "-", (s.cluster or {}).get("brief") or "-"]
        table.add_row(*row)
    out().print(table)
    from rich.markup import escape

    from tfcli.gke.cost import budget_warning

    for s in statuses:
        if s.state == "unknown":
            err().print(f"[yellow]warning:[/] {s.name}: {escape(s.detail)}")
        if unreadable := (s.cluster or {}).get("error"):
            err().print(f"[yellow]warning:[/] {s.name}: cannot read its cluster: {escape(unreadable)}")
        if s.cost and (warning := budget_warning(s.cost["usd"], s.cost.get("max_cost"))):
            err().print(f"[yellow]warning:[/] {s.name}: {escape(warning)}")


@app.command()
def status(experiment: OptionalName = None, as_json: Json = False, sweep: SweepName = None) -> None:
    """One experiment's state, progress and result (-s: a sweep's state and its trials)."""
    if _sweep_or(experiment, sweep):
        from tfcli.cli import sweep_view

        assert sweep is not None
        sweep_view.status_cli(sweep, as_json)
        return
    assert experiment is not None
    from tfcli.experiments.run import status_of

    store = _context()
    current = status_of(store, store.get(experiment))
    if as_json:
        out().print_json(json.dumps(current.as_json()))
        return
    out().print(f"[bold]{current.name}[/] ({current.run_mode}, {current.backend}): {current.state}")
    progress = f" ({current.progress:.0%} of {current.budget})" if current.progress is not None else ""
    out().print(f"  {current.timesteps:,} timesteps, {current.episodes:,} episodes{progress}")
    if current.mean_return is not None:
        out().print(f"  mean return (last 100 episodes): {current.mean_return:.1f}")
    if current.wall_seconds:
        speed = current.timesteps_per_second
        rate = (
            f" ({speed:,.0f} timesteps/s{', recent episodes' if current.state == 'running' else ''})" if speed else ""
        )
        out().print(f"  wall time: {current.wall_seconds:.1f} s{rate}")
    if current.pid:
        out().print(f"  process: {current.pid}")
    if current.detail:
        out().print(f"  {'reason' if current.state == 'paused' else 'error'}: {current.detail}", markup=False)
    _show_cluster(current)


def _show_cluster(current: Any) -> None:
    """GKE: the pods' state and the cost so far (tfcli/gke/watch.py), with the max_cost warning from 80 %."""
    from rich.markup import escape

    cluster = current.cluster or {}
    if cluster.get("error"):
        err().print(f"[yellow]warning:[/] cannot read the cluster: {escape(cluster['error'])}")
    elif cluster.get("summary"):
        out().print(f"  pods: {cluster['summary']}", markup=False)
    if current.cost is None:
        return
    from tfcli.gke.cost import budget_warning

    cost = current.cost
    limit = f" of max_cost ${cost['max_cost']:,.2f}" if cost.get("max_cost") else ""
    out().print(f"  cost so far: ${cost['usd']:,.2f}{limit} (list prices of {cost['prices_as_of']}; nodes now up)")
    for item in cost["items"]:
        out().print(f"    {item['item']}: {item['hours']:,.2f} h, ${item['usd']:,.2f}", markup=False)
    if warning := budget_warning(cost["usd"], cost.get("max_cost")):
        err().print(f"[yellow]warning:[/] {current.name}: {escape(warning)}")


@app.command()
def logs(
    experiment: OptionalName = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing while it runs.")] = False,
    worker: Annotated[int | None, typer.Option("--worker", help="An env-worker's log (distributed).")] = None,
    tail: Annotated[int | None, typer.Option("--tail", help="Start with the last N lines.")] = None,
    sweep: SweepName = None,
) -> None:
    """Print the trainer's log (or an env-worker's; -s: a sweep's queue log); on GKE streamed from the cluster."""
    if _sweep_or(experiment, sweep):
        from tfcli.cli import sweep_view

        assert sweep is not None
        sweep_view.logs_cli(sweep)
        return
    assert experiment is not None
    from tfcli.experiments.run import follow_log

    store = _context()
    follow_log(
        store,
        store.get(experiment),
        follow=follow,
        worker=worker,
        tail=tail,
        write=lambda text: out().print(text, end="", markup=False, highlight=False),
    )


@app.command()
def pause(experiment: OptionalName = None, sweep: SweepName = None) -> None:
    """Checkpoint and stop the run (GKE: suspend its Jobs); `resume` continues it. -s: a sweep's running trials."""
    if _sweep_or(experiment, sweep):
        from tfcli.cli import sweep_view

        assert sweep is not None
        sweep_view.pause_cli(sweep)
        return
    assert experiment is not None
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.experiments.run import pause_experiment

    store = _context()
    result = pause_experiment(store, store.get(experiment), observer=RichUpdateObserver())
    if result.get("status") == "pausing":
        out().print(
            f"Pausing {experiment}: its Jobs are suspended and the trainer is writing its checkpoint; "
            f"`tfcli experiment status -e {experiment}` shows when it is paused."
        )
        return
    out().print(f"Paused {experiment} at {result.get('timesteps', 0):,} timesteps (checkpoint saved).")


@app.command()
def stop(
    experiment: OptionalName = None,
    no_download: Annotated[bool, typer.Option("--no-download", help="Do not download results first (GKE).")] = False,
    sweep: SweepName = None,
) -> None:
    """Stop the experiment for good: checkpoint, end its processes (GKE: download, destroy its stack). -s: a sweep."""
    if _sweep_or(experiment, sweep):
        from tfcli.cli import sweep_view

        assert sweep is not None
        sweep_view.stop_cli(sweep)
        return
    assert experiment is not None
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.experiments.run import stop_experiment
    from tfcli.spec.documents import display_path

    store = _context()
    results = stop_experiment(store, store.get(experiment), download=not no_download, observer=RichUpdateObserver())
    if results is None and no_download:
        out().print(
            f"Stopped {experiment}; its results were not downloaded (--no-download) and are gone with its bucket"
        )
        return
    if results is None:
        out().print(f"Stopped {experiment}; nothing of it was deployed, and it has no results")
        return
    out().print(f"Stopped {experiment}; results are in {display_path(results)}/")


@app.command()
def download(experiment: OptionalName = None, sweep: SweepName = None) -> None:
    """Copy the experiment's results to experiments/NAME/results/ (GKE: from its bucket, only what changed)."""
    if _sweep_or(experiment, sweep):
        from tfcli.cli import sweep_view

        assert sweep is not None
        sweep_view.download_cli(sweep)
        return
    assert experiment is not None
    from tfcli.experiments.run import download_results
    from tfcli.spec.documents import display_path

    store = _context()
    path = download_results(store, store.get(experiment))
    out().print(f"Results of {experiment} are in {display_path(path)}")


@app.command()
def play(
    experiment: Name,
    episodes: Annotated[int, typer.Option("--episodes", min=1, help="Episodes to play.")] = 1,
    checkpoint: Annotated[
        str, typer.Option("--checkpoint", help="`latest` (the newest complete one) or a checkpoint's number.")
    ] = "latest",
    video: Annotated[
        Path | None, typer.Option("--video", help="Record the episodes to this .mp4 or .gif file.")
    ] = None,
    deterministic: Annotated[
        bool, typer.Option("--deterministic", help="Act greedily (default: sample from the policy, as in training).")
    ] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed the environment (default: the experiment's).")
    ] = None,
) -> None:
    """Watch the agent play: load a checkpoint, play episodes, print their returns, optionally record a video.

    Reads a copy of the checkpoint, so a run that is still training is not disturbed; a GKE run's checkpoints are
    here after `tfcli experiment download`.
    """
    from tfcli.errors import InvalidInput

    number: int | None = None
    if checkpoint != "latest":
        if not checkpoint.isdigit():
            raise InvalidInput(f"--checkpoint: '{checkpoint}' is neither `latest` nor a checkpoint number")
        number = int(checkpoint)
    if video is not None:
        from trainer.video import check_video_path

        check_video_path(video)
    store = _context()
    found = store.get(experiment)
    spec = found.spec()
    from trainer.play import play as play_episodes

    out().print(f"Loading {experiment}'s agent (TensorFlow starts) ...")
    played = play_episodes(
        spec,
        found.results,
        episodes=episodes,
        checkpoint=number,
        video=video,
        deterministic=deterministic,
        seed=seed,
        on_episode=lambda e: out().print(f"  episode {e.number}: return {e.episode_return:g} ({e.length:,} steps)"),
    )
    returns = [e.episode_return for e in played.episodes]
    out().print(
        f"{experiment}, checkpoint {played.checkpoint} ({played.trained_timesteps:,} timesteps trained, "
        f"loaded in {played.load_seconds:.1f} s): mean return {played.mean_return:g} over {len(returns)} episode(s)"
        + (f" (min {min(returns):g}, max {max(returns):g})" if len(returns) > 1 else "")
    )
    if played.video is not None:
        from tfcli.spec.documents import display_path

        v = played.video
        out().print(f"Video: {display_path(v.path)} ({v.frames:,} frames, {v.width}x{v.height}, {v.fps:g} fps)")


Cluster = Annotated[
    str | None, typer.Option("--cluster", "-c", help="As on this shared cluster (`start -c`); default: its own.")
]


@app.command()
def plan(
    experiment: OptionalName = None,
    file: Spec = None,
    cluster: Cluster = None,
    as_json: Json = False,
    sweep: SweepName = None,
) -> None:
    """Offline: the resources the experiment's (-s: sweep's) stack declares, key inputs and estimated hourly cost."""
    if sweep is not None:
        from tfcli.cli import sweep_view

        sweep_view.plan_cli(sweep, cluster, as_json)
        return
    from tfcli.gke.planning import plan as make_plan
    from tfcli.gke.planning import plan_data, planned

    target = planned(_context(), experiment=experiment, file=file, cluster=cluster)
    result = make_plan(target)
    if as_json:
        out().print_json(json.dumps(plan_data(target, result)))
        return
    from tfcli.cli.plan_view import show_plan

    show_plan(target, result)


@app.command()
def render(
    experiment: OptionalName = None,
    file: Spec = None,
    cluster: Cluster = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the YAML to this file.")] = None,
) -> None:
    """Offline: the Kubernetes objects (YAML) the experiment's stack would apply."""
    from tfcli.gke.planning import planned
    from tfcli.gke.planning import render as render_yaml

    target = planned(_context(), experiment=experiment, file=file, cluster=cluster)
    text = render_yaml(target)
    if note := target.note():
        from rich.markup import escape

        err().print(f"[yellow]note:[/] {escape(note)}")
    if output is None:
        typer.echo(text, nl=False)
        return
    from tfcli.fileio import write_atomic
    from tfcli.spec.documents import display_path

    write_atomic(output, text)
    err().print(f"Wrote {display_path(output)}")


@app.command()
def plot(
    experiments: Annotated[
        list[str] | None, typer.Option("--experiment", "-e", help="Experiment name (repeatable).")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="PNG file to write.")] = None,
    sweep: SweepName = None,
) -> None:
    """Learning curves of one or more experiments in one PNG (-s: a sweep's combinations, mean and 95% band)."""
    if _sweep_or(experiments or None, sweep):
        from tfcli.cli import sweep_view

        assert sweep is not None
        sweep_view.plot_cli(sweep, output)
        return
    assert experiments
    from tfcli.experiments.plot import plot_learning_curves

    store = _context()
    dirs = [store.get(name) for name in experiments]
    target = output or Path(f"{'-vs-'.join(experiments)}.png" if len(experiments) > 1 else f"{experiments[0]}.png")
    written = plot_learning_curves(dirs, target)
    out().print(f"Wrote {written}")
