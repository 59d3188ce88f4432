"""A sweep on disk: ``experiments/<sweep>/`` with ``sweep.yaml`` (the resolved base spec and the axes), the local
queue's ``run.json`` and ``logs/queue.log``; each trial is an ordinary experiment ``experiments/<sweep>-<k>/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from tfcli.experiments.spec_view import SpecView
from tfcli.experiments.store import SWEEP_FILE, ExperimentDir, ExperimentStore, RunFolder, checked_name
from tfcli.sweeps.labels import refuse_relabelled
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.documents import display_path, read_document
from trainer.kernel.spec.suggest import did_you_mean

if TYPE_CHECKING:  # the sweep file's models (pydantic) load where a sweep file is read, not for every `list`
    from trainer.kernel.spec.sweep import SweepFile, Trial


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
        from trainer.kernel.spec.sweep import read_sweep_file

        return read_sweep_file(read_document(self.sweep_file), display_path(self.sweep_file))

    def trials(self) -> list[Trial]:
        """The trials ``sweep.yaml`` expands to; refused when it no longer says what they were made with
        (:mod:`tfcli.sweeps.labels`: a hand-edited file would relabel their results)."""
        from trainer.kernel.spec.sweep import expand

        sweep = self.definition()
        assert isinstance(sweep.base, dict)
        shown = display_path(self.sweep_file)
        trials = expand(sweep, sweep.base, shown)
        refuse_relabelled(self.root.parent, trials, shown)
        return trials

    def target_return(self) -> float | None:
        base = self.definition().base
        return SpecView(base).target_return if isinstance(base, dict) else None


def sweep_dir(store: ExperimentStore, name: str) -> SweepDir:
    return SweepDir(store.project.experiment_dir(checked_name(name, "sweep")))


def sweep_names(store: ExperimentStore) -> list[str]:
    return store.sweep_names()


def get_sweep(store: ExperimentStore, name: str) -> SweepDir:
    """An existing sweep; an unknown name is an ``InvalidInput`` listing the known ones."""
    sweep = sweep_dir(store, name)
    if not sweep.exists():
        names = sweep_names(store)
        raise InvalidInput(
            f"no sweep named '{name}'{did_you_mean(name, names)} in this project"
            f" (known: {', '.join(names) or 'none yet'})",
            hint=f"'{name}' is an experiment: name it with `-e {name}`"
            if name in store.names()
            else "create one with `tfcli experiment sweep -f SPEC -n NAME --set KEY=V1,V2 --seeds K`",
        )
    return sweep


def trial_dirs(store: ExperimentStore, sweep: SweepDir) -> list[tuple[Trial, ExperimentDir]]:
    return [(trial, store.dir(trial.name)) for trial in sweep.trials()]


def sweep_yaml(sweep: SweepFile) -> str:
    return yaml.safe_dump(sweep.model_dump(mode="json"), sort_keys=False, default_flow_style=False)


def refuse_clash(store: ExperimentStore, sweep: SweepFile) -> None:
    """Names are unique across experiments, sweeps and trials, both ways: a sweep's folder is no experiment's, its
    trials' names are no other sweep's folder and no experiment's but its own trials', and it is no other sweep's
    trial (two queues would otherwise share folders and overwrite each other's ``run.json``)."""
    from trainer.kernel.spec.sweep import grid_size, trial_name

    owner = store.sweep_owning(sweep.name)
    if owner:
        raise InvalidInput(f"-n/name: '{sweep.name}' is a name of sweep '{owner}''s trials; pick another sweep name")
    if store.dir(sweep.name).exists():
        raise InvalidInput(f"-n/name: '{sweep.name}' is already an experiment's name; pick another sweep name")
    existing = sweep_dir(store, sweep.name)
    # Its own trials by folder (``<sweep>-<k>``), not by expanding its sweep.yaml, which may be hand-edited.
    own = {name for name in store.names() if store.sweep_owning(name) == sweep.name} if existing.exists() else set()
    count = (sweep.random or grid_size(sweep.axes)) * sweep.seeds
    names = [trial_name(sweep.name, index) for index in range(count)]
    sweeps = set(store.sweep_names())
    clashing = [name for name in names if name in sweeps]
    if clashing:
        raise InvalidInput(
            f"-n/name: sweep '{sweep.name}' would name its trials like the sweep(s) {', '.join(clashing[:5])}; "
            "pick another sweep name"
        )
    experiments = set(store.names())
    taken = [name for name in names if name in experiments and name not in own]
    if taken:
        raise InvalidInput(
            f"-n/name: experiments named like sweep '{sweep.name}''s trials already exist: {', '.join(taken[:5])}; "
            "pick another sweep name"
        )
