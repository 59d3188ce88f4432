"""``result.json`` has one reader (trainer/result_file.py): the trainer's own resume, the sweep workers through a
bucket, and tfcli's status all read the same file the same way, and what is not a whole JSON object reads as no
result yet."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from tfcli.experiments.store import ExperimentDir
from trainer.kernel.state import RunState
from trainer.result_file import FILENAME, parse_result, read_result, result_status
from trainer.results import Result


def test_what_the_trainer_writes_is_what_every_reader_reads(tmp_path: Path) -> None:
    written = Result.of("paused", RunState(timesteps=1200, episodes=7), reason="SIGTERM")
    written.write(tmp_path)
    assert (tmp_path / FILENAME).is_file() and FILENAME == "result.json"
    assert read_result(tmp_path) == written.as_json()
    assert read_result(tmp_path)["reason"] == "SIGTERM" and result_status(read_result(tmp_path)) == "paused"
    results = tmp_path / "lab" / "results"
    results.mkdir(parents=True)
    written.write(results)
    assert ExperimentDir(tmp_path / "lab").result() == written.as_json()  # tfcli's status reads it the same way


@pytest.mark.parametrize(
    "content",
    [b'{"status": "pau', b"", b"[1, 2]", b'[["status", "completed"]]', b"3", b"null", b'"completed"', b"\xff\xfe{"],
)
def test_what_is_not_a_whole_json_object_reads_as_no_result_yet(tmp_path: Path, content: bytes) -> None:
    (tmp_path / FILENAME).write_bytes(content)
    assert read_result(tmp_path) == {} and parse_result(content) == {}


def test_no_file_and_nothing_read_are_no_result(tmp_path: Path) -> None:
    assert read_result(tmp_path) == {} and read_result(tmp_path / "gone") == {}
    assert parse_result(None) == {}


def test_text_and_bytes_parse_alike() -> None:
    assert parse_result('{"status": "completed", "timesteps": 5}') == {"status": "completed", "timesteps": 5}
    assert parse_result(b'{"status": "failed"}') == {"status": "failed"}


def test_a_reader_of_its_own_is_asked_for_the_folders_result_and_its_errors_read_as_none(tmp_path: Path) -> None:
    asked: list[Path] = []

    def bucket(path: Path) -> str:
        asked.append(path)
        return '{"status": "pruned"}'

    assert read_result(tmp_path / "sweep-3", bucket) == {"status": "pruned"}
    assert asked == [tmp_path / "sweep-3" / "result.json"]

    def replaced(path: Path) -> str:  # gcsfuse: a generation replaced under an open reader
        raise OSError(errno.ESTALE, "Stale file handle", str(path))

    assert read_result(tmp_path, replaced) == {}


def test_a_status_is_a_string_or_none() -> None:
    assert result_status({"status": "completed"}) == "completed"
    assert (
        result_status({"status": 3}) is None and result_status({}) is None and result_status({"status": None}) is None
    )
