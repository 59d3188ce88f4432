"""A supervisor's side of a warm trainer (:mod:`tfcli.local.zygote`: a sweep's, or the standing one a previous
run left, :mod:`tfcli.local.standing`): ask it for a trainer process instead of starting ``python -m trainer``
afresh, and handle the answer as the ``Popen`` it replaces (pid, ``poll``, ``wait``, ``send_signal``).

The protocol, one connection per trial over the zygote's Unix socket: the request is one JSON object (the trainer's
arguments, working folder, environment and a label for the log) sent with the supervisor's stdin, stdout and stderr
(``SCM_RIGHTS``, so the trainer writes to the trial's own log); the answers are JSON lines, ``{"pid": N}`` once the
trainer runs (or ``{"refused": why}``), then ``{"exit": CODE}`` when it ended, CODE as ``Popen.returncode`` gives it
(negative: the signal that killed it). Closing the connection asks the trainer to stop (SIGTERM: it checkpoints).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tfcli.local.standing import OFF, WARM_VARIABLE, private, standing_folder, zygote_alive

READY_SECONDS = 120.0  # the zygote imports TensorFlow as the first trial's supervisor starts: waiting is no slower
LOST_EXIT = 1  # the keeper went away without reporting (killed): the trainer's ending is read from its results


class WarmTrainer:
    """A trainer forked by the zygote: the part of ``subprocess.Popen`` a supervisor uses."""

    def __init__(self, connection: socket.socket, pid: int, buffer: bytes) -> None:
        self._connection = connection
        self._buffer = buffer
        self.pid = pid
        self.returncode: int | None = None

    def send_signal(self, number: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, number)

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read(block=False)
        return self.returncode

    def wait(self) -> int:
        while self.returncode is None:
            self._read(block=True)
        return self.returncode

    def _read(self, *, block: bool) -> None:
        while b"\n" not in self._buffer:
            self._connection.setblocking(block)
            try:
                chunk = self._connection.recv(4096)
            except BlockingIOError:
                return
            if not chunk:
                self._lost()
                return
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        answer = json.loads(line)
        if "exit" in answer:
            self.returncode = int(answer["exit"])
            self._connection.close()

    def _lost(self) -> None:
        """The keeper died: wait for the trainer itself to end (it is not our child, so poll /proc)."""
        while Path(f"/proc/{self.pid}").exists():
            time.sleep(0.2)
        self.returncode = LOST_EXIT
        self._connection.close()


def start_warm(arguments: list[str], env: dict[str, str], label: str) -> WarmTrainer | None:
    """``python -m trainer ARGUMENTS`` forked by a warm trainer: the sweep's (a trial), else the standing one a
    previous run left (:mod:`tfcli.local.standing`). None where there is none to ask, it could not fork safely or did
    not come up: the caller then starts a fresh one."""
    path = _socket_to_ask()
    if path is None:
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
        request = {"argv": arguments, "cwd": os.getcwd(), "env": env, "label": label}
        socket.send_fds(connection, [json.dumps(request).encode()], [0, 1, 2])
        buffer = b""
        while b"\n" not in buffer:
            chunk = connection.recv(4096)
            if not chunk:
                raise ConnectionError("the zygote closed the connection")
            buffer += chunk
    except OSError as error:
        print(f"tfcli: warm trainer unavailable ({error}); starting a fresh one", file=sys.stderr, flush=True)
        connection.close()
        return None
    line, rest = buffer.split(b"\n", 1)
    answer = json.loads(line)
    if "pid" not in answer:
        print(f"tfcli: warm trainer refused ({answer.get('refused')}); starting a fresh one", flush=True)
        connection.close()
        return None
    return WarmTrainer(connection, int(answer["pid"]), rest)


def _socket_to_ask() -> Path | None:
    """The socket of the zygote this process's trainer may ask, once it listens; None where there is none."""
    from tfcli.local.zygote import SOCKET_NAME, UNAVAILABLE

    named = os.environ.get(WARM_VARIABLE)
    if named == OFF:
        return None
    standing = not named  # none named (a sweep's trial names its sweep's): the one a previous run left
    folder = Path(named) if named else standing_folder()
    if folder is None or (standing and not (private(folder) and zygote_alive(folder))):
        return None
    path = folder / SOCKET_NAME
    deadline = time.monotonic() + READY_SECONDS
    while not path.exists():  # still importing: waiting is no slower than importing afresh
        gone = standing and not zygote_alive(folder)
        if gone or (folder / UNAVAILABLE).exists() or not folder.is_dir() or time.monotonic() > deadline:
            return None
        time.sleep(0.05)
    return path


@contextlib.contextmanager
def warm_trainer(log_file: Path) -> Iterator[None]:
    """A zygote for the trials launched inside the block (a sweep's queue): started here, named to them through
    :data:`WARM_VARIABLE`, ended with the block — and with this process, should it be killed. Its socket lives in
    a private temporary folder (mode 0700: only this user may ask it to run code), short enough for a socket path."""
    from tfcli.local.processes import dies_with_this_process

    folder = tempfile.mkdtemp(prefix="tfcli-warm-")
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "ab") as log:
        zygote = subprocess.Popen(
            [sys.executable, "-m", "tfcli.local.zygote", folder],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            preexec_fn=dies_with_this_process(),
        )
    os.environ[WARM_VARIABLE] = folder
    try:
        yield
    finally:
        os.environ.pop(WARM_VARIABLE, None)
        zygote.terminate()  # its trainers are not its children's children to end: each has its own keeper
        zygote.wait()
        shutil.rmtree(folder, ignore_errors=True)
