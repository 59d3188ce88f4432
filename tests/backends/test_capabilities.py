"""Shared rules ask a backend's declared capabilities (:class:`tfcli.runs.registry.Registration`), never its name:
the test backend ``elsewhere`` (tests/backends/elsewhere.py, registered here alone, declaring nothing) is refused a
shared cluster in its own name, and the results it leaves on this machine are refused by GKE as a local run's are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import invoke
from elsewhere import NAME, registered
from gke_testkit import FakePulumi, make_gke_project

from tfcli.experiments.record import RunRecord
from tfcli.runs import registry


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


def test_the_registered_backends_declare_what_shared_rules_ask(elsewhere: Path) -> None:
    assert registry.on_shared_clusters() == ["gke"]
    assert (registry.flag("local"), registry.flag("gke"), registry.flag(NAME)) == (
        "--local",
        "--backend gke",
        f"--backend {NAME}",
    )
    assert (registry.keeps_runs("gke"), registry.keeps_runs("local"), registry.keeps_runs(NAME)) == (True, False, False)
    assert registry.keeps_runs("slurm") and not registry.keeps_runs(None)  # unknown: taken to keep; none: nothing


def test_results_here_are_a_runs_own_unless_a_backend_still_keeps_it(elsewhere: Path) -> None:
    assert registry.results_here(RunRecord(backend=NAME)) and registry.results_here(RunRecord(backend="local"))
    assert not registry.results_here(RunRecord(backend="gke"))  # a copy of what the bucket holds
    assert registry.results_here(RunRecord(backend="gke", stopped=True))  # downloaded by its stop, bucket gone
    assert not registry.results_here(RunRecord())  # never started


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
