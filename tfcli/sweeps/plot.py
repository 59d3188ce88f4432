"""``experiment plot -s SWEEP``: per combination, the mean return against timesteps across seeds with its 95 %
bootstrap band (:func:`tfcli.sweeps.aggregate.curve`), the target return as a dashed line when the spec names one."""

from __future__ import annotations

from pathlib import Path

from tfcli.experiments.plot import save_curves
from tfcli.sweeps.aggregate import Row, curve
from trainer.kernel.errors import TfcliError


def plot_sweep(name: str, rows: list[Row], output: Path, target_return: float | None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 5), dpi=110)
    plotted = 0
    for row in rows:
        runs = [run for run in row.runs_data if len(run.steps)]
        if not runs:
            continue
        steps, average, lower, upper = curve(runs)
        best = " (best)" if row.best else " (pruned)" if row.pruned and not row.completed else ""
        (line,) = axes.plot(steps, average, linewidth=2, label=f"{row.label}{best}, {len(runs)} seeds")
        axes.fill_between(steps, lower, upper, color=line.get_color(), alpha=0.2, linewidth=0)
        plotted += 1
    if not plotted:
        plt.close(figure)
        raise TfcliError(
            f"sweep '{name}' has no finished episodes to plot yet", hint=f"start it: `tfcli experiment start -s {name}`"
        )
    if target_return is not None:
        axes.axhline(target_return, color="grey", linestyle="--", linewidth=1, label=f"target {target_return:g}")
    axes.set_title(f"{name}: mean over seeds, 95% stratified-bootstrap band")
    axes.set_xlabel("timesteps")
    return save_curves(figure, axes, output)
