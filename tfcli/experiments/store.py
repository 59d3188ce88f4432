"""The experiments of a project on disk: ``experiments/<name>/`` with the resolved spec and the run's files.

Layout of one experiment folder:

- ``experiment.yaml`` — the fully resolved spec (what the trainer and the stack run);
- ``results/`` — the trainer's output (checkpoints, summaries, progress.jsonl, result.json, learning_curve.png);
- ``logs/`` — the trainer's and the environment workers' output of local runs;
- ``run.json`` — which backend ran it last and, locally, the supervising process (:class:`RunRecord`);
- ``.lock`` — held while a tfcli command changes the experiment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcli.experiments.record import RunRecord
from tfcli.experiments.spec_view import SpecView
from tfcli.locking import exclusive
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.files import atomic_write_text
from trainer.kernel.spec.documents import display_path, read_document
from trainer.kernel.spec.suggest import did_you_mean
from trainer.result_file import FILENAME as RESULT_FILE
from trainer.result_file import read_result

if TYPE_CHECKING:  # pydantic models: the supervisor reads an experiment's folder before any model is needed
    from tfcli.project import ProjectDir
    from trainer.kernel.spec.experiment import Experiment


def checked_name(name: str, what: str = "experiment") -> str:
    """A Kubernetes/DNS-safe name, or an ``InvalidInput`` saying how to fix it."""
    from trainer.kernel.spec.base import check_dns_name

    try:
        return check_dns_name(name)
    except ValueError as error:
        raise InvalidInput(f"{what} name: {error}") from None


def checked_flag(value: str, flag: str) -> str:
    """A DNS-safe name given with ``flag`` (``--cluster``), or an ``InvalidInput`` naming the flag."""
    from trainer.kernel.spec.base import check_dns_name

    try:
        return check_dns_name(value)
    except ValueError as error:
        raise InvalidInput(f"{flag}: {error}") from None


@dataclass(frozen=True)
class RunFolder:
    """A folder that local runs are recorded in (an experiment's, or a sweep's): ``run.json``, ``logs/``, ``.lock``."""

    root: Path
    kind = "experiment"  # as messages name it

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run_file(self) -> Path:
        return self.root / "run.json"

    def run_record(self) -> RunRecord:
        """What the last ``start`` recorded (an empty record when never started)."""
        return RunRecord.read(self.run_file)

    def write_run_record(self, record: RunRecord) -> None:
        atomic_write_text(self.run_file, record.dumps())

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with exclusive(self.root / ".lock", f"{self.kind} '{self.name}'"):
            yield


@dataclass(frozen=True)
class ExperimentDir(RunFolder):
    """One experiment's folder."""

    @property
    def spec_file(self) -> Path:
        return self.root / "experiment.yaml"

    @property
    def results(self) -> Path:
        return self.root / "results"

    def exists(self) -> bool:
        return self.spec_file.is_file()

    def spec_data(self) -> dict[str, Any]:
        """The stored resolved spec as plain data, unvalidated (for listings, which must stay fast)."""
        data = read_document(self.spec_file)
        return data if isinstance(data, dict) else {}

    def spec_view(self) -> SpecView:
        """The stored resolved spec's typed reads, unvalidated (fast: for listings and status)."""
        return SpecView(self.spec_data())

    def spec(self) -> Experiment:
        """The stored resolved spec, validated again (the file may have been edited by hand)."""
        from trainer.kernel.spec.library import ConfigLibrary
        from trainer.kernel.spec.loader import resolve_experiment

        data = read_document(self.spec_file)
        return resolve_experiment(data, shown=display_path(self.spec_file), base=self.root, library=ConfigLibrary(()))

    @property
    def result_file(self) -> Path:
        return self.results / RESULT_FILE

    def result(self) -> dict[str, Any]:
        """``results/result.json`` (empty until the trainer has written one)."""
        return read_result(self.results)


SWEEP_FILE = "sweep.yaml"


class ExperimentStore:
    """All experiments of one project."""

    def __init__(self, project: ProjectDir) -> None:
        self.project = project

    def dir(self, name: str) -> ExperimentDir:
        return ExperimentDir(self.project.experiment_dir(checked_name(name)))

    def names(self) -> list[str]:
        folder = self.project.experiments
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if (p / "experiment.yaml").is_file())

    def sweep_names(self) -> list[str]:
        """Folders holding a ``sweep.yaml``: the sweeps (kept here so that experiments can refuse their names)."""
        folder = self.project.experiments
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if (p / SWEEP_FILE).is_file())

    def sweep_owning(self, name: str) -> str | None:
        """The sweep whose trial ``name`` is, or would be (``<sweep>-<k>``): such names are that sweep's alone."""
        for sweep in self.sweep_names():
            if name.startswith(f"{sweep}-") and name[len(sweep) + 1 :].isdigit():
                return sweep
        return None

    def get(self, name: str) -> ExperimentDir:
        """An existing experiment; an unknown name is an ``InvalidInput`` listing the known ones."""
        experiment = self.dir(name)
        if not experiment.exists():
            names = self.names()
            raise InvalidInput(
                f"no experiment named '{name}'{did_you_mean(name, names)} in this project"
                f" (known: {', '.join(names) or 'none yet'})",
                hint=f"'{name}' is a sweep: name it with `-s {name}`"
                if name in self.sweep_names()
                else "create it with `tfcli experiment new -f SPEC -n NAME`, or start one with `-f SPEC`",
            )
        return experiment

    def write(self, spec: Experiment, *, replace: bool = False) -> ExperimentDir:
        """Store a resolved spec as ``experiments/<name>/experiment.yaml`` (atomically).

        An existing experiment with a different spec is kept unless ``replace``: silently changing what a
        half-trained experiment trains would make its results meaningless. ``hparams`` only says what the run
        reports to TensorBoard, so a spec that differs in nothing else is the same experiment (a sweep made before
        its trials listed their axes there continues).
        """
        from trainer.kernel.spec.loader import to_data, to_yaml

        def trained(data: dict[str, object]) -> dict[str, object]:
            return {key: value for key, value in data.items() if key != "hparams"}

        experiment = self.dir(spec.name)
        if experiment.exists() and not replace and trained(to_data(experiment.spec())) != trained(to_data(spec)):
            raise TfcliError(
                f"experiment '{spec.name}' already exists with a different spec ({display_path(experiment.spec_file)})",
                hint="pick another name with -n, or start over with --restart (deletes its results)",
            )
        atomic_write_text(experiment.spec_file, to_yaml(spec))
        return experiment
