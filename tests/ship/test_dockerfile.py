"""The trainer image's Dockerfile: lint-clean, multi-stage, non-root, CPU and GPU from one file."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "trainer" / "Dockerfile"


def linter(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed in the project environment (a dev dependency in pyproject.toml)")
    return found


def stages(text: str) -> dict[str, str]:
    """``FROM image AS name`` -> {name: image}."""
    return {m.group(2): m.group(1) for m in re.finditer(r"^FROM\s+(\S+)\s+AS\s+(\S+)", text, re.MULTILINE)}


def test_hadolint_has_no_findings() -> None:
    run = subprocess.run([linter("hadolint"), str(DOCKERFILE)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == ""


def test_hadolint_would_catch_a_mistake(tmp_path: Path) -> None:
    broken = tmp_path / "Dockerfile"
    broken.write_text("FROM debian\nRUN apt-get install -y curl\n")
    run = subprocess.run([linter("hadolint"), str(broken)], capture_output=True, text=True)
    assert run.returncode != 0 and "DL3006" in run.stdout


def test_two_variants_from_one_file_with_the_cuda_tensorflow_2_12_was_built_for() -> None:
    text = DOCKERFILE.read_text()
    found = stages(text)
    assert re.search(r"^ARG VARIANT=cpu$", text, re.MULTILINE)
    assert found["runtime-cpu"].startswith("debian:")
    assert found["runtime-gpu"].startswith("nvidia/cuda:11.8.0-cudnn8-runtime")
    assert "FROM runtime-${VARIANT} AS final" in text
    assert "s/^tensorflow-cpu==2\\.12\\.1/tensorflow==2.12.1/" in text  # the GPU build of the same TF


def test_final_stage_is_non_root_without_build_tools_and_runs_the_trainer() -> None:
    text = DOCKERFILE.read_text()
    final = text[text.index("AS final") :]
    assert "USER 1000:1000" in final
    assert 'ENTRYPOINT ["python", "-m", "trainer"]' in final
    assert "/uv" not in final and "apt-get" not in final and "build-essential" not in text
    assert "COPY --from=build /opt/venv /opt/venv" in final


def test_dependencies_resolve_as_in_development() -> None:
    text = DOCKERFILE.read_text()
    assert "uv export --no-dev" in text and "COPY pyproject.toml README.md ./" in text
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    dockerignore = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert dockerignore[0] == "*"
    assert {"!pyproject.toml", "!README.md", "!tfcli/", "!trainer/", "!infra/"} <= set(dockerignore)


def test_the_package_layers_dockerfile_is_lint_clean_and_ends_as_the_trainers_user(tmp_path: Path) -> None:
    """The Dockerfile the image stack builds the project's packages with (infra/image_layer.py), FROM the trainer."""
    from infra.image_layer import LAYER_DOCKERFILE

    layer = tmp_path / "Dockerfile"
    layer.write_text(LAYER_DOCKERFILE)
    run = subprocess.run([linter("hadolint"), str(layer)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "", run.stdout + run.stderr
    users = re.findall(r"^USER\s+(\S+)", LAYER_DOCKERFILE, re.MULTILINE)
    assert users[-1] == "1000:1000" == re.findall(r"^USER\s+(\S+)", DOCKERFILE.read_text(), re.MULTILINE)[-1]
    assert re.search(r"^FROM \$\{BASE\}$", LAYER_DOCKERFILE, re.MULTILINE)
