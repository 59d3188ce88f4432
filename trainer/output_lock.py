"""One trainer per output folder, ever: ``<output>/.trainer.lock``, held by the trainer itself while it runs.

A second ``trainer run`` on the same folder is refused before it reads or writes anything there (two trainers would
rewind, append to and overwrite one ``progress.jsonl``, ``result.json`` and ``checkpoints/``). The lock is the
trainer's own, not its supervisor's: a supervisor killed with SIGKILL leaves a trainer that still trains (until
``PR_SET_PDEATHSIG`` ends it, ``tfcli/local/processes.py``), and ``tfcli`` asks the lock, not the supervisor's pid,
whether a trainer still writes the folder (:func:`holder`).

POSIX record locks (``fcntl.lockf``), not ``flock``: the kernel drops them when the process ends however it ends
(SIGKILL included), so a lock is never stale, and a child that the user's environment forks does not inherit them
(fcntl(2): "record locks are not inherited by a child created via fork"), whereas it would share an ``flock`` and
keep the folder busy after the trainer died. The file holds the holder's pid, for the messages.

On GKE the output folder is the results bucket's GCS FUSE mount. Cloud Storage FUSE implements no locking of its
own, so the kernel keeps such locks per node: they stop a second trainer on the same node, not one in a pod on
another node. There the Job is the one writer: an experiment's Job runs one learner pod at a time (``parallelism:
1``, ``completions: 1``), a sweep's Indexed Job one pod per index, and a new Job (a changed spec) replaces the old
one only after deleting it (``deleteBeforeReplace``, docs/design.md §11); ``tfcli`` refuses to train a run here
while it is deployed there (``tfcli/backends.py``). Left open: Kubernetes' default ``podReplacementPolicy``
(``TerminatingOrFailed``) may start a replacement pod while an evicted one is still in its grace period (120 s,
checkpointing); ``podReplacementPolicy: Failed`` on the Jobs would close that window (not set yet). A filesystem
that refuses locks (``ENOLCK``) is trained on with a warning, as it was before the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
from pathlib import Path
from typing import IO

from trainer.kernel.errors import TfcliError

log = logging.getLogger(__name__)

LOCK = ".trainer.lock"
_HELD = (errno.EACCES, errno.EAGAIN)  # what lockf(2) says when another process holds the lock


def _pid_in(handle: IO[str]) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        handle.seek(0)
        return int(handle.read().strip() or "0") or None
    return None


def hold(output: Path) -> IO[str] | None:
    """Lock ``output`` for this process (close the returned file to release it); a ``TfcliError`` naming the other
    trainer's pid when one holds it. None: the filesystem keeps no locks (trained on, with a warning)."""
    handle = open(output / LOCK, "a+")  # noqa: SIM115 - the caller closes it when the run is over
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        pid = _pid_in(handle)
        handle.close()
        if error.errno in _HELD:
            raise TfcliError(
                f"another trainer{f' (pid {pid})' if pid else ''} is writing {output}: one trainer per results "
                "folder, so this one did not start",
                hint="wait for it to end, or pause it (`tfcli experiment pause`)",
            ) from None
        log.warning("%s keeps no file locks (%s): nothing stops a second trainer on this folder", output, error)
        return None
    with contextlib.suppress(OSError):  # the pid is for messages only; a full disk is the run's to report
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
    return handle


def holder(output: Path) -> int | None:
    """The pid of the trainer writing ``output`` now (0 when it wrote none yet); None when no trainer does."""
    try:
        handle = open(output / LOCK)  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as error:
            return (_pid_in(handle) or 0) if error.errno in _HELD else None
        fcntl.lockf(handle, fcntl.LOCK_UN)
    return None
