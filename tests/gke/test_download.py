"""Downloading results from GCS, against gcp-storage-emulator over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from tfcli.gke.download import _safe_target, download_prefix
from tfcli.local.supervisor import free_port
from trainer.kernel.errors import TfcliError

BUCKET = "tfcli-results-test"


@pytest.fixture(scope="module")
def client() -> Iterator[storage.Client]:
    """A storage client talking HTTP to a gcp-storage-emulator on loopback."""
    from gcp_storage_emulator.server import create_server

    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{port}")
        yield storage.Client(project="test", credentials=AnonymousCredentials())
    server.stop()


def upload(client: storage.Client, files: dict[str, bytes]) -> None:
    bucket = client.bucket(BUCKET)
    for name, data in files.items():
        bucket.blob(name).upload_from_string(data)


def test_download_copies_the_experiment_prefix_and_skips_unchanged_files(
    client: storage.Client, tmp_path: Path
) -> None:
    client.create_bucket(BUCKET)
    files = {
        "exp/result.json": b'{"status": "completed"}',
        "exp/checkpoints/1/state.json": b"{}",
        "exp/progress.jsonl": b'{"episode": 1}\n',
        "other/result.json": b"not mine",
    }
    upload(client, files)
    report = download_prefix(client, BUCKET, "exp", tmp_path)
    assert (report.downloaded, report.unchanged) == (3, 0)
    assert (tmp_path / "result.json").read_bytes() == files["exp/result.json"]
    assert (tmp_path / "checkpoints" / "1" / "state.json").read_bytes() == b"{}"
    assert not (tmp_path / "other").exists()

    upload(client, {"exp/progress.jsonl": b'{"episode": 1}\n{"episode": 2}\n'})
    again = download_prefix(client, BUCKET, "exp/", tmp_path)
    assert (again.downloaded, again.unchanged) == (1, 2)
    assert (tmp_path / "progress.jsonl").read_text().count("\n") == 2
    assert not list(tmp_path.rglob(".*.part"))


@pytest.mark.parametrize("name", ["../escape.txt", "a/../../escape.txt", "folder/", ""])
def test_object_names_cannot_escape_the_results_folder(name: str, tmp_path: Path) -> None:
    # The emulator refuses such names itself, so the guard is checked directly; GCS accepts them.
    assert _safe_target(tmp_path, name) is None
    assert _safe_target(tmp_path, "checkpoints/1/state.json") == tmp_path / "checkpoints" / "1" / "state.json"


def test_missing_bucket_is_a_clear_error(client: storage.Client, tmp_path: Path) -> None:
    with pytest.raises(TfcliError, match="bucket gs://no-such-bucket does not exist"):
        download_prefix(client, "no-such-bucket", "exp", tmp_path)
