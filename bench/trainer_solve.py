"""Time to solve CartPole with this trainer, and the rule for "solved", for ``bench.solve`` and ``bench.sb3_child``.

"Solved" (``solved_at``): the first ``SOLVED_EPISODES`` consecutive finished episodes whose mean return is at least
``SOLVED_RETURN``. ``measure_solve`` runs the bundled experiment until its ``progress.jsonl`` shows the solve;
``seconds_text`` and ``median_or_none`` format ``bench.solve``'s table. Imports nothing beyond the standard library
at module level: ``bench.sb3_child`` imports it in stable-baselines3's own virtual environment.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.report import read_progress
from bench.trainer_launch import launch, trainer_environment, write_spec

SOLVED_RETURN = 475.0
SOLVED_EPISODES = 20


@dataclass(frozen=True)
class Solve:
    seed: int
    from_start: float | None  # seconds from the trainer's process start (None: not solved)
    from_first_timestep: float | None
    timesteps: int
    episodes: int


def solved_at(lines: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The episode that first closes SOLVED_EPISODES consecutive episodes averaging SOLVED_RETURN or more."""
    for end in range(SOLVED_EPISODES, len(lines) + 1):
        window = lines[end - SOLVED_EPISODES : end]
        if sum(line["return"] for line in window) / SOLVED_EPISODES >= SOLVED_RETURN:
            return lines[end - 1]
    return None


def measure_solve(seed: int, cap: float) -> Solve:
    """Run the bundled experiment (its own budget and run mode) until solved, ``cap`` seconds at most."""
    with tempfile.TemporaryDirectory(prefix="bench-solve-") as folder:
        root = Path(folder)
        spec = write_spec(root, seed=seed)
        started = time.monotonic()
        learner, workers = launch(spec, root / "out", trainer_environment())
        found: dict[str, Any] | None = None
        from_start: float | None = None
        lines: list[dict[str, Any]] = []
        try:
            while time.monotonic() - started < cap:
                lines = read_progress(root / "out")
                found = solved_at(lines)
                if found is not None:
                    from_start = time.monotonic() - started  # polled every 50 ms: at most that late
                    break
                if learner.poll() is not None:
                    break
                time.sleep(0.05)
        finally:
            if learner.poll() is None:
                learner.kill()
            learner.wait()
            for worker in workers:
                worker.kill()
                worker.wait()
    if found is None:
        return Solve(seed, None, None, lines[-1]["timesteps"] if lines else 0, len(lines))
    return Solve(seed, from_start, found["wall_seconds"], found["timesteps"], found["episode"])


def seconds_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def median_or_none(values: list[float | None]) -> float | None:
    if any(value is None for value in values) or not values:
        return None
    return statistics.median([value for value in values if value is not None])
