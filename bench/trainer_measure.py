"""What one run of ``bench.trainer`` measures, and one run of this trainer measured.

A run's finished episodes (``Timeline``: the steady rate with TensorFlow's warm-up left out, the last episodes' mean
return), its wall seconds, peak summed PSS and CPU seconds (``Measurement``), and ``measure_trainer``: the trainer
as ``tfcli experiment start --local`` runs it, timed from the first process start to the last exit.
"""

from __future__ import annotations

import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.processes import PeakMemory
from bench.report import read_progress
from bench.trainer_launch import launch, stop, trainer_environment, write_spec

STEADY_FROM = 0.2  # the steady rate starts at the episode nearest this fraction of the budget


@dataclass(frozen=True)
class Timeline:
    """Finished episodes of one run: (timesteps so far, seconds since the first timestep, return)."""

    episodes: list[tuple[int, float, float]]

    def steady_rate(self, budget: int) -> float:
        start = min(self.episodes, key=lambda episode: abs(episode[0] - STEADY_FROM * budget))
        end = self.episodes[-1]
        if end[1] <= start[1]:
            return float("nan")
        return (end[0] - start[0]) / (end[1] - start[1])

    def mean_return(self, last: int = 20) -> float:
        returns = [episode[2] for episode in self.episodes[-last:]]
        return sum(returns) / len(returns)


@dataclass(frozen=True)
class Measurement:
    """One whole run: wall seconds from the first process start to the last exit, its episodes, its peak memory."""

    seconds: float
    timeline: Timeline
    peak_memory: int  # bytes: summed PSS of the run's processes
    cpu_seconds: float  # user + sys of every process of the run (each waited for, so the kernel counts it here)


def children_cpu() -> float:
    """User + sys seconds of every finished, waited-for process below this one (their own waited children included).

    Steadier than wall time on a loaded machine: other work delays a run but does not bill it."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_trainer(
    experiment: str, overrides: dict[str, Any], budget: int, seed: int, environments: str = "auto"
) -> Measurement:
    """One run as ``tfcli experiment start --local`` runs it: env-workers (distributed) and the trainer, timed from
    the first process start to the last exit."""
    with tempfile.TemporaryDirectory(prefix="bench-trainer-") as folder:
        root = Path(folder)
        spec = write_spec(root, experiment, **overrides, total_timesteps=budget, seed=seed)
        env = trainer_environment()
        with PeakMemory() as memory:
            cpu = children_cpu()
            started = time.monotonic()
            learner, workers = launch(spec, root / "out", env, stderr=subprocess.PIPE, environments=environments)
            try:
                _, errors = learner.communicate()
                if learner.returncode != 0:
                    raise RuntimeError(f"the trainer exited with {learner.returncode}: {errors.decode()[-2000:]}")
            finally:
                stop(workers)
            seconds = time.monotonic() - started
            cpu = children_cpu() - cpu
        lines = read_progress(root / "out")
    timeline = Timeline([(line["timesteps"], line["wall_seconds"], line["return"]) for line in lines])
    return Measurement(seconds, timeline, memory.peak, cpu)
