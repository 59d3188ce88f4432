"""tfcli.yaml's ``image:``: a ready image's name, or ``{requirements: FILE}`` (a layer the image stack builds); a
Dockerfile layer (``{dockerfile: FILE}``) is refused on purpose, exit 2, one line naming the file and the key and
what to do instead (docs/gke.md "Your own packages"), before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import invoke


def settings(project: Path, image: str) -> None:
    (project / "tfcli.yaml").write_text(
        f"name: test\ngcp_project: my-proj-123\nlocation: us-central1-a\nimage: {image}\n"
    )


def test_a_dockerfile_layer_is_refused_with_what_to_do_instead(project: Path) -> None:
    (project / "Dockerfile").write_text("FROM scratch\n")
    settings(project, "{dockerfile: Dockerfile}")
    code, stdout, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")
    assert code == 2, stdout + stderr
    flat = " ".join(stderr.split())
    assert "tfcli.yaml: image: a Dockerfile is not built by tfcli" in flat
    assert "image: {requirements: FILE}" in flat and "FROM the trainer" in flat
    assert "image.str" not in flat and "Traceback" not in stderr  # one problem, not pydantic's union of two
    assert not (project / "experiments" / "si1").exists() and list((project / "stacks").iterdir()) == []


@pytest.mark.parametrize("image", ["{requirements: requirements.txt}", "us-docker.pkg.dev/p/r/trainer:1"])
def test_requirements_and_a_named_image_are_accepted(project: Path, image: str) -> None:
    (project / "requirements.txt").write_text("gym-minigrid==1.2.2\n")
    settings(project, image)
    code, stdout, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")
    assert code == 0, stdout + stderr
