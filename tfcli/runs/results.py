"""What the lifecycle actions of a :class:`~tfcli.runs.backend.Backend` return: typed results, each able to say
itself in words, so the CLI only prints them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tfcli.experiments.status import Status
from tfcli.runs.run import Run
from tfcli.sweeps.status import SweepStatus
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.documents import display_path
from trainer.kernel.spec.outcomes import EXIT_PAUSED

RunStatus = Status | SweepStatus


@dataclass(frozen=True)
class StartOptions:
    """What ``start`` may be told beyond the run: start over, a shared GKE cluster, a sweep's trials at a time."""

    restart: bool = False
    shared_cluster: str | None = None
    parallel: int | None = None


@dataclass(frozen=True)
class Started:
    """What ``start`` (or ``resume``) did, as every backend says it: nothing (``nothing_to_run``: it had completed)
    or a run launched. What the backend launched is ``launched``, in the backend's own type, read back only by that
    backend's ``follow`` (local: the supervisor's or the queue's process; GKE: the stack's ``Deployment``)."""

    run: Run
    backend: str
    nothing_to_run: bool = False
    parallel: int | None = None  # a sweep: trials at a time
    launched: object = None
    announce: list[str] = field(default_factory=list)  # what was started, as the backend says it
    detached_hint: str = ""  # how to watch it when the command does not wait
    results_here: bool = True  # its result.json is in experiments/NAME/results/ (locally: written in place)
    where: str = ""  # shown beside the run's name while following ("on GKE")


@dataclass(frozen=True)
class Paused:
    """What ``pause`` reached: ``paused`` (checkpointed), ``pausing`` while GKE still writes the checkpoints, or
    ``ended`` when the run stopped before it could save anything (paused before training began)."""

    run: Run
    state: str
    timesteps: int = 0  # an experiment's, at its checkpoint
    completed: int = 0  # a sweep's completed trials
    trials: int = 0  # a sweep's trials

    def summary(self) -> str:
        name, sweep = self.run.name, self.run.kind == "sweep"
        if self.state == "pausing":
            what = (
                "its Job is suspended and its trials are writing their checkpoints"
                if sweep
                else ("its Jobs are suspended and the trainer is writing its checkpoint")
            )
            return (
                f"Pausing {'sweep ' if sweep else ''}{name}: {what}; `tfcli experiment status {self.run.flag}` shows "
                "when it is paused."
            )
        if sweep:
            return f"Paused sweep {name}: {self.completed} of {self.trials} trials completed"
        if self.state == "ended":
            return (
                f"Paused {name} before it saved anything (it had not begun training); "
                f"`tfcli experiment resume {self.run.flag}` starts it from the beginning."
            )
        return f"Paused {name} at {self.timesteps:,} timesteps (checkpoint saved)."


@dataclass(frozen=True)
class Stopped:
    """What ``stop`` left: where the results are (one folder per experiment that has them) and, for a sweep, how
    many trials completed. ``downloaded`` is False where results that lived elsewhere were not copied here."""

    run: Run
    results: list[Path]
    downloaded: bool = True
    deployed: bool = True  # False: nothing of it ran on the backend, so it has no results anywhere
    completed: int = 0
    trials: int = 0
    copies_results: bool = False  # the backend copied results here (GKE); locally they are written in place

    def summary(self) -> str:
        name = self.run.name
        if self.run.kind == "sweep":
            copied = f"; the results of {len(self.results)} are in experiments/{name}-K/results/"
            done = f"Stopped sweep {name}: {self.completed} of {self.trials} trials completed"
            return done + (copied if self.copies_results else "")
        if self.results:
            return f"Stopped {name}; results are in {display_path(self.results[0])}/"
        if not self.downloaded:
            return f"Stopped {name}; its results were not downloaded (--no-download) and are gone with its bucket"
        return f"Stopped {name}; nothing of it was deployed, and it has no results"


@dataclass(frozen=True)
class Ended:
    """How a followed run (``start --wait``) ended: its state and the CLI's exit code, plus what to say about it."""

    run: Run
    state: str
    exit_code: int
    process_code: int | None = None  # local: the supervisor's exit code
    seconds: float = 0.0
    interrupted: bool = False  # Ctrl-C: locally the run paused; on GKE it goes on unwatched
    report: bool = True  # False: it did not end (Ctrl-C), so there is no result to show
    notes: list[str] = field(default_factory=list)  # shown after the result
    warnings: list[str] = field(default_factory=list)  # likewise, on stderr


@dataclass(frozen=True)
class LogRequest:
    follow: bool = False
    worker: int | None = None  # an env-worker's log (distributed)
    tail: int | None = None  # start with the last N lines

    def __post_init__(self) -> None:
        if self.tail is not None and self.tail < 0:
            raise InvalidInput(f"--tail: expected a number of lines >= 0, got {self.tail}")

    def tailed(self, text: str) -> str:
        """``text`` cut to its last ``tail`` lines (all of it without ``--tail``), for a log read whole."""
        if self.tail is None:
            return text
        lines = text.splitlines(keepends=True)
        return "".join(lines[len(lines) - self.tail :] if self.tail else [])


def download_summary(run: Run, paths: list[Path]) -> list[str]:
    """Where ``download`` left the results: one line for an experiment, a line per trial for a sweep."""
    if run.kind == "experiment":
        return [f"Results of {run.name} are in {display_path(path)}" for path in paths]
    return [f"{path.parent.name}: {display_path(path)}" for path in paths]


def exit_code(status: str | None, process_code: int, *, interrupted: bool = False) -> int:
    """The CLI's exit code for a followed experiment: 0 completed (or paused by the user's own ``pause``), 130
    paused by Ctrl-C, 2 an invalid spec, 1 any other failure (docs/design.md §7.1)."""
    if process_code == 0 and status == "completed":
        return 0
    if process_code == EXIT_PAUSED or status == "paused":
        return 130 if interrupted else 0
    return 2 if process_code == 2 else 1
