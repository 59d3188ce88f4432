"""A sweep's state and its trials' statuses: what ``status -s`` shows and ``--json`` prints, from either backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tfcli.experiments.status import Status

if TYPE_CHECKING:  # the sweep file's models (pydantic): `list` reads statuses, not sweep files
    from trainer.kernel.spec.sweep import Trial


@dataclass(frozen=True)
class SweepStatus:
    """A sweep's state and its trials' statuses, for ``status -s`` and ``list -s``."""

    name: str
    state: str  # new | running | pausing | paused | completed | failed | stopped | interrupted | deploying | ...
    parallel: int | None
    counts: dict[str, int]
    trials: list[tuple[Trial, Status]]
    pid: int | None
    backend: str = "local"  # or gke: the sweep's stack
    detail: str = ""  # why it is in that state, when there is more to say (GKE: why its Job failed)

    @property
    def completed(self) -> int:
        return self.counts.get("completed", 0)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "backend": self.backend,
            "state": self.state,
            "detail": self.detail,
            "parallel": self.parallel,
            "counts": self.counts,
            "pid": self.pid,
            "trials": [
                {"trial": trial.name, "combination": trial.combination, "seed": trial.seed, **status.as_json()}
                for trial, status in self.trials
            ],
        }
