"""When a GKE deploy builds the trainer first (tfcli/gke/image_stack.py): which runs pull from the image stack, and
what ``ensure_images`` does for a current, an older, a missing or a foreign image stack — with a stand-in for the
project's Stacks that records what would reach Pulumi."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gke_testkit import GCP_PROJECT, make_gke_project

from tfcli.gke import image_stack
from tfcli.gke.stacks import StackState
from tfcli.project import open_project
from trainer.kernel.config_keys import IMAGE_KEY, IMAGE_STACK_KEY
from trainer.kernel.errors import TfcliError

NAME = f"image.{GCP_PROJECT}"


@dataclass
class RecordingStacks:
    """What ensure_images asks of :class:`tfcli.gke.stacks.Stacks`: ``state``, then ``stack``/``set_config``/``up``."""

    project: Any
    outputs: dict[str, Any] = field(default_factory=dict)
    exists: bool = False
    calls: list[str] = field(default_factory=list)

    def state(self, name: str) -> StackState:
        self.calls.append(f"state {name}")
        return StackState(name, exists=self.exists, outputs=self.outputs)

    def stack(self, name: str, *, create: bool = False) -> str:
        self.calls.append(f"stack {name}")
        return name

    def set_config(self, stack: str, values: dict[str, str], *, secrets: dict[str, str] | None = None) -> None:
        self.calls.append("config")

    def credentials(self) -> dict[str, str]:
        return {}

    def up(self, stack: str, **_: Any) -> dict[str, Any]:
        self.calls.append(f"up {stack}")
        return {"context": image_stack.current_context()}


@pytest.fixture
def stacks(project: Path) -> RecordingStacks:
    make_gke_project(project, image=None)
    return RecordingStacks(open_project(project))


def test_only_a_run_without_a_named_image_pulls_from_the_image_stack() -> None:
    assert image_stack.wanted_image_stack({IMAGE_STACK_KEY: NAME}) == NAME
    assert image_stack.wanted_image_stack({IMAGE_STACK_KEY: NAME, IMAGE_KEY: "ghcr.io/me/t:1"}) is None
    assert image_stack.wanted_image_stack({}) is None


def test_a_current_image_stack_is_left_alone(stacks: RecordingStacks) -> None:
    stacks.exists, stacks.outputs = True, {"context": image_stack.current_context(), "images": {}}
    assert image_stack.ensure_images(stacks, NAME) == stacks.outputs  # type: ignore[arg-type]
    assert stacks.calls == [f"state {NAME}"]  # no update: nothing is built


def test_an_older_image_stack_is_updated_without_asking(stacks: RecordingStacks) -> None:
    stacks.exists, stacks.outputs = True, {"context": "0" * 16}
    asked: list[str] = []

    def refuse(name: str) -> bool:
        asked.append(name)
        return False

    image_stack.ensure_images(stacks, NAME, prompt=refuse)  # type: ignore[arg-type]
    assert asked == [] and stacks.calls[-1] == f"up {NAME}"
    written = (stacks.project.root / "stacks" / f"Pulumi.{NAME}.yaml").read_text()
    assert "tfcli:images" in written and f"gcp:project: {GCP_PROJECT}" in written


def test_a_missing_image_stack_is_asked_for_first(stacks: RecordingStacks) -> None:
    with pytest.raises(TfcliError, match="not built") as caught:
        image_stack.ensure_images(stacks, NAME, prompt=lambda name: False)  # type: ignore[arg-type]
    assert "tfcli image build" in str(caught.value.hint) and not any(c.startswith("up") for c in stacks.calls)
    image_stack.ensure_images(stacks, NAME, prompt=lambda name: True)  # type: ignore[arg-type]
    assert stacks.calls[-1] == f"up {NAME}"


def test_another_projects_image_stack_is_refused(stacks: RecordingStacks) -> None:
    with pytest.raises(TfcliError, match=r"image\.other-project"):
        image_stack.ensure_images(stacks, "image.other-project")  # type: ignore[arg-type]
    assert stacks.calls == []
