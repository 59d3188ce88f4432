"""A sweep on disk: ``experiments/<sweep>/`` with ``sweep.yaml`` (the resolved base spec and the axes), the local
queue's ``run.json`` and ``logs/queue.log``; each trial is an ordinary experiment ``experiments/<sweep>-<k>/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from tfcli.errors import InvalidInput, TfcliError
from tfcli.experiments.store import ExperimentDir, ExperimentStore, RunFolder, checked_name
from tfcli.spec.documents import display_path, read_document
from tfcli.spec.sweep import SweepFile, Trial, expand, read_sweep_file

SWEEP_FILE = "sweep.yaml"


@dataclass(frozen=True)
class SweepDir(RunFolder):
    """One sweep's folder (its ``run.json`` records the local queue process)."""

    kind = "sweep"

    @property
    def sweep_file(self) -> Path:
        return self.root / SWEEP_FILE

    def exists(self) -> bool:
        return self.sweep_file.is_file()

    def definition(self) -> SweepFile:
        """The stored sweep (its ``base`` the resolved spec as a mapping)."""
        return read_sweep_file(read_document(self.sweep_file), display_path(self.sweep_file))

    def trials(self) -> list[Trial]:
        sweep = self.definition()
        assert isinstance(sweep.base, dict)
        return expand(sweep, sweep.base, display_path(self.sweep_file))

    def target_return(self) -> float | None:
        base = self.definition().base
        value = base.get("target_return") if isinstance(base, dict) else None
        return None if value is None else float(value)


def sweep_dir(store: ExperimentStore, name: str) -> SweepDir:
    return SweepDir(store.project.experiment_dir(checked_name(name, "sweep")))


def sweep_names(store: ExperimentStore) -> list[str]:
    folder = store.project.experiments
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / SWEEP_FILE).is_file())


def get_sweep(store: ExperimentStore, name: str) -> SweepDir:
    """An existing sweep; an unknown name is an ``InvalidInput`` listing the known ones."""
    sweep = sweep_dir(store, name)
    if not sweep.exists():
        known = ", ".join(sweep_names(store)) or "none yet"
        raise InvalidInput(
            f"no sweep named '{name}' in this project (known: {known})",
            hint="create one with `tfcli experiment sweep -f SPEC -n NAME --set KEY=V1,V2 --seeds K`",
        )
    return sweep


def trial_dirs(store: ExperimentStore, sweep: SweepDir) -> list[tuple[Trial, ExperimentDir]]:
    return [(trial, store.dir(trial.name)) for trial in sweep.trials()]


def sweep_yaml(sweep: SweepFile) -> str:
    return yaml.safe_dump(sweep.model_dump(mode="json"), sort_keys=False, default_flow_style=False)


def refuse_clash(store: ExperimentStore, sweep: SweepFile) -> None:
    """A sweep's folder is not an experiment's, and its trials' names are not taken by other experiments."""
    if store.dir(sweep.name).exists():
        raise TfcliError(f"'{sweep.name}' is already an experiment's name; pick another sweep name with -n")
    if (store.project.experiments / sweep.name / SWEEP_FILE).is_file():
        return  # the same sweep again: its trials are its own
    taken = [
        name for name in store.names() if name.startswith(f"{sweep.name}-") and name[len(sweep.name) + 1 :].isdigit()
    ]
    if taken:
        raise TfcliError(
            f"experiments named like this sweep's trials already exist: {', '.join(taken[:5])}",
            hint="pick another sweep name with -n",
        )
