"""``experiment compare``: runs side by side, by the settings that differ and what each run reached.

Experiments (``-e A -e B``) are compared run by run; a sweep (``-s``) combination by combination, with the numbers
``list -s`` computes (IQM over seeds, 95 % bootstrap CI). A run's final return is the rule sweeps use
(:func:`tfcli.sweeps.aggregate.final_score`: the mean return over the last 10 % of its timesteps), read from its
``progress.jsonl``; where only the run's status has numbers (a GKE run whose results are not here), it is the mean
of the last 100 episodes, marked as such, never an invented figure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import numpy as np

from tfcli.experiments.compare import differing_keys, flatten, varying_within
from tfcli.experiments.progress import read_all
from tfcli.experiments.status import Status
from tfcli.experiments.store import ExperimentDir
from tfcli.sweeps.aggregate import Row, final_of
from tfcli.sweeps.status import SweepStatus
from trainer.kernel.scores import FINAL_FRACTION

FinalKind = Literal["final", "mean_last_100"]


@dataclass(frozen=True)
class ComparedRun:
    """One row: an experiment, or a sweep's combination (its seeds aggregated)."""

    name: str  # the experiment, or the combination's label
    values: dict[str, Any]  # the differing keys this run has (a key it lacks is absent)
    state: str  # an experiment's state; a combination's ``completed/runs``
    final_return: float | None
    final_kind: FinalKind | None  # how ``final_return`` was computed (None: no episode yet)
    timesteps: float | None  # a combination: the mean over its trials
    wall_seconds: float | None  # a combination: the mean over its trials
    cost_usd: float | None = None  # GKE, a cluster of its own: the cost so far
    ci_low: float | None = None  # a combination: the 95 % bootstrap CI of the IQM
    ci_high: float | None = None
    trials: list[str] = field(default_factory=list)  # a combination's trials
    best: bool = False  # a combination: the best IQM, as ``list -s`` marks it


@dataclass(frozen=True)
class Comparison:
    kind: Literal["experiments", "sweep"]
    keys: list[str]  # the flattened spec keys that differ between the rows, in spec order
    rows: list[ComparedRun]
    sweep: str | None = None
    same_within: list[str] = field(default_factory=list)  # a sweep: keys that vary among a combination's seeds

    @property
    def notes(self) -> list[str]:
        """What the figures mean, as the table's footer and ``--json``'s ``notes`` say."""
        if self.kind == "sweep":
            notes = [
                f"final: each seed's mean return over the last {FINAL_FRACTION:.0%} of its timesteps; IQM over seeds, "
                "95% stratified-bootstrap CI (as `list -s`)",
                "timesteps, wall s: mean per trial" + ("; * best" if any(row.best for row in self.rows) else ""),
            ]
            if self.same_within:
                notes.append(f"aggregated over the seeds: {', '.join(self.same_within)}")
            return notes
        notes = [f"final: mean return over the last {FINAL_FRACTION:.0%} of each run's timesteps (its progress.jsonl)"]
        if stale := [row.name for row in self.rows if row.final_kind == "mean_last_100"]:
            notes.append(
                f"~ results not here ({', '.join(stale)}): the mean return of the last 100 episodes, what GKE's "
                "status reads without downloading; `tfcli experiment download -e NAME` gives the final return"
            )
        if not self.keys:
            notes.append("the runs' specs are the same but for their names")
        return notes

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "sweep": self.sweep,
            "keys": self.keys,
            "rows": [asdict(row) for row in self.rows],
            "notes": self.notes,
        }


def experiment_row(experiment: ExperimentDir, status: Status, *, results_here: bool) -> ComparedRun:
    """An experiment's row from its status; ``results_here``: ``results/progress.jsonl`` is the run's own (a local
    run, or a GKE run downloaded since it last trained), so its final return can be computed."""
    final: float | None = None
    kind: FinalKind | None = None
    if results_here:
        final = final_of(read_all(experiment.results / "progress.jsonl"))
        kind = None if final is None else "final"
    elif status.mean_return is not None:
        final, kind = status.mean_return, "mean_last_100"
    return ComparedRun(
        name=experiment.name,
        values={},
        state=status.state,
        final_return=final,
        final_kind=kind,
        timesteps=status.timesteps,
        wall_seconds=status.wall_seconds,
        cost_usd=None if not status.cost else status.cost.get("usd"),
    )


def of_experiments(specs: list[dict[str, Any]], rows: list[ComparedRun]) -> Comparison:
    """Experiments compared: their rows with the values of the keys their resolved ``specs`` differ in."""
    keys = differing_keys(specs)
    flats = [flatten(spec) for spec in specs]
    filled = [_with_values(row, flat, keys) for row, flat in zip(rows, flats, strict=True)]
    return Comparison(kind="experiments", keys=keys, rows=filled)


def of_sweep(name: str, rows: list[Row], status: SweepStatus) -> Comparison:
    """A sweep's combinations compared: ``rows`` as ``list -s`` computes them, with the keys their trials' specs
    differ in (those that differ among one combination's seeds aggregated away) and the trials' timesteps and cost
    from the sweep's ``status``."""
    specs = {trial.name: trial.data for trial, _ in status.trials}
    by_trial = {trial.name: trial_status for trial, trial_status in status.trials}
    groups = [[specs[trial] for trial in row.trials] for row in rows]
    within = varying_within(groups)
    firsts = [{key: value for key, value in flatten(group[0]).items() if key not in within} for group in groups]
    keys = differing_keys(firsts)
    compared = []
    for row, flat in zip(rows, firsts, strict=True):
        members = [by_trial[trial] for trial in row.trials]
        costs = [s.cost["usd"] for s in members if s.cost and s.cost.get("usd") is not None]
        compared.append(
            _with_values(
                ComparedRun(
                    name=row.label,
                    values={},
                    state=f"{row.completed}/{row.runs}"
                    + (" pruned" if row.pruned and not row.completed else " partial" if row.partial else ""),
                    final_return=row.iqm,
                    final_kind=None if row.iqm is None else "final",
                    timesteps=float(np.mean([s.timesteps for s in members])),
                    wall_seconds=row.wall_seconds_mean,
                    cost_usd=float(sum(costs)) if costs else None,
                    ci_low=row.ci_low,
                    ci_high=row.ci_high,
                    trials=row.trials,
                    best=row.best,
                ),
                flat,
                keys,
            )
        )
    return Comparison(kind="sweep", keys=keys, rows=compared, sweep=name, same_within=sorted(within))


def _with_values(row: ComparedRun, flat: dict[str, Any], keys: list[str]) -> ComparedRun:
    values = {key: flat[key] for key in keys if key in flat}
    return replace(row, values=values)
