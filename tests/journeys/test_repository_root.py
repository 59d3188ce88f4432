"""The bundled ``gridworld-ppo`` runs in the repository itself (issue 29): the repository root is a tfcli project
(``tfcli.yaml``) where the README's quick start runs, and ``envs.gridworld`` could not be imported there — only
``tfcli init`` projects had ``envs/``. The root's ``envs/`` is the scaffold's template itself (``envs/__init__.py``).

The root is copied as it is (``tfcli.yaml`` and ``envs/``) so that the runs' folders stay out of the checkout.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import forget_project_modules, invoke

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    copy = tmp_path / "repository"
    copy.mkdir()
    shutil.copy(ROOT / "tfcli.yaml", copy / "tfcli.yaml")
    if (ROOT / "envs").is_dir():  # the repository as it is
        shutil.copytree(ROOT / "envs", copy / "envs", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(copy)
    forget_project_modules()
    yield copy
    forget_project_modules()


def test_gridworld_validates_in_the_repository(repository: Path) -> None:
    code, _, stderr = invoke("validate", "gridworld-ppo")
    assert code == 0, stderr
    assert "4 x envs.gridworld:GridWorld (observations (2,), 4 discrete actions" in stderr


@pytest.mark.parametrize("run_mode", [None, "distributed"])
def test_gridworld_trains_in_the_repository(repository: Path, run_mode: str | None) -> None:
    name = f"gw-{run_mode or 'shipped'}"
    flags = ["--run-mode", run_mode, "--num-workers", "2"] if run_mode else []
    code, _, stderr = invoke("experiment", "new", "-f", "gridworld-ppo", "-n", name, "--total-timesteps", "200", *flags)
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", name, "--local")
    assert code == 0, stdout + stderr
    result = json.loads((repository / "experiments" / name / "results" / "result.json").read_text())
    assert (result["status"], result["timesteps"]) == ("completed", 200)
