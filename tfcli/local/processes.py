"""The one process a local run is: an experiment's supervisor or a sweep's queue, recorded in its ``run.json``.

Both are started the same way (``python -m MODULE FOLDER ...`` in a session of their own, so no CLI process need
stay alive and the terminal's signals do not reach them), paused the same way (SIGTERM: the trainer checkpoints; the
queue pauses its trials) and told apart from an unrelated process that reuses the pid by their command line.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from tfcli.experiments.record import RunRecord
from tfcli.local.handle import LocalHandle
from trainer.kernel.errors import TfcliError

if TYPE_CHECKING:  # the project's models: not for a supervisor starting its trainer
    from tfcli.experiments.store import RunFolder


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def process_alive(pid: int | None, module: str, root: Path) -> bool:
    """Whether ``pid`` still runs ``python -m module ... root`` (pids get reused)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (macOS): trust the pid
    text = [part.decode(errors="replace") for part in cmdline]
    return module in text and str(root) in text


STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def handle_stop_signals(handler: Callable[[int, FrameType | None], None]) -> None:
    """Install ``handler`` for SIGTERM and SIGINT, then let them in: :func:`spawn` starts the process with both
    blocked, so a pause sent while Python was still starting waits for this handler instead of killing it."""
    for number in STOP_SIGNALS:
        signal.signal(number, handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def spawn(
    module: str, arguments: list[str], log_file: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``python -m module ARGUMENTS`` in a session of its own, its output appended to ``log_file``; ``env``: variables
    added to this process's.

    The child starts with SIGTERM and SIGINT blocked (a signal mask survives ``exec``) until it calls
    :func:`handle_stop_signals`: what is reported after a pause is then what the process did with it."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_file, "ab")  # noqa: SIM115 - handed to the child
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", module, *arguments],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})),
        )
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        log.close()


def sleep_until_one_ends(children: Sequence[subprocess.Popen[bytes]], timeout: float, also: int | None = None) -> None:
    """Sleep ``timeout`` seconds, or less: until one of ``children`` (not reaped yet) exits, or ``also`` (a
    descriptor: a sweep queue's :class:`tfcli.local.folder_watch.FolderWatch`) reads ready. A sweep's queue then
    starts the next trial at once, not up to a tick later (a tick a trial adds up over a sweep of short trials).
    Waits on the children's pidfds (pidfd_open(2), Linux 5.3); with nothing to wait on (every child reaped, no
    pidfds here: macOS, an older kernel, and no ``also``), the whole tick."""
    handles: list[int] = []
    waitable = [child for child in children if child.returncode is None] if hasattr(os, "pidfd_open") else []
    try:
        for child in waitable:  # not a reaped one: its pid may be another process's by now
            with contextlib.suppress(OSError):  # gone already, or no pidfds here
                handles.append(os.pidfd_open(child.pid))
        ready = handles + ([also] if also is not None else [])
        if ready:
            select.select(ready, [], [], timeout)  # a pidfd reads ready once its process has ended (a zombie too)
        else:
            time.sleep(timeout)
    finally:
        for handle in handles:
            os.close(handle)


PR_SET_PDEATHSIG = 1  # prctl(2), <linux/prctl.h>
KILL_GRACE = 5.0  # seconds for a SIGKILLed trainer's lock to drop (the kernel releases it as the process ends)


def dies_with_this_process() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has Linux send the child SIGTERM when the process starting it dies, SIGKILL included
    (``prctl(PR_SET_PDEATHSIG)``, prctl(2); it survives ``exec``): a supervisor's trainer and env-workers never
    train on, unseen, after it (the trainer checkpoints and writes ``paused`` on SIGTERM). A parent that died before
    the child set it is seen by the child's parent pid changing, and answered the same way. None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: nothing is loaded between fork and exec
    parent = os.getpid()

    def arrange() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)

    return arrange


