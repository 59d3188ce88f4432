"""The ``-s SWEEP`` side of ``tfcli experiment ...``: parse, call :mod:`tfcli.sweeps`, render with rich."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from tfcli.cli.console import err, out
from tfcli.spec.documents import display_path


def _store() -> Any:
    from tfcli.experiments.store import ExperimentStore
    from tfcli.project import open_project

    return ExperimentStore(open_project())


def _sweep(store: Any, name: str) -> Any:
    from tfcli.sweeps.store import get_sweep

    return get_sweep(store, name)


def create(
    file: str,
    options: Any,
    *,
    build: bool,
    start: bool,
    local: bool,
    wait: bool | None,
    restart: bool,
) -> None:
    from tfcli.spec import ConfigLibrary
    from tfcli.sweeps.create import build_trials, create_sweep, plan_sweep

    store = _store()
    planned = plan_sweep(file, options, ConfigLibrary.for_project(store.project.root))
    if build:
        for line in build_trials(planned):
            err().print(f"  {escape(line)}")
    sweep = create_sweep(store, planned, replace=restart)
    combos = len(planned.trials) // planned.sweep.seeds
    out().print(
        f"Created sweep '{sweep.name}' in {display_path(sweep.root)}: {combos} combination(s) x "
        f"{planned.sweep.seeds} seed(s) = {len(planned.trials)} trials "
        f"({planned.trials[0].name} .. {planned.trials[-1].name}), every one validated"
    )
    if start:
        start_cli(sweep.name, parallel=None, local=local, wait=wait, restart=restart, store=store)
    else:
        out().print(f"Start it with `tfcli experiment start -s {sweep.name}`")


def _on_gke(sweep: Any) -> bool:
    """Whether the sweep's last start was on GKE (its stack, :mod:`tfcli.gke.sweeps`): later commands follow it."""
    return sweep.run_record().get("backend") == "gke"


def start_cli(
    name: str,
    *,
    parallel: int | None,
    local: bool,
    wait: bool | None,
    restart: bool = False,
    store: Any = None,
    cluster: str | None = None,
) -> None:
    from tfcli.errors import InvalidInput
    from tfcli.sweeps.run import start_sweep

    store = store or _store()
    sweep = _sweep(store, name)
    if not local and store.project.settings.default_backend == "gke":
        start_gke(store, sweep, parallel=parallel, wait=wait, restart=restart, cluster=cluster)
        return
    if cluster is not None:
        if local:
            raise InvalidInput("--cluster: a shared cluster is a GKE cluster; it has no meaning with --local")
        raise InvalidInput(
            "--cluster: a shared cluster is a GKE cluster, and this project names no GCP project "
            "(set one with `tfcli init -r PROJECT_ID`)"
        )
    process = start_sweep(store, sweep, parallel=parallel, restart=restart)
    if process is None:
        out().print(f"Every trial of {name} has already completed (`--restart` starts the sweep over).")
        show_table(store, sweep, as_json=False)
        return
    record = sweep.run_record()
    out().print(f"Started sweep {name}: {record.get('parallel')} trial(s) at a time (queue pid {process.pid})")
    if wait is False:
        out().print(f"Watch it with `tfcli experiment status -s {name}`; `tfcli experiment list -s {name}` compares.")
        return
    code = follow(store, sweep, process)
    if code:
        raise typer.Exit(code)


def start_gke(
    store: Any, sweep: Any, *, parallel: int | None, wait: bool | None, restart: bool, cluster: str | None
) -> None:
    """``start -s`` on GKE: deploy the sweep's stack; ``--wait`` follows the bucket until every trial has ended."""
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.gke import sweeps as gke_sweeps

    with sweep.locked():
        deployment = gke_sweeps.start(
            store, sweep, parallel=parallel, restart=restart, shared_cluster=cluster, observer=RichUpdateObserver()
        )
    name, outputs = sweep.name, deployment.outputs
    if deployment.nothing_to_run:
        out().print(f"Every trial of {name} has already completed (`stop -s {name}` downloads them and tears it down).")
        show_table(store, sweep, as_json=False)
        return
    where = f"shared cluster {deployment.shared_cluster}" if deployment.shared_cluster else "its own cluster"
    out().print(
        f"Deployed sweep {name} on GKE ({where} {outputs.get('clusterName', '')}, namespace "
        f"{outputs.get('namespace', '?')}): {len(outputs.get('trials') or sweep.trials())} trials in one Indexed Job, "
        f"{outputs.get('parallelism', '?')} at a time; results go to {outputs.get('resultsUrl', 'its bucket')}"
    )
    if not wait:
        out().print(
            f"Watch it with `tfcli experiment status -s {name}`; `tfcli experiment list -s {name}` compares, "
            f"`tfcli experiment stop -s {name}` downloads every trial's results and tears it down."
        )
        return
    code = follow_gke(store, sweep, own_cluster=deployment.shared_cluster is None)
    if code:
        raise typer.Exit(code)


