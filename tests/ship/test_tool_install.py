"""The README's install: ``uv tool install`` from the checkout puts a ``tfcli`` on PATH that works outside it.

``tfcli init my-lab && cd my-lab && tfcli ...`` must run as printed (issue 34). uv applies a project's
``[tool.uv] override-dependencies`` only inside that project, so ``uv tool install`` of the checkout cannot resolve
TensorForce's pins without ``--overrides tool-overrides.txt`` (uv's docs, "Tools": the tool's environment is
resolved from the package's own requirements plus the given ``--overrides``/``--constraints`` files). This test
installs it exactly as README.md prints it, into a tool folder of its own (UV_TOOL_DIR / UV_TOOL_BIN_DIR), with uv's
ordinary cache, so it takes ~15 s when the cache holds the wheels. It is the one test named ``outside_the_repository``:
a quick run can leave it out with ``-k 'not outside_the_repository'``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme_install_command() -> list[str]:
    """The ``uv tool install`` line README.md prints, with the checkout's path in place of ``/path/to/tfcli``."""
    match = re.search(r"^(uv tool install .*?)\s*(#.*)?$", (ROOT / "README.md").read_text(), re.MULTILINE)
    assert match is not None, "README.md shows no `uv tool install` command"
    return match.group(1).replace("/path/to/tfcli", str(ROOT)).split()


def test_tool_overrides_equal_the_projects_overrides() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    lines = (ROOT / "tool-overrides.txt").read_text().splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == pyproject["tool"]["uv"][
        "override-dependencies"
    ]


@pytest.mark.slow  # an installed command: a whole-tool journey (README "Development")
def test_the_installed_command_works_outside_the_repository(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv is not on PATH"
    env = {
        **os.environ,
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    for name in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"):
        env.pop(name, None)
    command = readme_install_command()
    install = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, f"{' '.join(command)}\n{install.stdout}{install.stderr}"
    assert (tmp_path / "bin" / "tfcli").exists()

    work = tmp_path / "home"
    work.mkdir()
    script = "tfcli init my-lab && cd my-lab && tfcli validate cartpole-ppo --no-build && tfcli experiment list"
    run = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert shutil.which("tfcli", path=env["PATH"]) == str(tmp_path / "bin" / "tfcli")
    assert (work / "my-lab" / "tfcli.yaml").exists()
    assert "valid: cartpole-ppo" in run.stderr
    assert "No experiments yet" in run.stdout