def _group_of(pid: str) -> tuple[int, str] | None:
    """A process's group and state letter, from ``/proc/PID/stat`` (proc(5): fields after the command's ``)``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[2]), fields[0]


def members_of(group: int) -> list[int]:
    """The live processes of process group ``group`` but this one."""
    me, found = os.getpid(), []
    if not Path("/proc").is_dir():
        return []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != me:
            member = _group_of(entry.name)
            if member is not None and member[0] == group and member[1] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def others_in_my_group() -> list[int]:
    """The live processes of this process's group but itself (none unless it leads the group: a process started by
    :func:`spawn` does; a test calling this in pytest's own process gets none, so it never ends pytest's group)."""
    return members_of(os.getpgrp()) if os.getpgrp() == os.getpid() else []


def end_my_group(grace: float) -> list[int]:
    """SIGTERM, then after ``grace`` seconds SIGKILL, whatever else still runs in this process's group: what the
    trainer or the user's environment forked and left behind. The supervisor calls it as it ends, so no child
    outlives the run it belonged to (a child that left the group, with ``setsid``, is out of reach: a trainer
    forked warm leads a group of its own, which the supervisor ends with :func:`end_group`). Returns the pids it
    found."""
    return end_group(os.getpgrp(), grace) if os.getpgrp() == os.getpid() else []


def end_group(group: int, grace: float) -> list[int]:
    """SIGTERM, then after ``grace`` seconds SIGKILL, every live process of ``group`` but this one; the pids found."""
    found = members_of(group)
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and members_of(group):
        time.sleep(0.1)
    for pid in members_of(group):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return found


def end_process(pid: int, grace: float) -> None:
    """SIGTERM, then after ``grace`` seconds SIGKILL, one process (an ended child nobody reaped yet counts as ended,
    as in :func:`members_of`)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and (state := _group_of(str(pid))) is not None and state[1] not in ("Z", "X"):
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def kill_trainer(output: Path, grace: float) -> int | None:
    """SIGKILL the trainer that holds ``output``'s lock (``trainer/output_lock.py``) and the process group it leads,
    and wait up to ``grace`` seconds for the lock to drop; returns its pid, None when no trainer held it.

    A trainer started fresh is in its supervisor's group and dies with it; one forked by a sweep's warm trainer
    (:mod:`tfcli.local.zygote`) has a session of its own, which killing the supervisor's group does not reach, and
    its keeper only sends SIGTERM, which a trainer stuck in an environment's ``step`` never gets to act on."""
    from trainer.output_lock import holder

    pid = holder(output)
    if not pid:
        return None
    with contextlib.suppress(ProcessLookupError):
        group = os.getpgid(pid)
        if group == pid and group != os.getpgrp():
            os.killpg(group, signal.SIGKILL)  # its session: what it and the user's environment forked
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while holder(output) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


@dataclass(frozen=True)
class RecordedProcess:
    """The process of ``folder`` (an experiment's or a sweep's), running ``python -m module``; ``output``: the
    results folder of the trainer it runs (an experiment's), which the last-resort kill of :meth:`end` reaches too."""

    folder: RunFolder
    module: str
    output: Path | None = None

    def alive(self, pid: int | None = None) -> bool:
        """Whether the recorded process (or ``pid``) still runs and is ours."""
        recorded = self.folder.run_record().handle(LocalHandle).pid
        return process_alive(recorded if pid is None else pid, self.module, self.folder.root)

    def launch(
        self, arguments: list[str], log_file: Path, *, parallel: int | None = None, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """Start it and record it as the folder's run (``backend: local``, its pid; a sweep's ``parallel``)."""
        process = spawn(self.module, arguments, log_file, env)
        record = RunRecord(backend=LocalHandle.KEY, started_at=now(), parallel=parallel)
        self.folder.write_run_record(record.with_handle(LocalHandle(pid=process.pid)))
        return process

    def request_pause(self) -> int:
        """SIGTERM (the run checkpoints and exits), remembered as ``pause_requested``; returns the pid."""
        record = self.folder.run_record()
        if not self.alive():
            raise TfcliError(f"{self.folder.kind} '{self.folder.name}' is not running")
        handle = record.handle(LocalHandle)
        assert handle.pid is not None
        self.folder.write_run_record(record.with_handle(dataclasses.replace(handle, pause_requested=True)))
        os.kill(handle.pid, signal.SIGTERM)
        return handle.pid

    def wait_exit(self, pid: int, timeout: float) -> bool:
        """Wait until ``pid`` has exited; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive(pid):
                return True
            time.sleep(0.2)
        return False

    def end(self, timeout: float) -> None:
        """Pause it if it runs, and kill its whole process group and its trainer if it does not stop in time (the
        run loses what is unsaved): what ``stop`` does before marking the run stopped."""
        if not self.alive():
            return
        pid = self.request_pause()
        if not self.wait_exit(pid, timeout):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            if self.output is not None:
                kill_trainer(self.output, KILL_GRACE)

    def mark_stopped(self) -> None:
        record = self.folder.run_record()
        handle = dataclasses.replace(record.handle(LocalHandle), pause_requested=False)
        self.folder.write_run_record(record.but(stopped=True, stopped_at=now()).with_handle(handle))