def follow_gke(store: Any, sweep: Any, *, own_cluster: bool) -> int:
    """Print each trial's end (read from the bucket) until none runs; then download (a completed sweep on a cluster
    of its own: stop, which downloads and destroys). Ctrl-C stops following; the sweep goes on."""
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.gke import sweeps as gke_sweeps

    seen: dict[str, str] = {}
    started = time.monotonic()
    try:
        ended = gke_sweeps.wait_until(
            store,
            sweep,
            lambda v: v.status.state in ("completed", "failed", "paused"),
            on_poll=lambda v: _print_changes(v.status, seen),
        )
    except KeyboardInterrupt:
        out().print(f"{sweep.name} keeps running on GKE: `tfcli experiment status -s {sweep.name}` watches it.")
        return 130
    state = ended.status.state
    if state == "completed" and own_cluster:
        out().print(f"Downloading the results of {sweep.name}'s trials and tearing its cluster down…")
        gke_sweeps.stop(store, sweep, observer=RichUpdateObserver())
    else:
        gke_sweeps.download(store, sweep)
    out().print(f"Sweep {sweep.name}: {state} after {time.monotonic() - started:.0f} s")
    show_table(store, sweep, as_json=False)
    return {"completed": 0, "paused": 143}.get(state, 1)


def _print_changes(status: Any, seen: dict[str, str]) -> None:
    """A line for each trial that started or ended since the last call."""
    done = sum(1 for _, s in status.trials if s.state in ("completed", "failed"))
    for trial, current in status.trials:
        if current.state != seen.get(trial.name) and current.state in ("completed", "failed", "running"):
            seen[trial.name] = current.state
            mean = f", mean return {current.mean_return:.1f}" if current.mean_return is not None else ""
            wall = f" in {current.wall_seconds:.0f} s" if current.state == "completed" and current.wall_seconds else ""
            out().print(
                f"  {trial.name} ({escape(trial.label)}, seed {trial.seed}): {current.state}{wall}{mean} "
                f"[{done}/{len(status.trials)} done]"
            )


def follow(store: Any, sweep: Any, process: Any) -> int:
    """Print each trial's end until the queue exits; Ctrl-C pauses the sweep. Returns the exit code."""
    from tfcli.sweeps.run import pause_sweep, queue_alive, sweep_status

    seen: dict[str, str] = {}
    started = time.monotonic()
    try:
        while True:
            alive = queue_alive(sweep)
            process.poll()
            _print_changes(sweep_status(store, sweep), seen)
            if not alive:
                break
            time.sleep(1.0)
    except KeyboardInterrupt:
        out().print(f"Pausing {sweep.name} (its running trials checkpoint)…")
        pause_sweep(store, sweep)
        out().print(f"Paused; `tfcli experiment resume -s {sweep.name}` continues it.")
        return 143
    code = process.wait()
    out().print(f"Sweep {sweep.name}: {sweep_status(store, sweep).state} after {time.monotonic() - started:.0f} s")
    show_table(store, sweep, as_json=False)
    return 0 if code == 0 else 1


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _rows(store: Any, sweep: Any, *, downloaded: bool = False) -> list[Any]:
    """The aggregate rows; a GKE sweep's from its bucket while deployed (``downloaded``: from the downloads)."""
    from tfcli.sweeps.aggregate import rows

    read = None
    if _on_gke(sweep):
        from tfcli.gke import sweeps as gke_sweeps

        if downloaded:
            read = lambda trial: gke_sweeps.read_downloaded(store.dir(trial.name), trial).run()  # noqa: E731
        else:
            read = gke_sweeps.view(store, sweep).run
    return rows(store, sweep.trials(), seeds=sweep.definition().seeds, target_return=sweep.target_return(), read=read)


