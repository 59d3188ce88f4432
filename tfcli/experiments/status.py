"""An experiment's state as ``status`` and ``list`` show it, from its numbers wherever its backend read them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.spec_view import SpecView

# States in which a run has ended for good: nothing starts it again (a sweep's queue and Job count them as done). A
# pruned run is a trial that early stopping ended at a rung (trainer/hooks/early_stop.py).
ENDED_FOR_GOOD = ("completed", "pruned")


@dataclass(frozen=True)
class Status:
    """One experiment's state as ``list`` and ``status`` show it."""

    name: str
    backend: str
    run_mode: str
    state: str  # new | running | paused | waiting | completed | pruned | failed | stopped | interrupted
    timesteps: int
    episodes: int
    budget: str
    progress: float | None
    mean_return: float | None
    wall_seconds: float | None
    timesteps_per_second: float | None  # the trainer's: the whole run once ended, the last episodes while running
    pid: int | None
    detail: str
    cluster: dict[str, Any] | None = None  # GKE: the pods' state in words (tfcli/gke/pod_states.py), or an error
    cost: dict[str, Any] | None = None  # GKE, a cluster of its own: the cost so far (tfcli/gke/cost.py)
    starts: int = 0  # times the trainer started on the run (result.json's ``starts``; running: the last episode's)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def status_from(
    name: str,
    spec: SpecView,
    *,
    backend: str,
    state: str,
    result: dict[str, Any],
    reader: ProgressReader,
    final: bool,
    pid: int | None = None,
    detail: str = "",
) -> Status:
    """A status from a run's numbers: ``result.json`` once the run has ended (``final``), else ``progress.jsonl``."""
    timesteps = int(result.get("timesteps", reader.timesteps)) if final else reader.timesteps
    episodes = int(result.get("episodes", reader.episodes)) if final else reader.episodes
    done = [timesteps / spec.total_timesteps] if spec.total_timesteps else []
    if spec.episodes:
        done.append(episodes / spec.episodes)
    mean = result.get("mean_return_last_100") if final else reader.mean_return
    if state in ("pruned", "waiting") and not detail:
        detail = str(result.get("reason", ""))  # why early stopping ended it, or which rung it waits at
    return Status(
        name=name,
        backend=backend,
        run_mode=spec.run_mode,
        state=state,
        timesteps=timesteps,
        episodes=episodes,
        budget=spec.budget_text(),
        progress=min(1.0, max(done)) if done else None,
        mean_return=None if mean is None else float(mean),
        wall_seconds=result.get("wall_seconds") if final else reader.wall_seconds,
        timesteps_per_second=result.get("timesteps_per_second") if final else reader.timesteps_per_second,
        starts=_starts(result.get("starts") if final else reader.start, timesteps),
        pid=pid,
        detail=detail,
    )


def _starts(recorded: object, timesteps: int) -> int:
    from trainer.kernel.budget import starts_seen  # the readers' one rule (not at start-up, as reported_state's Budget)

    return starts_seen(recorded, float(timesteps))


def reported_state(spec: SpecView, result: dict[str, Any]) -> str:
    """The state ``result.json`` reports, but ``paused`` for a completed run whose budget was raised since
    (``resume --total-timesteps N``): it has the rest to train, from its final checkpoint. A result without counts
    (hand-made, or older) says nothing about the budget and is taken as it reads."""
    from trainer.kernel.budget import Budget

    state = str(result.get("status", "unknown"))
    budget = Budget(episodes=spec.episodes, timesteps=spec.total_timesteps)
    counted = "timesteps" in result or "episodes" in result
    if state == "completed" and counted and not budget.reached_by(result):
        return "paused"
    if state != "paused":
        return state
    from trainer.rung_wait import waiting_rung  # only for a paused run: it loads the rung judgement (numpy)

    if waiting_rung(result) is not None:
        return "waiting"  # at an undecided rung of an early-stopped sweep (trainer/rung_wait.py)
    return state
