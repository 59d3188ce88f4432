"""``experiment download / plot / play``: a run's results here, drawn, or its agent watched."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tfcli.cli.console import out
from tfcli.cli.context import CliContext
from tfcli.cli.experiment.options import Name, OptionalName, SweepName


def download(experiment: OptionalName = None, sweep: SweepName = None) -> None:
    """Copy the experiment's results to experiments/NAME/results/ (GKE: from its bucket, only what changed)."""
    from tfcli.runs.results import download_summary

    ctx = CliContext()
    run = ctx.run(experiment=experiment, sweep=sweep)
    for line in download_summary(run, ctx.backends.download(run)):
        out().print(line, markup=False)


def plot(
    experiments: Annotated[
        list[str] | None, typer.Option("--experiment", "-e", help="Experiment name (repeatable).")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="PNG file to write.")] = None,
    sweep: SweepName = None,
) -> None:
    """Learning curves of one or more experiments in one PNG (-s: a sweep's combinations, mean and 95% band)."""
    from trainer.kernel.errors import InvalidInput

    if (not experiments) == (sweep is None):
        raise InvalidInput("give exactly one of -e NAME (an experiment) or -s SWEEP (a sweep)")
    from tfcli.experiments.plot import check_plot_path

    default = f"{sweep}.png" if sweep is not None else f"{'-vs-'.join(experiments or [])}.png"
    target = check_plot_path(output or Path(default))  # before any curve is read or downloaded
    ctx = CliContext()
    if sweep is not None:
        from tfcli.sweeps.plot import plot_sweep

        run = ctx.run(sweep=sweep)  # a GKE sweep's downloads (`download -s` or `stop -s`) are what is drawn
        rows = ctx.backends.compare(run, downloaded=True)
        written = plot_sweep(sweep, rows, target, run.sweep().target_return())
    else:
        from tfcli.experiments.plot import plot_learning_curves

        assert experiments
        written = plot_learning_curves([ctx.store.get(name) for name in experiments], target)
    out().print(f"Wrote {written}")


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
    from trainer.kernel.errors import InvalidInput

    number: int | None = None
    if checkpoint != "latest":
        if not checkpoint.isdigit():
            raise InvalidInput(f"--checkpoint: '{checkpoint}' is neither `latest` nor a checkpoint number")
        number = int(checkpoint)
    if video is not None:
        from trainer.video import check_video_path

        check_video_path(video)
    found = CliContext().store.get(experiment)
    spec = found.spec()
    from tfcli.experiments.preflight import importable_project_code
    from trainer.play import play_isolated

    importable_project_code()  # the project's own environments (envs/) import here as in the trainer

    out().print(f"Loading {experiment}'s agent (TensorFlow starts) ...")
    played = play_isolated(
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
        from trainer.kernel.spec.documents import display_path

        v = played.video
        out().print(f"Video: {display_path(v.path)} ({v.frames:,} frames, {v.width}x{v.height}, {v.fps:g} fps)")
