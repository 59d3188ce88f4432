"""Fixtures of the GKE tests: the fake pulumi CLI and a GKE project (the GCS emulator and the GCS FUSE mount of its
buckets are tests/conftest.py's)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gke_testkit import auth_plugin, failing_auth_plugin, fake_pulumi, make_gke_project

__all__ = ["auth_plugin", "failing_auth_plugin", "fake_pulumi"]


@pytest.fixture
def gke_project(project: Path) -> Path:
    """The empty project of tests/conftest.py, with a GCP project (so experiments start on GKE)."""
    return make_gke_project(project)


@pytest.fixture
def cloud_build(gcs: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The Cloud Build stand-in (tests/gke/fake_cloud_build.py) over HTTP, its builds' sources and logs on the GCS
    emulator; ``TFCLI_CLOUD_BUILD_HOST`` points infra's client (and a fake pulumi's provider) at it."""
    from fake_cloud_build import serve

    for api, url in serve(gcs):
        monkeypatch.setenv("TFCLI_CLOUD_BUILD_HOST", url)
        yield api
