"""The trainer's atomic writes: a reader finds the old file or the new one, and a failed write leaves no debris."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from trainer.kernel.files import atomic_write_json, atomic_write_text


def test_a_write_creates_the_folder_and_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "run" / "result.json"
    atomic_write_json(target, {"episodes": 1})
    atomic_write_json(target, {"episodes": 2})
    assert json.loads(target.read_text()) == {"episodes": 2}
    assert target.read_text().endswith("}\n")
    assert [path.name for path in target.parent.iterdir()] == ["result.json"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    atomic_write_text(target, "old\n")
    with pytest.raises(TypeError):
        atomic_write_text(target, cast(Any, b"not text"))
    assert target.read_text() == "old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["state.json"]
