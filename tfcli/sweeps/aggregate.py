"""A sweep's results per combination: final performance (IQM over seeds, 95 % stratified-bootstrap CI), time to
the target return, wall time, and the learning curves with their confidence band (:mod:`tfcli.sweeps.stats`).

Scores come from each trial's ``progress.jsonl``: a run's final performance is the mean return of the episodes that
ended in the last 10% of its timesteps (at least its last episode) — what the policy does at the end, not an average
over a learning phase; curves and the time to target use a moving average of 20 episodes. Those rules are
:mod:`trainer.kernel.scores`, which the trainer's TensorBoard HParams metrics use too, so that both say the same
numbers. Only completed trials count while any of a combination has completed; until then the finished episodes of the
others are used and the row says ``partial``. A combination that early stopping pruned (some trials ``pruned``, none
completed) is scored where its trials stopped, and is never the best while another combination is in the running: the
best is judged on trials that ran their whole budget.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from tfcli.sweeps import stats
from trainer.kernel.scores import final_score, first_reach_index, smooth
from trainer.kernel.spec.sweep import Trial

CURVE_POINTS = 100


@dataclass(frozen=True)
class Run:
    """One trial's numbers."""

    trial: str
    seed: int
    state: str
    steps: np.ndarray  # timesteps at the end of each episode, ascending
    smoothed: np.ndarray  # moving average of trainer.kernel.scores.SMOOTHING episode returns
    walls: np.ndarray  # wall seconds since the run began, at the end of each episode (NaN where not recorded)
    final: float | None
    wall_seconds: float | None


@dataclass
class Row:
    """One combination of a sweep, as ``experiment list -s`` shows it."""

    combination: dict[str, Any]
    label: str
    trials: list[str]
    completed: int
    runs: int
    partial: bool
    iqm: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    target_return: float | None = None
    target_reached: int = 0
    target_timesteps_iqm: float | None = None
    target_seconds_iqm: float | None = None
    wall_seconds_mean: float | None = None
    pruned: int = 0  # trials early stopping ended at a rung
    best: bool = False
    runs_data: list[Run] = field(default_factory=list, repr=False)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("runs_data")
        return data


def episodes(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray]:
    """``progress.jsonl``'s records in timestep order (workers interleave), with their timesteps and returns."""
    records = sorted(records, key=lambda r: (int(r.get("timesteps", 0)), int(r.get("episode", 0))))
    steps = np.array([int(r.get("timesteps", 0)) for r in records])
    returns = np.array([float(r.get("return", 0.0)) for r in records])
    return records, steps, returns


def final_of(records: list[dict[str, Any]]) -> float | None:
    """A run's final performance from its episodes (``progress.jsonl``'s records): :func:`final_score`."""
    _, steps, returns = episodes(records)
    return final_score(steps, returns)


def run_of(trial: Trial, records: list[dict[str, Any]], state: str, result: dict[str, Any]) -> Run:
    """A trial's numbers from its episodes (``progress.jsonl``'s records), its state and its ``result.json``,
    wherever they were read (the results folder here, or the sweep's bucket on GKE)."""
    records, steps, returns = episodes(records)
    wall = result.get("wall_seconds")
    if wall is None and records:
        wall = records[-1].get("wall_seconds")
    final = final_score(steps, returns)
    walls = np.array([float(r.get("wall_seconds", np.nan)) for r in records])
    return Run(
        trial.name, trial.seed, state, steps, smooth(returns), walls, final, None if wall is None else float(wall)
    )


def first_reach(run: Run, target: float) -> tuple[int, float] | None:
    """(timesteps, wall seconds) when the run's moving average first reaches ``target``; None if it never does."""
    hit = first_reach_index(run.smoothed, target)
    return None if hit is None else (int(run.steps[hit]), float(run.walls[hit]))


def rows(trials: list[Trial], numbers: list[Run], *, seeds: int, target_return: float | None) -> list[Row]:
    """One row per combination (``seeds`` trials each, in trial order); the best IQM is marked. ``numbers`` are the
    trials' numbers in the same order, read by the sweep's backend (its results here, or its bucket)."""
    by_name = {run.trial: run for run in numbers}
    groups: dict[int, list[Trial]] = {}
    for trial in trials:
        groups.setdefault(trial.index // seeds, []).append(trial)
    result = []
    for members in groups.values():
        runs = [by_name[trial.name] for trial in members]
        done = [run for run in runs if run.state == "completed" and run.final is not None]
        used = done or [run for run in runs if run.final is not None]
        row = Row(
            combination=members[0].combination,
            label=members[0].label,
            trials=[trial.name for trial in members],
            completed=len(done),
            runs=len(members),
            partial=not done and bool(used),
            pruned=sum(run.state == "pruned" for run in runs),
            target_return=target_return,
            runs_data=runs,
        )
        if used:
            row.iqm, row.ci_low, row.ci_high = stats.bootstrap_ci(np.array([run.final for run in used]))
            walls = [run.wall_seconds for run in used if run.wall_seconds is not None]
            row.wall_seconds_mean = float(np.mean(walls)) if walls else None
        if target_return is not None and used:
            hits = [hit for run in used if (hit := first_reach(run, target_return)) is not None]
            row.target_reached = len(hits)
            if hits:
                row.target_timesteps_iqm = stats.iqm(np.array([steps for steps, _ in hits]))
                seconds = np.array([wall for _, wall in hits if not np.isnan(wall)])
                row.target_seconds_iqm = stats.iqm(seconds) if len(seconds) else None
        result.append(row)
    scored = [row for row in result if row.iqm is not None]
    if len(scored) > 1:
        contenders = [row for row in scored if not row.pruned or row.completed] or scored
        # Ties on the final return (CartPole's ceiling of 500) go to the one that reached the target sooner.
        max(contenders, key=lambda row: (row.iqm or 0.0, -(row.target_timesteps_iqm or float("inf")))).best = True
    return result


def curve(runs: list[Run], points: int = CURVE_POINTS) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(timesteps, mean, lower, upper): each run's moving average read at common timesteps (its last finished
    episode at or before each), over the span every run covers, with the bootstrap band across runs."""
    usable = [run for run in runs if len(run.steps)]
    if not usable:
        raise ValueError("no episodes")
    start = max(int(run.steps[0]) for run in usable)
    end = min(int(run.steps[-1]) for run in usable)
    grid = np.linspace(start, end, points) if end > start else np.array([float(end)])
    matrix = np.array([run.smoothed[np.searchsorted(run.steps, grid, side="right") - 1] for run in usable])
    average, lower, upper = stats.curve_band(matrix)
    return grid, average, lower, upper
