"""What an experiment is doing, read from its processes and its results — never from a stale file."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.store import ExperimentDir

SUPERVISOR_MODULE = "tfcli.local.supervisor"


def process_alive(record: dict[str, Any], module: str, root: Path) -> bool:
    """Whether the process ``record`` names still runs ``python -m module ... root`` (pids get reused)."""
    pid = record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (macOS): trust the pid
    text = [part.decode(errors="replace") for part in cmdline]
    return module in text and str(root) in text


def local_process_alive(record: dict[str, Any], experiment: ExperimentDir) -> bool:
    """Whether the recorded supervisor still runs (and is ours: pids get reused)."""
    return process_alive(record, SUPERVISOR_MODULE, experiment.root)


@dataclass(frozen=True)
class Status:
    """One experiment's state as ``list`` and ``status`` show it."""

    name: str
    backend: str
    run_mode: str
    state: str  # new | running | paused | completed | failed | stopped | interrupted
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

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def budget_text(spec: dict[str, Any]) -> str:
    """``100,000 timesteps or 500 episodes``: the budgets of a resolved spec."""
    parts = []
    if spec.get("total_timesteps"):
        parts.append(f"{spec['total_timesteps']:,} timesteps")
    if spec.get("episodes"):
        parts.append(f"{spec['episodes']:,} episodes")
    return " or ".join(parts)


def status_from(
    name: str,
    spec: dict[str, Any],
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
    done = [timesteps / int(spec["total_timesteps"])] if spec.get("total_timesteps") else []
    if spec.get("episodes"):
        done.append(episodes / int(spec["episodes"]))
    mean = result.get("mean_return_last_100") if final else reader.mean_return
    return Status(
        name=name,
        backend=backend,
        run_mode=str(spec.get("run_mode", "single")),
        state=state,
        timesteps=timesteps,
        episodes=episodes,
        budget=budget_text(spec),
        progress=min(1.0, max(done)) if done else None,
        mean_return=None if mean is None else float(mean),
        wall_seconds=result.get("wall_seconds") if final else reader.wall_seconds,
        timesteps_per_second=result.get("timesteps_per_second") if final else reader.timesteps_per_second,
        pid=pid,
        detail=detail,
    )


def local_status(experiment: ExperimentDir) -> Status:
    """The status of an experiment run (or not yet run) on this machine."""
    spec = experiment.spec_data()  # the resolved spec tfcli wrote; listing must not pay for validating it
    record = experiment.run_record()
    result = experiment.result()
    reader = ProgressReader(experiment.results / "progress.jsonl")
    reader.read()
    alive = local_process_alive(record, experiment)
    if alive:
        state = "pausing" if record.get("pause_requested") else "running"
    elif record.get("stopped"):
        state = "stopped"
    elif result:
        state = str(result.get("status", "unknown"))
    elif record:
        state = "interrupted"  # the process is gone and wrote no result: killed, or the machine restarted
    else:
        state = "new"
    return status_from(
        experiment.name,
        spec,
        backend=str(record.get("backend", "local")),
        state=state,
        result=result,
        reader=reader,
        final=bool(result) and not alive,
        pid=record.get("pid") if alive else None,
        detail=str(result.get("error", "")) if state == "failed" else "",
    )
