"""A disk that really fills up, for the full-disk tests: a small tmpfs, and a file that takes all its space.

A tmpfs gives the real thing — ENOSPC from the kernel, TensorFlow's own ``ResourceExhaustedError`` — rather than a
patched ``open``. Mounting needs root, or ``sudo -n`` (GitHub's runners). A user namespace (``unshare -rm``) would
not do: the mount must be visible to the test process itself, whose tfcli and TensorFlow calls write to it. Without
either the test fails, saying so: a skipped full-disk test would let the behaviour it guards quietly break.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def _prefix() -> list[str]:
    return [] if os.geteuid() == 0 else ["sudo", "-n"]


def mount_tmpfs(point: Path, size: str) -> Path:
    """A fresh tmpfs of ``size`` ("8m") at ``point`` (made), writable by this user."""
    point.mkdir(parents=True)
    options = f"size={size},uid={os.getuid()},gid={os.getgid()},mode=0755"
    done = subprocess.run(
        [*_prefix(), "mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.fail(
            f"cannot mount a {size} tmpfs at {point} ({done.stderr.strip() or f'exit {done.returncode}'}): "
            "the full-disk tests need root or passwordless sudo"
        )
    return point


def unmount(point: Path) -> None:
    """Lazily: a process (or the test's own working folder) may still be inside."""
    subprocess.run([*_prefix(), "umount", "-l", str(point)], check=False, capture_output=True)


def fill_disk(folder: Path) -> Path:
    """Take every free byte of the file system holding ``folder`` with one file (deleting it frees them again)."""
    filler = folder / "filler"
    stats = os.statvfs(folder)
    with open(filler, "wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, stats.f_bavail * stats.f_frsize)
    assert os.statvfs(folder).f_bavail == 0, "the disk still has room"
    return filler
