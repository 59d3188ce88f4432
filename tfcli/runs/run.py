"""A run: an experiment or a sweep, the one thing every lifecycle action takes.

A sweep is an ordinary run whose members are its trials (each an experiment folder of its own); an experiment is a
run whose only member is itself. Backends act on members where the two differ only in number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tfcli.experiments.record import RunRecord
from tfcli.experiments.store import ExperimentDir, ExperimentStore
from tfcli.project import ProjectDir
from tfcli.sweeps.store import SweepDir, get_sweep
from trainer.kernel.errors import InvalidInput

if TYPE_CHECKING:  # the sweep file's models (pydantic): not for every `list`
    from trainer.kernel.spec.sweep import Trial

Kind = Literal["experiment", "sweep"]


@dataclass(frozen=True)
class Run:
    """An experiment (``folder`` an :class:`ExperimentDir`) or a sweep (a :class:`SweepDir`) of a project."""

    store: ExperimentStore
    folder: ExperimentDir | SweepDir

    @classmethod
    def named(cls, store: ExperimentStore, *, experiment: str | None, sweep: str | None) -> Run:
        """``-e NAME`` or ``-s SWEEP``: exactly one of them, an existing one."""
        if (experiment is None) == (sweep is None):
            raise InvalidInput("give exactly one of -e NAME (an experiment) or -s SWEEP (a sweep)")
        if sweep is not None:
            return cls(store, get_sweep(store, sweep))
        assert experiment is not None
        return cls(store, store.get(experiment))

    @property
    def project(self) -> ProjectDir:
        return self.store.project

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def kind(self) -> Kind:
        return "sweep" if isinstance(self.folder, SweepDir) else "experiment"

    @property
    def flag(self) -> str:
        """How commands name it: ``-e NAME`` or ``-s NAME``."""
        return f"-{self.kind[0]} {self.name}"

    @property
    def record(self) -> RunRecord:
        return self.folder.run_record()

    def experiment(self) -> ExperimentDir:
        """The experiment itself (a sweep has none: its trials are its experiments)."""
        assert isinstance(self.folder, ExperimentDir), f"{self.name} is a sweep"
        return self.folder

    def sweep(self) -> SweepDir:
        assert isinstance(self.folder, SweepDir), f"{self.name} is an experiment"
        return self.folder

    def trials(self) -> list[Trial]:
        """A sweep's trials (an experiment has none)."""
        return self.folder.trials() if isinstance(self.folder, SweepDir) else []

    def members(self) -> list[ExperimentDir]:
        """The experiment folders that train: the trials of a sweep, or the experiment itself."""
        if isinstance(self.folder, SweepDir):
            return [self.store.dir(trial.name) for trial in self.folder.trials()]
        return [self.folder]

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with self.folder.locked():
            yield
