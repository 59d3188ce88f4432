"""``trainer.log`` has a size cap: its head, then the newest output, so an environment printing a megabyte a step
cannot fill the disk.

The trainer writes ``trainer.log`` itself (its stdout and stderr, opened for appending by :func:`spawn`), so that
its output never depends on a live reader: a pipe would break under a trainer whose supervisor was killed, failing
the checkpoint it makes on its way out. The supervisor watches the file's size instead (:func:`keep_capped`). Once it
passes ``HEAD + TAIL`` bytes, its last :data:`TAIL` bytes are copied to ``trainer.log.1`` (replacing the one before)
and the file is cut back to its first :data:`HEAD` bytes, followed by a note saying so; the trainer's appends go on at
the new end (``O_APPEND``). On disk: at most about ``HEAD + 2 x TAIL`` bytes, how the run started (the spec, the
build, the first errors) and its newest output, where ``logs`` and ``logs --tail`` find it.

This is logrotate's ``copytruncate``, with its known cost: what the trainer writes between the copy and the cut
(microseconds of output) is lost; logrotate(8): "there is a very small time slice between copying the file and
truncating it, so some logging data might be lost".
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

HEAD = 8 * 1024 * 1024
TAIL = 4 * 1024 * 1024
CHECK_SECONDS = 0.5


def note(head: int, tail: int) -> bytes:
    return (
        f"\n[tfcli: trainer.log is capped: its first {head // 2**20} MiB, then this note, then the newest output; "
        f"the last {tail // 2**20} MiB before that are in trainer.log.1; older output was dropped]\n"
    ).encode()


def rotate_if_over(log: Path, *, head: int = HEAD, tail: int = TAIL) -> bool:
    """Move what ``log`` holds past its first ``head`` bytes to ``<log>.1`` once it holds over ``head + tail``."""
    try:
        if log.stat().st_size <= head + tail:
            return False
    except OSError:
        return False
    older = log.with_name(log.name + ".1")
    partial = log.with_name(log.name + ".1.partial")
    with open(log, "r+b") as current, open(partial, "wb") as copy:
        end = current.seek(0, os.SEEK_END)
        current.seek(max(head, end - tail))  # the newest ``tail`` bytes: a burst's middle is dropped
        shutil.copyfileobj(current, copy)
        current.truncate(head)  # the trainer appends at the new end from here
        current.seek(head)
        current.write(note(head, tail))
    os.replace(partial, older)
    return True


def keep_capped(log: Path, ended: threading.Event) -> threading.Thread:
    """Check ``log``'s size every :data:`CHECK_SECONDS` on a thread of its own, and once more when ``ended`` is set."""

    def watch() -> None:
        while True:
            done = ended.wait(CHECK_SECONDS)
            with contextlib.suppress(OSError):  # a full disk: the trainer reports its own writes
                rotate_if_over(log)
            if done:
                return

    thread = threading.Thread(target=watch, name="trainer-log-cap", daemon=True)
    thread.start()
    return thread