def show_table(store: Any, sweep: Any, *, as_json: bool) -> None:
    """``list -s``: one row per combination, the best marked."""
    table_rows = _rows(store, sweep)
    if as_json:
        out().print_json(json.dumps([row.as_json() for row in table_rows]))
        return
    target = sweep.target_return()
    table = Table(box=None, pad_edge=False)
    table.add_column("")
    table.add_column("combination", no_wrap=True)
    table.add_column("seeds", no_wrap=True)
    table.add_column("final IQM [95% CI]", no_wrap=True)
    if target is not None:
        table.add_column("reached", no_wrap=True)
        table.add_column("to target", no_wrap=True)
    table.add_column("wall s", no_wrap=True)
    for row in table_rows:
        final = "-" if row.iqm is None else f"{row.iqm:.1f} [{row.ci_low:.1f}, {row.ci_high:.1f}]"
        if row.partial:
            final += " (partial)"
        cells = ["*" if row.best else "", row.label, f"{row.completed}/{row.runs}", final]
        if target is not None:
            cells += [f"{row.target_reached}/{row.completed or row.runs}", _number(row.target_timesteps_iqm, 0)]
        cells += [_number(row.wall_seconds_mean, 0)]
        table.add_row(*(escape(cell) for cell in cells))
    out().print(table)
    notes = [
        "final: each seed's mean return over the last 10% of its timesteps; IQM over seeds, 95% stratified-bootstrap CI"
    ]
    if target is not None:
        notes.append(
            f"reached / to target: seeds whose 20-episode moving average reached {target:g}; IQM of their timesteps"
        )
    notes.append("wall s: mean per trial" + ("; * best" if any(row.best for row in table_rows) else ""))
    for note in notes:
        out().print(note, highlight=False)


def list_cli(name: str, as_json: bool) -> None:
    store = _store()
    show_table(store, _sweep(store, name), as_json=as_json)


def _status(store: Any, sweep: Any) -> Any:
    if _on_gke(sweep):
        from tfcli.gke.sweeps import view

        return view(store, sweep).status
    from tfcli.sweeps.run import sweep_status

    return sweep_status(store, sweep)


def status_cli(name: str, as_json: bool) -> None:
    store = _store()
    status = _status(store, _sweep(store, name))
    if as_json:
        out().print_json(json.dumps(status.as_json()))
        return
    counts = ", ".join(f"{count} {state}" for state, count in sorted(status.counts.items()))
    parallel = f", {status.parallel} at a time" if status.parallel else ""
    out().print(f"[bold]{name}[/] (sweep, {status.backend}{parallel}): {status.state} — {counts}")
    table = Table("trial", "combination", "seed", "status", "progress", "mean return", box=None, pad_edge=False)
    pods = [current.cluster or {} for _, current in status.trials]
    if any("pod" in pod for pod in pods):
        table.add_column("pod")
    for (trial, current), pod in zip(status.trials, pods, strict=True):
        progress = f"{current.progress:.0%}" if current.progress is not None else "-"
        row = [trial.name, escape(trial.label), str(trial.seed), current.state, progress, _number(current.mean_return)]
        if any("pod" in pod for pod in pods):
            row.append(escape(pod["pod"] + (f": {pod['reason']}" if pod.get("reason") else "")) if pod else "-")
        table.add_row(*row)
    out().print(table)
    if unreadable := next((pod["error"] for pod in pods if "error" in pod), None):
        err().print(f"[yellow]warning:[/] cannot read the cluster: {escape(unreadable)}")


def plot_cli(name: str, output: Path | None) -> None:
    """From the results here (a GKE sweep's: its downloads, `download -s` or `stop -s`)."""
    from tfcli.sweeps.plot import plot_sweep

    store = _store()
    sweep = _sweep(store, name)
    table_rows = _rows(store, sweep, downloaded=True)
    written = plot_sweep(name, table_rows, output or Path(f"{name}.png"), sweep.target_return())
    out().print(f"Wrote {written}")


