"""Fixtures of the GKE tests: the fake pulumi CLI, a GKE project, and a GCS emulator over real HTTP."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gke_testkit import auth_plugin, failing_auth_plugin, fake_pulumi, make_gke_project

__all__ = ["auth_plugin", "failing_auth_plugin", "fake_pulumi"]


@pytest.fixture
def gke_project(project: Path) -> Path:
    """The empty project of tests/conftest.py, with a GCP project (so experiments start on GKE)."""
    return make_gke_project(project)


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[tuple[Any, str]]:
    from gcp_storage_emulator.server import create_server

    from tfcli.local.supervisor import free_port

    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    yield server, f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def gcs(gcs_server: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A storage client on the emulator (emptied after each test); STORAGE_EMULATOR_HOST is set, so tfcli's own
    client talks to it too."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    server, url = gcs_server
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", url)
    yield storage.Client(project="test", credentials=AnonymousCredentials())
    server.wipe()


@pytest.fixture
def gcsfuse(gcs: Any, tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a bucket of the emulator as a pod's GCS FUSE volume (tests/gke/gcsfuse.py): ``gcsfuse(bucket, ttl=60)``
    returns the mountpoint, a folder of its own; every mount is unmounted after the test."""
    from gcsfuse import mounted

    with contextlib.ExitStack() as mounts:
        count = itertools.count()

        def mount(bucket: str, *, ttl: float | None = 60.0) -> Path:
            number = next(count)
            return mounts.enter_context(
                mounted(bucket, tmp_path / f"gcsfuse-{number}", ttl=ttl, log=tmp_path / f"gcsfuse-{number}.log")
            )

        yield mount
