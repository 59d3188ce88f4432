"""Folders watched for a file appearing in them (inotify(7), through libc: Python's standard library has no binding),
so that a sweep's queue wakes as a trial's ``result.json`` is written, not only as its process exits.

A trial writes ``result.json`` (by rename: ``trainer/results.py``) when its outcome is decided; its process then
draws the learning curve and exits, and its supervisor records the exit: ~0.4 s of a 2-core machine in which the
next trial's supervisor can start and build its agent (issue 30: ``bench.warm_sweep``). Events for IN_CREATE and
IN_MOVED_TO are read ready on one descriptor, which :func:`tfcli.local.processes.sleep_until_one_ends` waits on
beside the children's pidfds. Where inotify is missing (macOS, a libc without it) :attr:`FolderWatch.fd` is None and
the queue waits for the process exits alone, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path

IN_MOVED_TO = 0x00000080  # <sys/inotify.h>: a file renamed into the folder
IN_CREATE = 0x00000100  # a file or folder created in it
EVENTS = IN_MOVED_TO | IN_CREATE
READ_BYTES = 64 * 1024


class FolderWatch:
    """One inotify descriptor for a process's lifetime: :meth:`add` a folder, :meth:`forget` it, :meth:`drain` what
    woke a wait. A folder that cannot be watched (gone, no permission) is skipped: the wait falls back to exits."""

    def __init__(self) -> None:
        self._libc: ctypes.CDLL | None = None
        self.fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if fd >= 0:
                self._libc, self.fd = libc, fd

    def add(self, folder: Path) -> int | None:
        """Watch ``folder`` (again: the kernel answers the same watch); its watch descriptor, None where it cannot."""
        if self._libc is None or self.fd is None:
            return None
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(folder), EVENTS)
        return wd if wd >= 0 else None

    def forget(self, wd: int | None) -> None:
        if self._libc is not None and self.fd is not None and wd is not None:
            # The kernel queues IN_IGNORED for it: one more wake, drained with the rest. Fails harmlessly where
            # the folder went and took its watch with it.
            self._libc.inotify_rm_watch(self.fd, wd)

    def drain(self) -> None:
        """Read the queued events (which folders does not matter: the caller looks at what it waits for)."""
        if self.fd is None:
            return
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.fd, READ_BYTES):
                pass

    def close(self) -> None:
        fd, self.fd, self._libc = self.fd, None, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> FolderWatch:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