def pause_cli(name: str) -> None:
    store = _store()
    sweep = _sweep(store, name)
    if _on_gke(sweep):
        from tfcli.cli.stack_progress import RichUpdateObserver
        from tfcli.gke.sweeps import pause

        with sweep.locked():
            status = pause(store, sweep, observer=RichUpdateObserver())
    else:
        from tfcli.sweeps.run import pause_sweep

        status = pause_sweep(store, sweep)
    completed = status.counts.get("completed", 0)
    if status.state == "pausing":
        out().print(
            f"Pausing sweep {name}: its Job is suspended and its trials are writing their checkpoints; "
            f"`tfcli experiment status -s {name}` shows when it is paused."
        )
        return
    out().print(f"Paused sweep {name}: {completed} of {len(status.trials)} trials completed")


def resume_cli(name: str, wait: bool | None) -> None:
    """Continue a paused sweep where it last ran (on GKE: ``tfcli:suspend`` false and ``up``)."""
    from tfcli.errors import TfcliError

    store = _store()
    sweep = _sweep(store, name)
    if not _on_gke(sweep):
        start_cli(name, parallel=None, local=True, wait=wait, store=store)
        return
    state = _status(store, sweep).state
    if state not in ("paused", "pausing"):
        raise TfcliError(f"sweep '{name}' is {state}; only a paused sweep can resume")
    start_gke(store, sweep, parallel=None, wait=wait, restart=False, cluster=None)


def stop_cli(name: str) -> None:
    store = _store()
    sweep = _sweep(store, name)
    if _on_gke(sweep):
        from tfcli.cli.stack_progress import RichUpdateObserver
        from tfcli.gke.sweeps import stop

        with sweep.locked():
            status = stop(store, sweep, observer=RichUpdateObserver())
        downloaded = sum(1 for trial, _ in status.trials if store.dir(trial.name).results.is_dir())
        out().print(
            f"Stopped sweep {name}: {status.counts.get('completed', 0)} of {len(status.trials)} trials completed; "
            f"the results of {downloaded} are in experiments/{name}-K/results/"
        )
        return
    from tfcli.sweeps.run import stop_sweep

    status = stop_sweep(store, sweep)
    out().print(f"Stopped sweep {name}: {status.counts.get('completed', 0)} of {len(status.trials)} trials completed")


def logs_cli(name: str) -> None:
    from tfcli.errors import TfcliError

    store = _store()
    sweep = _sweep(store, name)
    if _on_gke(sweep):
        raise TfcliError(
            f"sweep '{name}' runs on GKE, where each trial has its own pod and log",
            hint=f"`tfcli experiment logs -e {name}-K` prints trial K's (`-f` follows it)",
        )
    path = sweep.logs / "queue.log"
    if not path.exists():
        raise TfcliError(f"sweep '{name}' has no queue log yet", hint=f"start it: `tfcli experiment start -s {name}`")
    out().print(path.read_text(errors="replace"), end="", markup=False, highlight=False)
    out().print(f"(each trial's own log: `tfcli experiment logs -e {name}-K`)", markup=False)


def download_cli(name: str) -> None:
    from tfcli.experiments.run import download_results

    store = _store()
    sweep = _sweep(store, name)
    if _on_gke(sweep):
        from tfcli.gke.sweeps import download

        with sweep.locked():
            paths = download(store, sweep)
        for path in paths:
            out().print(f"{path.parent.name}: {display_path(path)}")
        return
    for trial in sweep.trials():
        experiment = store.dir(trial.name)
        if experiment.results.is_dir() or experiment.run_record():
            path = download_results(store, experiment)
            out().print(f"{trial.name}: {display_path(path)}")


def plan_cli(name: str, cluster: str | None, as_json: bool) -> None:
    """``plan -s``: the sweep stack's resources and hourly cost, and the trials' shape on it."""
    from tfcli.sweeps.stack import plan_sweep_stack

    store = _store()
    sweep = _sweep(store, name)
    target, result = plan_sweep_stack(store.project, sweep.definition(), shared_cluster=cluster)
    trials = len(sweep.trials())
    parallelism = int(result.outputs.get("parallelism", 1))
    waves = -(-trials // parallelism)
    if as_json:
        data = result.to_data()
        data.update({"placeholder_project": target.placeholder, "trials": trials, "parallelism": parallelism})
        out().print_json(json.dumps(data))
        return
    from tfcli.cli.plan_view import show_plan

    show_plan(target, result)  # type: ignore[arg-type]  # it reads only note()
    out().print(
        f"\n[bold]Sweep[/] {name}: {trials} trials in one Indexed Job, {parallelism} at a time "
        f"({waves} wave(s)); the whole sweep costs about {waves} x one trial's duration x the running price above."
    )
