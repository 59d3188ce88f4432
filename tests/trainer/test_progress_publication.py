"""``TFCLI_PUBLISH_SECONDS``: how often ``progress.jsonl`` is closed and reopened so that a GCS FUSE mount publishes
it (its effect is tested through the mount stand-in in tests/gke/test_live_progress.py); a bad value is the user's
mistake, said before anything trains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import finish, trainer_process

from trainer.hooks.progress_log import parse_publish_seconds

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")


@pytest.mark.parametrize("text", ["a minute", "0", "-5", "inf", "nan"])
def test_a_bad_publication_interval_is_invalid_input(
    text: str, tmp_path: Path, spec_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match=f"TFCLI_PUBLISH_SECONDS: '{text}' is not a number of seconds above 0"):
        parse_publish_seconds(text)
    if text == "a minute":  # the command says it and exits 2, as any bad input
        monkeypatch.setenv("TFCLI_PUBLISH_SECONDS", text)
        code, stderr = finish(trainer_process("run", "--spec", str(spec_file(episodes=1)), "--output", str(tmp_path)))
        assert code == 2 and "TFCLI_PUBLISH_SECONDS: 'a minute' is not a number" in stderr
        assert "Traceback" not in stderr and not (tmp_path / "progress.jsonl").exists()


def test_unset_means_the_default_and_a_number_is_taken() -> None:
    assert parse_publish_seconds(None) is None and parse_publish_seconds(" ") is None
    assert parse_publish_seconds("1.5") == 1.5
