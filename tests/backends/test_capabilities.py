"""Shared rules ask a backend's declared capabilities (:class:`tfcli.runs.registry.Registration`), never its name:
the test backend ``elsewhere`` (tests/backends/elsewhere.py, registered here alone, declaring nothing) is refused a
shared cluster in its own name, and the results it leaves on this machine are refused by GKE as a local run's are.
The rules themselves: tests/runs/test_registry_rules.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import invoke
from elsewhere import NAME, registered
from gke_testkit import FakePulumi, make_gke_project


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("elsewhere")
    with registered(root):
        yield root


def _new(name: str = "cp") -> None:
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", name)
    assert code == 0, stderr


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_cluster_for_a_backend_without_shared_clusters_names_that_backend(
    project: Path, elsewhere: Path, fake_pulumi: FakePulumi
) -> None:
    make_gke_project(project)
    _new()
    said = f"--cluster: backend '{NAME}' does not run on shared clusters"
    code, _, stderr = invoke("experiment", "start", "-e", "cp", "--backend", NAME, "-c", "shared")
    assert code == 2 and said in _flat(stderr) and "Traceback" not in stderr
    code, _, stderr = invoke("experiment", "plan", "-e", "cp", "--backend", NAME, "-c", "shared")
    assert code == 2 and said in _flat(stderr)  # plan refuses it as start does
    code, _, stderr = invoke("experiment", "start", "-e", "cp", "--local", "-c", "shared")
    assert code == 2 and "backend 'local' does not run on shared clusters" in _flat(stderr)
    assert not (project / "experiments" / "cp" / "run.json").exists() and fake_pulumi.commands() == []


@pytest.mark.parametrize("stopped", [False, True])
def test_gke_refuses_results_another_backend_left_here(
    project: Path, elsewhere: Path, fake_pulumi: FakePulumi, stopped: bool
) -> None:
    make_gke_project(project)
    _new()
    folder = project / "experiments" / "cp"
    (folder / "results").mkdir()
    (folder / "results" / "result.json").write_text('{"status": "paused", "timesteps": 300}')
    (folder / "run.json").write_text(json.dumps({"backend": NAME, "stopped": stopped}))
    code, _, stderr = invoke("experiment", "start", "-e", "cp", "--backend", "gke")
    assert code == 1 and "results of a run on this machine, which GKE cannot continue" in _flat(stderr)
    assert f"continue it where it ran with --backend {NAME}" in _flat(stderr)
    assert fake_pulumi.commands() == []


def test_reap_reaches_only_runs_a_registered_backend_keeps(project: Path, elsewhere: Path) -> None:
    """``elsewhere`` keeps nothing (its runs are its processes'); an unregistered backend cannot be asked from here:
    neither is a run for ``reap`` to stop, and neither makes it fail."""
    from datetime import UTC, datetime

    from tfcli.backends import Backends
    from tfcli.experiments.store import ExperimentStore
    from tfcli.project import open_project

    for name, backend in (("cp", NAME), ("sl", "slurm")):
        _new(name)
        (project / "experiments" / name / "run.json").write_text(json.dumps({"backend": backend}))
    assert Backends().reap(ExperimentStore(open_project()), now=datetime.now(UTC)) == []
