"""Mounting the GCS FUSE stand-in (tests/gcsfuse.py) for a test: :func:`mounted` starts its daemon, a process of
its own as one pod's GCS FUSE volume, waits for the mount and unmounts it on the way out; :func:`lose` kills it as a
lost node or sidecar does.

Kept apart from tests/gcsfuse.py, which is the file system itself and what that daemon runs (``python
tests/gcsfuse.py BUCKET MOUNTPOINT``): this is the test process's side, the daemon's lifecycle, and needs neither
libfuse nor the storage client. tests/gcsfuse.py re-exports every name here (``from gcsfuse import mounted``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from process_kit import stop_process

SCRIPT = Path(__file__).with_name("gcsfuse.py")  # what each daemon runs: the file system
DAEMONS: dict[Path, subprocess.Popen[bytes]] = {}  # each mount's daemon, by its mountpoint


def lose(mountpoint: Path) -> None:
    """The mount dies with what it staged (SIGKILL to its daemon): the node is gone, or the GCS FUSE sidecar. A
    SIGKILL of the trainer alone publishes its open files, as the kernel closes them (``FLUSH``) for a live mount."""
    daemon = DAEMONS[mountpoint]
    daemon.kill()
    daemon.wait()


@contextlib.contextmanager
def mounted(bucket: str, mountpoint: Path, *, ttl: float | None = 60.0, log: Path | None = None) -> Iterator[Path]:
    """``bucket`` (on the emulator ``STORAGE_EMULATOR_HOST`` names) mounted at ``mountpoint`` by a daemon process
    of its own, as one pod's GCS FUSE volume; unmounted (lazily, should a process still hold a file) on the way
    out."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    ttl_arg = "-1" if ttl is None else str(ttl)
    with open(log or os.devnull, "ab") as errors:
        daemon = subprocess.Popen(
            [sys.executable, str(SCRIPT), bucket, str(mountpoint), "--ttl", ttl_arg], stdout=errors, stderr=errors
        )
    DAEMONS[mountpoint] = daemon
    try:
        deadline = time.monotonic() + 30
        while not os.path.ismount(mountpoint):
            if daemon.poll() is not None or time.monotonic() > deadline:
                said = log.read_text()[-2000:] if log is not None and log.is_file() else ""
                raise RuntimeError(f"the GCS FUSE stand-in did not mount {mountpoint} (exit {daemon.poll()}): {said}")
            time.sleep(0.05)
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False, capture_output=True)
        stop_process(daemon, timeout=10)
        DAEMONS.pop(mountpoint, None)
