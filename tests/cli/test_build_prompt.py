"""The question before a project's first trainer image build: asked on a terminal (as the Pulumi CLI install is),
with what the build costs; without a terminal nobody can answer, and the run cannot start without the image."""

from __future__ import annotations

import pytest

from infra.prices import image_build_estimate
from tfcli.cli import build_prompt


def test_without_a_terminal_the_build_goes_ahead_and_says_what_it_costs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(build_prompt, "interactive", lambda: False)
    assert build_prompt.offer_build("image.p") is True
    said = " ".join(capsys.readouterr().err.split())
    assert "stack image.p" in said and f"~${image_build_estimate().usd:.2f}" in said


@pytest.mark.parametrize(("answer", "built"), [("y\n", True), ("n\n", False), ("\n", True)])
def test_on_a_terminal_the_answer_decides(monkeypatch: pytest.MonkeyPatch, answer: str, built: bool) -> None:
    import io

    monkeypatch.setattr(build_prompt, "interactive", lambda: True)
    monkeypatch.setattr("sys.stdin", io.StringIO(answer))
    assert build_prompt.offer_build("image.p") is built
