"""A third backend, defined and registered by the tests alone: ``elsewhere`` runs the trainer as a subprocess in
another working directory (its own copy of the resolved spec, its results there), as a remote machine would, and
copies the results here on ``download`` and ``stop``. It proves the seam is open: nothing in tfcli names it, yet
every lifecycle command works on it once :func:`registered` has added it to :mod:`tfcli.runs.registry`.

It keeps its own state in ``run.json`` under ``"elsewhere"`` (:class:`ElsewhereHandle`). The trainer's contract is
``python -m trainer run --spec SPEC --output DIR`` (trainer/__main__.py): SIGTERM checkpoints and exits 143, a run
started again on the same output resumes from its newest checkpoint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from tfcli.experiments.progress import ProgressReader
from tfcli.experiments.record import Handle, RunRecord
from tfcli.experiments.status import reported_state, status_from
from tfcli.runs import registry
from tfcli.runs.backend import Watcher
from tfcli.runs.results import Ended, LogRequest, Paused, RunStatus, Started, StartOptions, Stopped, exit_code
from tfcli.runs.resuming import ResumePlan, check_experiment_resumable
from tfcli.runs.run import Run
from trainer.kernel.errors import TfcliError

NAME = "elsewhere"
PAUSE_TIMEOUT = 120.0


@dataclass(frozen=True)
class ElsewhereHandle(Handle):
    """Where the run trains and the trainer's pid."""

    KEY: ClassVar[str] = NAME
    workdir: str | None = None
    pid: int | None = None
    pause_requested: bool = False


@dataclass(frozen=True)
class ElsewherePlan:
    """What ``start --backend elsewhere`` would run."""

    name: str
    workdir: str
    command: str


def _alive(pid: int | None) -> bool:
    """A live process (a zombie, exited and not yet reaped, is not)."""
    try:
        return pid is not None and Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class ElsewhereBackend:
    """Experiments only: a sweep is refused (a backend need not run everything)."""

    name = NAME
    waits_by_default = False

    def __init__(self, root: Path) -> None:
        self.root = root

    def _handle(self, run: Run) -> ElsewhereHandle:
        return run.record.handle(ElsewhereHandle)

    def _workdir(self, run: Run) -> Path:
        return self.root / run.name

    def _experiment_only(self, run: Run) -> None:
        if run.kind == "sweep":
            raise TfcliError(f"backend '{NAME}' runs experiments, not sweeps")

    def _launch(self, run: Run, *, restart: bool) -> subprocess.Popen[bytes]:
        workdir = self._workdir(run)
        if restart:
            shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True, exist_ok=True)
        shutil.copy(run.experiment().spec_file, workdir / "experiment.yaml")
        command = [sys.executable, "-m", "trainer", "run", "--spec", "experiment.yaml", "--output", "results"]
        with open(workdir / "trainer.log", "ab") as log:
            process = subprocess.Popen(
                command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        record = RunRecord(backend=NAME, started_at=datetime.now(UTC).isoformat(timespec="seconds"))
        run.folder.write_run_record(record.with_handle(ElsewhereHandle(str(workdir), process.pid)))
        return process

    def start(self, run: Run, options: StartOptions) -> Started:
        self._experiment_only(run)
        with run.locked():
            if _alive(self._handle(run).pid):
                raise TfcliError(f"experiment '{run.name}' is already running {NAME}")
            process = self._launch(run, restart=options.restart)
        hint = f"Started {run.name} {NAME} (pid {process.pid}); `tfcli experiment status -e {run.name}` watches it."
        return Started(run, NAME, launched=process, detached_hint=hint, results_here=False, where=NAME)

    def check_resumable(self, run: Run, plan: ResumePlan | None = None) -> None:
        state = plan.state if plan is not None and plan.state is not None else self.status(run).state
        check_experiment_resumable(run, state, ("paused", "interrupted", "failed"), plan)

    def resume(self, run: Run, plan: ResumePlan | None = None) -> Started:
        return self.start(run, StartOptions())

    def pause(self, run: Run) -> Paused:
        self._experiment_only(run)
        handle = self._handle(run)
        if not _alive(handle.pid):
            raise TfcliError(f"experiment '{run.name}' is not running")
        assert handle.pid is not None
        run.folder.write_run_record(run.record.with_handle(dataclasses.replace(handle, pause_requested=True)))
        os.kill(handle.pid, signal.SIGTERM)
        deadline = time.monotonic() + PAUSE_TIMEOUT
        while _alive(handle.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        return Paused(run, "paused", timesteps=int(self._result(run).get("timesteps", 0)))

    def _result(self, run: Run) -> dict[str, Any]:
        try:
            found = json.loads((self._workdir(run) / "results" / "result.json").read_text())
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def stop(self, run: Run, *, download: bool = True) -> Stopped:
        self._experiment_only(run)
        if _alive(self._handle(run).pid):
            self.pause(run)
        results = self.download(run) if download else []
        stopped_at = datetime.now(UTC).isoformat(timespec="seconds")
        run.folder.write_run_record(run.record.but(stopped=True, stopped_at=stopped_at))
        return Stopped(run, results, download, copies_results=True)

    def status(self, run: Run) -> RunStatus:
        self._experiment_only(run)
        handle, record, result = self._handle(run), run.record, self._result(run)
        spec = run.experiment().spec_view()
        reader = ProgressReader(self._workdir(run) / "results" / "progress.jsonl")
        reader.read()
        alive = _alive(handle.pid)
        if alive:
            state = "pausing" if handle.pause_requested else "running"
        elif record.stopped:
            state = "stopped"
        else:
            state = reported_state(spec, result) if result else ("interrupted" if record.started else "new")
        final = bool(result) and not alive
        pid = handle.pid if alive else None
        return status_from(
            run.name, spec, backend=NAME, state=state, result=result, reader=reader, final=final, pid=pid
        )

    def download(self, run: Run) -> list[Path]:
        self._experiment_only(run)
        remote, here = self._workdir(run) / "results", run.experiment().results
        if not remote.is_dir():
            if here.is_dir() and run.record.stopped:
                return [here]
            raise TfcliError(f"experiment '{run.name}' has no results yet", hint="start it first")
        shutil.copytree(remote, here, dirs_exist_ok=True)
        return [here]

    def logs(self, run: Run, request: LogRequest, write: Callable[[str], None]) -> None:
        log = self._workdir(run) / "trainer.log"
        if not log.is_file():
            raise TfcliError(f"experiment '{run.name}' has no log {NAME} yet")
        write(request.tailed(log.read_text(errors="replace")))

    def follow(self, started: Started, watcher: Watcher) -> Ended:
        process = started.launched
        assert isinstance(process, subprocess.Popen)
        code = process.wait()
        status = self._result(started.run).get("status")
        return Ended(started.run, str(status or "ended"), exit_code(status, code), code)

    def plan(self, run: Run, shared_cluster: str | None = None) -> ElsewherePlan:
        return ElsewherePlan(run.name, str(self._workdir(run)), "python -m trainer run --spec experiment.yaml")

    def trial_numbers(self, run: Run, *, downloaded: bool = False) -> list[Any]:
        raise TfcliError(f"backend '{NAME}' runs no sweeps")


@contextlib.contextmanager
def registered(root: Path) -> Iterator[None]:
    """``elsewhere`` in the registry while the block runs, its runs under ``root``."""
    registry.register(registry.Registration(NAME, lambda caller: ElsewhereBackend(root)))
    try:
        yield
    finally:
        registry.unregister(NAME)
