"""The image runs `python -m trainer`; the manifests give it arguments. Both must agree with the trainer's CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from infra.manifests import build_manifests, context_for
from trainer.__main__ import _parser
from trainer.kernel.spec import ConfigLibrary, load_experiment
from trainer.kernel.spec.library import BUNDLED_CONFIGS

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted(p.stem for p in (BUNDLED_CONFIGS / "experiments").glob("*.yaml"))


def entrypoint() -> list[str]:
    match = re.search(r"^ENTRYPOINT (\[.*\])$", (ROOT / "trainer" / "Dockerfile").read_text(), re.MULTILINE)
    assert match
    return list(__import__("json").loads(match.group(1)))


def containers(name: str) -> list[dict]:  # type: ignore[type-arg]
    experiment = load_experiment(name, library=ConfigLibrary((BUNDLED_CONFIGS,))).spec
    objects = build_manifests(
        experiment, context_for(experiment, project="p-123456", location="us-central1-a"), token="t"
    )
    return [
        container
        for obj in objects
        if obj["kind"] == "Job"
        for container in obj["spec"]["template"]["spec"]["containers"]
        if container["name"] != "gke-gcsfuse-sidecar"
    ]


def test_the_image_entrypoint_is_the_trainer_module() -> None:
    assert entrypoint() == ["python", "-m", "trainer"]


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_rendered_command_line_parses_with_the_installed_trainer(name: str) -> None:
    found = containers(name)
    assert found
    commands = set()
    for container in found:
        assert "command" not in container  # the image's ENTRYPOINT is what runs
        parsed = _parser().parse_args(container["args"])
        commands.add(parsed.command)
        if parsed.command == "run":
            assert parsed.spec.startswith("/") and str(parsed.output).startswith("/results/")
        else:
            assert parsed.host == "0.0.0.0" and parsed.port > 0
            assert any(env["name"] == "TRAINER_TOKEN" for env in container.get("env", []))
    expected = {"run", "env-worker"} if name == "space-invaders-dqn" else {"run"}
    assert commands == expected


def test_the_entrypoint_answers_as_the_manifests_expect() -> None:
    """`python -m trainer <command> --help` (what the image runs) knows every flag the manifests pass."""
    for command, flags in (
        ("run", ("--spec", "--output", "--workers")),
        ("env-worker", ("--spec", "--port", "--host")),
    ):
        run = subprocess.run(
            [sys.executable, *entrypoint()[1:], command, "--help"], capture_output=True, text=True, check=True
        )
        assert all(flag in run.stdout for flag in flags)
