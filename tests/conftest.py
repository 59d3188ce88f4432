"""Shared fixtures: a throw-away tfcli project to run commands in."""

from __future__ import annotations

import contextlib
import ctypes
import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from disk_kit import mount_tmpfs, unmount

from tfcli.spec.library import PROJECT_FILE


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty tfcli project (``tfcli.yaml``, ``configs/<kind>/``, ``experiments/``, ``stacks/``), made the cwd."""
    (tmp_path / PROJECT_FILE).write_text("name: test\n")
    for kind in ("experiments", "clusters", "agents", "networks", "environments"):
        (tmp_path / "configs" / kind).mkdir(parents=True)
    (tmp_path / "experiments").mkdir()
    (tmp_path / "stacks").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project made by ``tfcli init lab`` (the bundled config library copied in), made the cwd."""
    from typer.testing import CliRunner

    from tfcli.cli.app import app

    result = CliRunner().invoke(app, ["init", str(tmp_path / "lab")])
    assert result.exit_code == 0, result.output
    monkeypatch.chdir(tmp_path / "lab")
    return tmp_path / "lab"


@pytest.fixture
def release_memory() -> Iterator[None]:
    """After a test that builds TensorForce agents in this process: collect them and hand the freed heap back to the
    OS (glibc keeps it otherwise), so that two test processes building ~100 agents between them stay within a
    24 GiB machine."""
    yield
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``small_disk("8m")``: a fresh tmpfs of that size under ``tmp_path``, unmounted after the test
    (``disk_kit.mount_tmpfs``: root or passwordless sudo, else the test fails saying so)."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        mounted.append(mount_tmpfs(tmp_path / f"disk-{len(mounted)}", size))
        return mounted[-1]

    yield mount
    for point in reversed(mounted):
        unmount(point)
