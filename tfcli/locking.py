"""One command at a time per experiment (or cluster): a second one is refused, not interleaved."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from trainer.kernel.errors import TfcliError


@contextlib.contextmanager
def exclusive(lock_file: Path, what: str, *, shared: bool = False) -> Iterator[None]:
    """Hold a lock on ``lock_file`` for the block; refuse at once if another process holds it.

    ``shared`` locks (for commands that only rely on the thing, such as experiments starting on a shared cluster)
    coexist with each other but not with an exclusive one. ``flock`` locks vanish with the process that held them,
    so a crashed command never leaves a stale lock.

    Re-entrant within a process: a block that already holds ``lock_file`` exclusively (``resume``: check, write the
    budget, launch, under one lock) may call code that takes it again, and the lock is kept until the outer block
    ends. (Two ``flock`` calls on two opens of one file conflict even in one process.)
    """
    key = lock_file.resolve()
    if key in _HELD:
        yield
        return
    with _locked(lock_file, what, shared=shared):
        if not shared:
            _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)


_HELD: set[Path] = set()  # lock files this process holds exclusively (single-threaded commands take them)


@contextlib.contextmanager
def _locked(lock_file: Path, what: str, *, shared: bool) -> Iterator[None]:
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock_file, "a+")  # noqa: SIM115 - closed in finally, after the lock is released
    try:
        try:
            fcntl.flock(handle, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise TfcliError(
                f"{what} is busy: another tfcli command ({holder}) is acting on it",
                hint="wait for that command to finish, then try again",
            ) from None
        if not shared:
            # Who holds it, for the "busy" message of a second command; the lock itself needs no disk space, so a
            # full disk is for the command's own writes to report (with the file they failed on).
            with contextlib.suppress(OSError):
                handle.seek(0)
                handle.truncate()
                handle.write(f"pid {os.getpid()}")
                handle.flush()
        yield
    finally:
        with contextlib.suppress(OSError):  # the holder's pid may still wait in the buffer of a full disk
            handle.close()
