"""The GCS FUSE stand-in (tests/gcsfuse.py) does what gcsfuse's docs/semantics.md says the real mount does:
a new file reaches the bucket when it is closed, not on flush or fsync; an existing one is written back on close or
fsync; each mount answers stat/open of another writer's file from its own metadata cache until the entry's TTL
runs out; a reader whose generation was replaced gets ESTALE; a rename publishes and moves the object."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BUCKET = "fuse-semantics"
TTL = 4.0  # the reader's metadata cache: long enough for the writer's steps on a busy machine


def objects(gcs: Any) -> dict[str, bytes]:
    """The bucket's objects and their bytes (a folder's ``dir/`` object is empty; the emulator serves none)."""
    blobs = gcs.bucket(BUCKET).list_blobs()
    return {blob.name: b"" if blob.name.endswith("/") else blob.download_as_bytes() for blob in blobs}


def test_a_new_file_reaches_the_bucket_when_closed_not_on_flush_or_fsync(
    gcs: Any, gcsfuse: Callable[..., Path]
) -> None:
    gcs.create_bucket(BUCKET)
    mount = gcsfuse(BUCKET)
    with (mount / "progress.jsonl").open("w") as handle:
        handle.write('{"episode": 1}\n')
        handle.flush()  # Python's flush: a write(2), the bytes are in the mount's staging only
        assert objects(gcs) == {}
        os.fsync(handle.fileno())  # streaming writes: fsync does not finalize a new object
        assert objects(gcs) == {}
        assert (mount / "progress.jsonl").read_text() == '{"episode": 1}\n'  # the writer's mount sees its own file
    assert objects(gcs) == {"progress.jsonl": b'{"episode": 1}\n'}


def test_an_existing_file_is_written_back_whole_on_fsync_and_on_close(gcs: Any, gcsfuse: Callable[..., Path]) -> None:
    gcs.create_bucket(BUCKET)
    mount = gcsfuse(BUCKET)
    (mount / "log").write_text("a\n")
    with (mount / "log").open("a") as handle:
        handle.write("b\n")
        handle.flush()
        assert objects(gcs) == {"log": b"a\n"}
        os.fsync(handle.fileno())  # the staged (legacy) write path: fsync writes a new generation
        assert objects(gcs) == {"log": b"a\nb\n"}
        handle.write("c\n")
    assert objects(gcs) == {"log": b"a\nb\nc\n"}


def test_a_writer_goes_on_writing_after_a_reader_of_its_file_closes(gcs: Any, gcsfuse: Callable[..., Path]) -> None:
    """A resumed trial reads its progress.jsonl while it appends to it: a reader's close publishes what was written
    (FlushFile syncs the inode) and leaves the writer's handle writing, whichever of the two opened first."""
    gcs.create_bucket(BUCKET)
    mount = gcsfuse(BUCKET)
    (mount / "progress.jsonl").write_text("1\n")
    reader = (mount / "progress.jsonl").open()  # opened before the file is staged for writing
    with (mount / "progress.jsonl").open("a") as appender:
        appender.write("2\n")
        appender.flush()
        reader.close()
        assert objects(gcs) == {"progress.jsonl": b"1\n2\n"}
        with (mount / "progress.jsonl").open() as again:  # opened while it is staged
            assert again.read() == "1\n2\n"
        appender.write("3\n")
    assert objects(gcs) == {"progress.jsonl": b"1\n2\n3\n"}


@pytest.mark.slow  # waits out the mounts' metadata TTL (README "Development")
def test_each_mount_sees_another_writers_file_through_its_own_cache_until_the_ttl(
    gcs: Any, gcsfuse: Callable[..., Path]
) -> None:
    gcs.create_bucket(BUCKET)
    writer, reader = gcsfuse(BUCKET), gcsfuse(BUCKET, ttl=TTL)
    assert not (reader / "result.json").exists()  # a negative entry, cached too
    (writer / "result.json").write_text("{}")
    assert not (reader / "result.json").exists()
    with pytest.raises(FileNotFoundError):
        (reader / "result.json").open()
    time.sleep(TTL + 0.2)
    assert (reader / "result.json").read_text() == "{}"
    (writer / "result.json").write_text('{"status": "completed"}')
    assert (reader / "result.json").stat().st_size == 2  # the size this mount looked up
    time.sleep(TTL + 0.2)
    assert (reader / "result.json").read_text() == '{"status": "completed"}'


def test_a_reader_of_a_replaced_generation_gets_estale(gcs: Any, gcsfuse: Callable[..., Path]) -> None:
    gcs.create_bucket(BUCKET)
    writer, reader = gcsfuse(BUCKET), gcsfuse(BUCKET, ttl=60)
    (writer / "progress.jsonl").write_text("1\n")
    with (reader / "progress.jsonl").open("rb", buffering=0) as held:
        assert held.read(1) == b"1"
        with (writer / "progress.jsonl").open("a") as handle:
            handle.write("2\n")
        with pytest.raises(OSError) as raised:
            held.read()
        assert raised.value.errno == errno.ESTALE
    with pytest.raises(OSError) as raised:  # the cached generation (TTL 60 s) is gone too
        (reader / "progress.jsonl").read_text()
    assert raised.value.errno == errno.ESTALE


def test_a_rename_publishes_the_file_and_moves_its_object(gcs: Any, gcsfuse: Callable[..., Path]) -> None:
    gcs.create_bucket(BUCKET)
    mount = gcsfuse(BUCKET)
    (mount / "checkpoints").mkdir()
    (mount / "checkpoints" / ".COMPLETE.tmp").write_text("marker")
    os.replace(mount / "checkpoints" / ".COMPLETE.tmp", mount / "checkpoints" / "COMPLETE")
    assert objects(gcs) == {"checkpoints/": b"", "checkpoints/COMPLETE": b"marker"}
    assert sorted(os.listdir(mount / "checkpoints")) == ["COMPLETE"]
    with pytest.raises(OSError) as raised:
        (mount / "checkpoints").rmdir()
    assert raised.value.errno == errno.ENOTEMPTY
