"""Learning curves of one or more experiments in one PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfcli.experiments.progress import read_all
from tfcli.experiments.store import ExperimentDir
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.files import check_writable

SMOOTHING = 20


def plot_learning_curves(experiments: list[ExperimentDir], output: Path) -> Path:
    """Episode return against timesteps (raw, faint; moving average of 20 episodes, bold) per experiment."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 5), dpi=110)
    plotted = 0
    for experiment in experiments:
        records = read_all(experiment.results / "progress.jsonl")
        if not records:
            continue
        records.sort(key=lambda r: (r.get("timesteps", 0), r.get("episode", 0)))
        steps = [r.get("timesteps", 0) for r in records]
        returns = [float(r.get("return", 0.0)) for r in records]
        smooth = [
            sum(returns[max(0, i - SMOOTHING + 1) : i + 1]) / (i + 1 - max(0, i - SMOOTHING + 1))
            for i in range(len(returns))
        ]
        (line,) = axes.plot(steps, smooth, linewidth=2, label=f"{experiment.name} ({len(records)} episodes)")
        axes.plot(steps, returns, color=line.get_color(), alpha=0.2, linewidth=0.8)
        plotted += 1
    if not plotted:
        plt.close(figure)
        names = ", ".join(e.name for e in experiments)
        raise TfcliError(f"no finished episodes to plot yet for {names}", hint="start the experiment first")
    axes.set_xlabel("timesteps")
    return save_curves(figure, axes, output)


def save_curves(figure: Any, axes: Any, output: Path) -> Path:
    """Label the return axis, add grid and legend, and write the PNG in one step (never a half-written file)."""
    import matplotlib.pyplot as plt

    axes.set_ylabel(f"episode return (moving average of {SMOOTHING})")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    temporary = output.with_name(f".{output.name}.tmp.png")
    try:
        figure.savefig(temporary)
        temporary.replace(output)
    finally:
        plt.close(figure)
        temporary.unlink(missing_ok=True)  # a full disk leaves no half-written image behind
    return output


def check_plot_path(output: Path) -> Path:
    """``plot -o``: a ``.png`` that can be written, checked before any curve is read (as ``play --video``)."""
    if output.suffix.lower() != ".png":
        raise InvalidInput(f"-o/--output: {output}: write a .png file")
    return check_writable(output, "-o/--output")
