"""A backend registered from outside tfcli (tests/backends/elsewhere.py, by this test alone) works for every lifecycle
command, chosen by ``--backend NAME`` or by ``backend:`` in tfcli.yaml, with no shared file edited: the seam is open.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import invoke, wait_for
from elsewhere import NAME, registered


@pytest.fixture
def elsewhere(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("elsewhere")
    with registered(root):
        yield root


def _status(name: str) -> dict[str, object]:
    code, stdout, stderr = invoke("experiment", "status", "-e", name, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


@pytest.mark.slow  # a trainer process, started twice
def test_every_lifecycle_command_reaches_a_backend_registered_by_a_test(lab: Path, elsewhere: Path) -> None:
    code, _, stderr = invoke(
        "experiment", "new", "-f", "cartpole-ppo", "-n", "cp", "-t", "50000", "--saver-frequency", "200t"
    )
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", "cp", "--backend", NAME)
    assert code == 0, stdout + stderr
    assert f"Started cp {NAME}" in stdout  # the backend's own words; it does not wait by default
    assert json.loads((lab / "experiments" / "cp" / "run.json").read_text())["backend"] == NAME
    assert (elsewhere / "cp" / "experiment.yaml").is_file()  # it trains in its own working directory
    wait_for(lambda: int(str(_status("cp")["timesteps"])) > 0, what="the first episodes", timeout=180)
    seen = _status("cp")
    assert (seen["backend"], seen["state"]) == (NAME, "running")
    code, stdout, _ = invoke("experiment", "list")
    assert code == 0 and NAME in stdout

    code, stdout, stderr = invoke("experiment", "pause", "-e", "cp")
    assert code == 0 and "Paused cp at" in stdout, stdout + stderr
    assert _status("cp")["state"] == "paused"
    code, stdout, stderr = invoke("experiment", "logs", "-e", "cp")
    assert code == 0 and "trainer.run" in stdout, stderr

    code, stdout, stderr = invoke("experiment", "resume", "-e", "cp")
    assert code == 0, stdout + stderr
    assert _status("cp")["state"] == "running"
    code, stdout, stderr = invoke("experiment", "stop", "-e", "cp")
    assert code == 0 and "Stopped cp; results are in experiments/cp/results/" in stdout, stdout + stderr
    assert _status("cp")["state"] == "stopped"
    code, stdout, stderr = invoke("experiment", "download", "-e", "cp")
    assert code == 0, stderr
    assert json.loads((lab / "experiments" / "cp" / "results" / "result.json").read_text())["status"] == "paused"


def test_backend_in_tfcli_yaml_chooses_a_registered_backend_and_refuses_a_shared_cluster(
    lab: Path, elsewhere: Path
) -> None:
    with (lab / "tfcli.yaml").open("a") as settings:
        settings.write(f"backend: {NAME}\n")
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp")
    assert code == 0, stderr
    assert _status("cp")["backend"] == NAME  # never started: the project's default
    code, _, stderr = invoke("experiment", "start", "-e", "cp", "-c", "shared")
    assert code == 2 and f"this project's runs train on '{NAME}'" in " ".join(stderr.split())
    code, _, stderr = invoke("experiment", "start", "-e", "cp", "--backend", NAME, "-c", "shared")
    assert code == 2 and f"no meaning with --backend {NAME}" in " ".join(stderr.split())
    assert not (lab / "experiments" / "cp" / "run.json").exists()
    code, stdout, stderr = invoke("experiment", "plan", "-e", "cp", "--backend", NAME, "--json")
    assert code == 0, stderr
    assert json.loads(stdout) == {  # the backend's own plan type, printed as its fields
        "name": "cp", "workdir": str(elsewhere / "cp"), "command": "python -m trainer run --spec experiment.yaml"
    }  # fmt: skip
