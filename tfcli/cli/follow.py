"""Following a run in the terminal: a progress bar fed by ``progress.jsonl`` (a local file, or the object in a GKE
experiment's bucket), then the result."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tfcli.cli.console import err, out
from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.spec.documents import display_path

if TYPE_CHECKING:
    from tfcli.gke.experiments import Deployment

PAUSED_EXIT = 143
LOG_TAIL_LINES = 25


def _tail(experiment: ExperimentDir) -> list[str]:
    try:
        lines = (experiment.logs / "trainer.log").read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []
    return lines[-LOG_TAIL_LINES:]


def _progress_bar() -> Progress:
    """The bar both backends show: budget done, episodes and mean return, elapsed time."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=out(),
        transient=False,
    )


def _budget(spec: Any) -> tuple[int, str]:
    """What the bar counts: timesteps when the experiment has a timestep budget, else episodes."""
    return spec.total_timesteps or spec.episodes or 0, "timesteps" if spec.total_timesteps else "episodes"


def follow(experiment: ExperimentDir, process: subprocess.Popen[bytes]) -> int:
    """Show progress until the run ends; Ctrl-C pauses it (checkpoint). Returns the CLI's exit code."""
    spec = experiment.spec()
    total, unit = _budget(spec)
    reader = ProgressReader(experiment.results / "progress.jsonl")
    interrupted = False
    with _progress_bar() as progress:
        task = progress.add_task(f"{spec.name} ({unit})", total=total, detail="starting…")
        while process.poll() is None:
            try:
                time.sleep(0.5)
                reader.read()
                done = reader.timesteps if unit == "timesteps" else reader.episodes
                mean = reader.mean_return
                detail = f"episodes {reader.episodes:,}" + (f"  mean return {mean:.1f}" if mean is not None else "")
                progress.update(task, completed=done, detail=detail)
            except KeyboardInterrupt:
                if not interrupted:
                    interrupted = True
                    progress.update(task, detail="pausing: writing a checkpoint…")
                    os.kill(process.pid, signal.SIGTERM)
        # progress.jsonl counts finished episodes; the run's last timesteps are in result.json.
        final = experiment.result()
        if final:
            progress.update(task, completed=int(final.get(unit, 0)), detail=f"episodes {final.get('episodes', 0):,}")
    return report_end(experiment, process.returncode, interrupted)


def report_end(experiment: ExperimentDir, code: int, interrupted: bool = False) -> int:
    """Print how the run ended and map it to the CLI's exit code."""
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
        out().print(f"  TensorBoard:    tensorboard --logdir {results}/summaries")
        return 0
    if code == PAUSED_EXIT or status == "paused":
        out().print(
            f"[yellow]⏸[/] {experiment.name} paused at {result.get('timesteps', 0):,} timesteps (checkpoint saved); "
            f"resume with `tfcli experiment resume -e {experiment.name}`"
        )
        return 130 if interrupted else 0
    err().print(f"[bold red]error:[/] {experiment.name} {status or 'ended'} (exit code {code})")
    if result.get("error"):
        err().print(f"       {escape(str(result['error']))}")
    tail = _tail(experiment)
    if tail:
        err().print(f"last lines of {display_path(experiment.logs / 'trainer.log')}:")
        for line in tail:
            err().print(f"  {escape(line)}")
    return 2 if code == 2 else 1


def follow_gke(store: ExperimentStore, experiment: ExperimentDir, deployment: Deployment) -> int:
    """Show progress read from the bucket until the run ends, then download (and, on a cluster of its own that
    completed, destroy the stack). Ctrl-C stops following; the run goes on. Returns the CLI's exit code."""
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.experiments.run import download_results, stop_experiment
    from tfcli.gke import experiments as gke
    from tfcli.gke.results import RemoteResults, remote_results

    spec = experiment.spec()
    total, unit = _budget(spec)
    remote = remote_results(store.project, deployment.outputs)
    with _progress_bar() as progress:
        task = progress.add_task(f"{spec.name} on GKE ({unit})", total=total, detail="waiting for the learner…")

        def show(remote: RemoteResults) -> None:
            reader = remote.progress
            if not reader.episodes:
                return
            mean = reader.mean_return
            detail = f"episodes {reader.episodes:,}" + (f"  mean return {mean:.1f}" if mean is not None else "")
            progress.update(task, completed=reader.timesteps if unit == "timesteps" else reader.episodes, detail=detail)

        try:
            result = gke.wait_for_result(
                remote,
                lambda r: r.get("status") in ("completed", "failed", "paused"),
                initial=deployment.result_generation,
                timeout=None,
                on_poll=show,
            )
        except KeyboardInterrupt:
            progress.update(task, detail="no longer following")
            result = {}
    if not result:
        out().print(
            f"{experiment.name} keeps running on GKE. Watch it with `tfcli experiment status -e {experiment.name}`; "
            f"`pause` or `stop` it when you like."
        )
        return 130
    status = result.get("status")
    if status == "completed" and deployment.own_cluster:
        out().print(f"Downloading the results of {experiment.name} and tearing its cluster down…")
        stop_experiment(store, experiment, download=True, observer=RichUpdateObserver())
    else:
        download_results(store, experiment)
    code = report_end(experiment, {"completed": 0, "paused": PAUSED_EXIT}.get(str(status), 1))
    if status == "failed":
        err().print(
            f"       its stack is still deployed (and billed): `tfcli experiment logs -e {experiment.name}` says how "
            f"to read its logs, `tfcli experiment stop -e {experiment.name}` tears it down"
        )
    elif status == "completed" and not deployment.own_cluster:
        out().print(
            f"  its workloads and bucket stay on the shared cluster until `tfcli experiment stop -e {experiment.name}`"
        )
    return code
