"""``learning_curve.png``: episode returns and their moving average against timesteps, from ``progress.jsonl``.

Drawn with matplotlib's Agg backend (no display in a container), into a temporary file that replaces the old
picture in one step (and is removed if drawing fails, e.g. on a full disk).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from trainer.kernel.state import Episode

FILENAME = "learning_curve.png"


def moving_average(values: list[float], window: int) -> np.ndarray:
    """The mean of each value and up to ``window - 1`` before it (so the line starts at the first episode)."""
    data = np.asarray(values, dtype=float)
    sums = np.cumsum(np.insert(data, 0, 0.0))
    counts = np.minimum(np.arange(1, len(data) + 1), window)
    return (sums[1:] - sums[np.arange(1, len(data) + 1) - counts]) / counts


def plot_learning_curve(episodes: list[Episode], path: Path, *, title: str, window: int = 100) -> None:
    # A bare Figure on the Agg canvas: no pyplot (its import and backend set-up are a third of the drawing time,
    # which every finished run would wait for) and no global figure registry to close.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    if episodes:
        x = [episode.timesteps for episode in episodes]
        returns = [episode.episode_return for episode in episodes]
        axes.plot(x, returns, ".", markersize=3, alpha=0.35, color="tab:blue", label="episode return")
        shown = min(window, len(returns))
        axes.plot(x, moving_average(returns, shown), color="tab:orange", label=f"mean of last {shown}")
        axes.legend(loc="lower right")
    else:
        axes.text(0.5, 0.5, "no finished episodes yet", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("timesteps")
    axes.set_ylabel("return")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        figure.savefig(temporary, format="png")
        os.replace(temporary, path)
    except BaseException:  # a full disk: no half-written temporary left behind
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
