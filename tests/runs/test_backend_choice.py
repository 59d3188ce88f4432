"""Which backend a run trains on: ``--backend NAME`` (``--local`` its short form), else ``backend:`` in tfcli.yaml,
else GKE when the project names a GCP project, else this machine; unknown names are exit 2 naming where they were
read and listing the registered backends (tfcli/runs/registry.py, tfcli/backends.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_kit import invoke

from tfcli.runs import registry
from trainer.kernel.errors import InvalidInput

GCP = "gcp_project: my-lab-123456\n"


def _project(project: Path, settings: str) -> None:
    (project / "tfcli.yaml").write_text("name: test\n" + settings)
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp1")
    assert code == 0, stderr


@pytest.mark.parametrize(
    ("settings", "backend"),
    [("", "local"), (GCP, "gke"), ("backend: local\n" + GCP, "local"), ("backend: gke\n", "gke")],
)
def test_a_run_that_never_started_belongs_to_the_projects_default(project: Path, settings: str, backend: str) -> None:
    _project(project, settings)
    code, stdout, stderr = invoke("experiment", "status", "-e", "cp1", "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["backend"] == backend


def test_an_unknown_backend_flag_is_exit_2_with_the_registered_names_before_anything_is_written(project: Path) -> None:
    code, _, stderr = invoke("experiment", "start", "-f", "cartpole-ppo", "--backend", "lcoal")
    assert code == 2 and "Traceback" not in stderr
    message = " ".join(stderr.split())
    assert "--backend: unknown backend 'lcoal' (did you mean 'local'?)" in message
    assert "the registered backends are gke, local" in message
    assert not (project / "experiments" / "cartpole-ppo").exists()


def test_an_unknown_backend_in_tfcli_yaml_names_the_file_and_field(project: Path) -> None:
    _project(project, "backend: slurm\n")
    code, _, stderr = invoke("experiment", "start", "-e", "cp1")
    assert code == 2 and "Traceback" not in stderr
    assert "tfcli.yaml: backend: unknown backend 'slurm'" in " ".join(stderr.split())
    assert not (project / "experiments" / "cp1" / "run.json").exists()


def test_an_unknown_backend_in_run_json_names_the_file(project: Path) -> None:
    _project(project, "")
    (project / "experiments" / "cp1" / "run.json").write_text('{"backend": "slurm", "slurm": {"job": 4}}')
    code, _, stderr = invoke("experiment", "pause", "-e", "cp1")
    assert code == 2 and "Traceback" not in stderr
    assert "run.json: backend: unknown backend 'slurm'" in " ".join(stderr.split())


def test_local_is_backend_local_and_contradicts_another_backend(project: Path) -> None:
    _project(project, GCP)
    code, _, stderr = invoke("experiment", "start", "-e", "cp1", "--local", "--backend", "gke")
    assert code == 2 and "--local and --backend gke contradict each other" in " ".join(stderr.split())
    for flags in (["--local"], ["--backend", "local"]):
        code, _, stderr = invoke("experiment", "start", "-e", "cp1", *flags, "-c", "shared")
        assert code == 2 and "no meaning with --local" in " ".join(stderr.split())


def test_plan_with_backend_local_is_plan_local(project: Path) -> None:
    _project(project, "")
    short = invoke("experiment", "plan", "-e", "cp1", "--local", "--json")
    long = invoke("experiment", "plan", "-e", "cp1", "--backend", "local", "--json")
    assert short[0] == long[0] == 0 and short[1] == long[1]
    assert json.loads(long[1])["processes"] >= 2


def test_the_registry_refuses_an_unknown_name_where_it_was_read() -> None:
    with pytest.raises(InvalidInput, match=r"^tfcli.yaml: backend: unknown backend 'gek' \(did you mean 'gke'\?\)"):
        registry.registration("gek", "tfcli.yaml: backend")
    assert {"gke", "local"} <= set(registry.names())
