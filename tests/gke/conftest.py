"""Fixtures of the GKE tests: the fake pulumi CLI and a GKE project (the GCS emulator and the GCS FUSE mount of its
buckets are tests/conftest.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gke_testkit import auth_plugin, failing_auth_plugin, fake_pulumi, make_gke_project

__all__ = ["auth_plugin", "failing_auth_plugin", "fake_pulumi"]


@pytest.fixture
def gke_project(project: Path) -> Path:
    """The empty project of tests/conftest.py, with a GCP project (so experiments start on GKE)."""
    return make_gke_project(project)
