"""The Backend contract: one lifecycle — start, status, pause, status, logs, resume, status, stop, download — driven
through :class:`tfcli.runs.backend.Backend` for every backend, with the same assertions, each backend made by name
from the registry (:mod:`tfcli.runs.registry`).

- ``local`` is real: the supervisor and a TensorForce run on this machine, paused by SIGTERM into a checkpoint.
- ``gke``: the stack is played by the fake ``pulumi`` (which writes the trainer's paused ``result.json`` into the
  bucket when an ``up`` suspends the Job) and the bucket by gcp-storage-emulator over real HTTP. Its logs come from
  the pods through the Kubernetes API, which this lifecycle does not stand in (tests/gke/test_live_progress.py and
  the sweep journeys read them from the fake Kubernetes API): the GKE case covers everything but ``logs``.
- ``elsewhere`` (tests/backends/elsewhere.py) is a backend tfcli does not know, registered by this test alone: a
  real trainer subprocess in another working directory.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from elsewhere import registered
from gke_testkit import FakePulumi, make_gke_project

from tfcli.backends import Backends
from tfcli.experiments.create import create_experiment
from tfcli.experiments.store import ExperimentStore
from tfcli.project import open_project
from tfcli.runs.backend import Backend
from tfcli.runs.results import LogRequest, StartOptions
from tfcli.runs.run import Run

NAME = "contract"
BUCKET = "tfcli-contract-96f4ee46"  # by heart: a renamed bucket fails tests
BUDGET = 50_000  # far more than the test lets it train: it is paused and stopped on the way
LOGS_OFFLINE = {"local", "elsewhere"}  # GKE's logs are its pods', read through the Kubernetes API


def _wait_for(predicate: Any, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


Lifecycle = tuple[Backend, Run, Callable[[], None]]


def _episodes(count: int, length: int = 50) -> bytes:
    lines = [{"worker": 0, "episode": i, "timesteps": i * length, "return": float(i)} for i in range(1, count + 1)]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@pytest.fixture(params=["local", "gke", "elsewhere"])
def lifecycle(
    request: pytest.FixtureRequest, project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: Any
) -> Iterator[Lifecycle]:
    """A fresh experiment, the backend under test, and how its run gets some training done: locally (and elsewhere)
    the trainer's first finished episodes; on GKE the trainer's progress.jsonl in the bucket (its pause answered by
    the fake)."""
    train: Callable[[], None] = lambda: None  # noqa: E731
    if request.param == "gke":
        fake: FakePulumi = request.getfixturevalue("fake_pulumi")
        gcs = request.getfixturevalue("gcs")
        import tfcli.gke.waiting

        monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
        monkeypatch.setattr(tfcli.gke.waiting, "PAUSE_TIMEOUT", 5.0)
        make_gke_project(project)
        gcs.create_bucket(BUCKET)
        fake.on_suspend(NAME, {"result.json": json.dumps({"status": "paused", "timesteps": 300, "episodes": 6})})
        bucket = gcs.bucket(BUCKET)
        train = lambda: bucket.blob(f"{NAME}/progress.jsonl").upload_from_string(_episodes(6))  # noqa: E731
    store = ExperimentStore(open_project())
    overrides = {"name": NAME, "total_timesteps": BUDGET, "saver_frequency": "200t", "seed": 1}
    create_experiment(store, "cartpole-ppo", overrides)
    with registered(tmp_path_factory.mktemp("elsewhere")):
        backend = Backends().named(request.param)
        assert backend.name == request.param
        run = Run(store, store.get(NAME))
        if request.param != "gke":
            train = lambda: _wait_for(lambda: backend.status(run).timesteps > 0, "the first episodes")  # noqa: E731
        yield backend, run, train


@pytest.mark.slow  # a trainer process and a fake-pulumi journey (README "Development")
def test_one_lifecycle_through_the_backend_interface(lifecycle: Lifecycle) -> None:
    backend, run, train = lifecycle
    started = backend.start(run, StartOptions())
    assert started.backend == backend.name and not started.nothing_to_run
    assert run.record.backend == backend.name
    assert backend.status(run).state == "running"
    train()

    paused = backend.pause(run)
    assert paused.state == "paused" and paused.timesteps > 0
    status = backend.status(run)
    assert status.state == "paused" and 0 < status.timesteps < BUDGET and status.backend == backend.name
    if backend.name in LOGS_OFFLINE:
        written: list[str] = []
        backend.logs(run, LogRequest(), written.append)
        assert "trainer.run" in "".join(written)  # the trainer's own log lines
        tailed: list[str] = []
        backend.logs(run, LogRequest(tail=2), tailed.append)
        assert len("".join(tailed).splitlines()) <= 2

    resumed = backend.resume(run)
    assert resumed.backend == backend.name and not resumed.nothing_to_run
    assert backend.status(run).state == "running"

    stopped = backend.stop(run)
    assert stopped.results == [run.experiment().results]
    assert backend.status(run).state == "stopped"
    assert run.record.stopped and run.record.backend == backend.name

    (results,) = backend.download(run)
    assert results == run.experiment().results
    result = json.loads((results / "result.json").read_text())
    assert result["status"] == "paused" and 0 < result["timesteps"] < BUDGET


def test_a_run_that_never_started_cannot_pause_on_any_backend(lifecycle: Lifecycle) -> None:
    from trainer.kernel.errors import TfcliError

    backend, run, _ = lifecycle
    with pytest.raises(TfcliError, match=r"not (running|deployed)"):
        backend.pause(run)
    assert not run.record.started
