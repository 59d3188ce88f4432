"""The standing warm trainer: what lets a lone ``experiment start --local`` skip TensorFlow's imports when it comes
after another local run.

Why: a short run spends ~5 s of a 2-core machine importing TensorFlow and TensorForce before its first step (the
phase table in bench/README.md), and researchers start runs one after another: edit a spec, start, look, start
again. A sweep keeps one zygote (:mod:`tfcli.local.zygote`) for its trials (:func:`tfcli.local.warm.warm_trainer`);
a lone run whose trainer had to start fresh leaves one behind for the next start, which ends itself after
:func:`idle_seconds` without a request, as Gradle's daemon and Bazel's server do for the same reason. The next
start's supervisor asks it for its trainer (:func:`tfcli.local.warm.start_warm`); a run never waits for one that is
not there.

Its folder is ``$XDG_RUNTIME_DIR`` (or the temporary folder) ``/tfcli-warm-UID-FINGERPRINT``, made mode 0700 and
checked to be this user's before every use: whoever may connect to its socket runs code as this user. FINGERPRINT
covers what a forked trainer runs that the zygote imported already: the interpreter, tfcli's and the trainer's source
files (path, size, modification time), the installed packages' folder and the environment variables that shape the
imports. Any change gives another folder, so a trainer never runs yesterday's code; the old zygote ends when idle.

``TFCLI_WARM_TRAINER=off`` turns warm trainers off (every trainer starts fresh, sweeps' trials too);
``TFCLI_WARM_IDLE_SECONDS`` says how long the standing one waits for a next start (default 600; 0 leaves none).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from tfcli.local.processes import end_process

WARM_VARIABLE = "TFCLI_WARM_TRAINER"  # a zygote's folder (a sweep's queue sets it for its trials), or OFF
OFF = "off"  # TFCLI_WARM_TRAINER=off: no warm trainer at all
IDLE_VARIABLE = "TFCLI_WARM_IDLE_SECONDS"
DEFAULT_IDLE_SECONDS = 600
PID_FILE = "pid"  # the zygote's pid, written by the run that started it: a folder whose zygote died is stale
LOG_FILE = "zygote.log"
EXEC_SECONDS = 5.0  # a zygote's process younger than this may still be between its fork and its exec
PROC = Path("/proc/self/cmdline")  # where a zygote's liveness is read (Linux)
SOCKET_PATH_LIMIT = 100  # sun_path holds 108 bytes on Linux; the socket's name is appended to the folder
IMPORT_SHAPING = ("PYTHONPATH", "PYTHONHOME", "TF_", "CUDA_", "OMP_", "KMP_", "MPLBACKEND", "MPLCONFIGDIR")


def idle_seconds() -> int:
    """How long a standing zygote waits for the next start (0: none is left behind)."""
    try:
        return max(0, int(os.environ.get(IDLE_VARIABLE, DEFAULT_IDLE_SECONDS)))
    except ValueError:
        return DEFAULT_IDLE_SECONDS


def fingerprint() -> str:
    """What a forked trainer would share with the zygote that forked it (see the module's docstring)."""
    digest = hashlib.sha256()
    digest.update(f"{sys.executable}\0{sys.version}\0".encode())
    for name, value in sorted(os.environ.items()):
        if name.startswith(IMPORT_SHAPING):
            digest.update(f"{name}={value}\0".encode())
    with contextlib.suppress(OSError):
        digest.update(str(os.stat(sysconfig.get_paths()["purelib"]).st_mtime_ns).encode())
    for package in _source_roots():
        for path in sorted(package.rglob("*.py")):
            with contextlib.suppress(OSError):
                info = path.stat()
                digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def _source_roots() -> list[Path]:
    """tfcli's and the trainer's package folders, found without importing the trainer's package."""
    trainer = importlib.util.find_spec("trainer")
    roots = [Path(__file__).resolve().parents[1]]
    return roots + ([Path(trainer.origin).parent] if trainer is not None and trainer.origin else [])


def standing_folder() -> Path | None:
    """This user's standing zygote's folder for the code installed now, or None (then every lone run's trainer
    starts fresh) where its socket's path would be too long for a Unix socket, or where there is no ``/proc`` to
    tell a live zygote by (not Linux)."""
    if not PROC.exists():
        return None
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    folder = Path(base) / f"tfcli-warm-{os.getuid()}-{fingerprint()}"
    return folder if len(str(folder)) + 16 <= SOCKET_PATH_LIMIT else None


def private(folder: Path) -> bool:
    """Whether ``folder`` is a real folder of this user's that nobody else may enter (not a link)."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def zygote_alive(folder: Path) -> bool:
    """Whether the zygote whose pid ``folder`` records still runs (a folder left by one that was killed is not).
    For its first seconds the process may not have become the zygote yet (forked, not yet executed): it counts."""
    try:
        pid = int((folder / PID_FILE).read_text())
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        age = time.time() - (folder / PID_FILE).stat().st_mtime
    except (OSError, ValueError):
        return False
    return (b"tfcli.local.zygote" in command and str(folder).encode() in command) or age < EXEC_SECONDS


def leave_warm() -> Path | None:
    """Start a standing zygote for the next run where none serves this code yet; its folder, or None where none
    was started: a warm trainer named already (a sweep's trial: its sweep's zygote) or turned off, none to be left
    (``TFCLI_WARM_IDLE_SECONDS=0``), one there already, or the folder cannot be made private."""
    seconds = idle_seconds()
    if os.environ.get(WARM_VARIABLE) or seconds == 0:
        return None
    folder = standing_folder()
    if folder is None:
        return None
    if folder.exists():
        if not private(folder) or zygote_alive(folder):
            return None
        shutil.rmtree(folder, ignore_errors=True)  # left by a zygote that was killed
    try:
        folder.mkdir(mode=0o700)
    except OSError:  # another run made it first: that one starts the zygote
        return None
    with open(folder / LOG_FILE, "ab") as log:
        zygote = subprocess.Popen(
            [sys.executable, "-m", "tfcli.local.zygote", str(folder), "--idle", str(seconds)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            start_new_session=True,  # not this run's: it outlives the run, and ends itself when idle
        )
    (folder / PID_FILE).write_text(f"{zygote.pid}\n")
    return folder


def end_standing(base: Path, grace_seconds: float = 5.0) -> list[int]:
    """End every standing zygote of this user's in the runtime folder ``base`` (the pids it ended): SIGTERM, which
    takes its folder with it, then SIGKILL after ``grace_seconds``, and the folder is removed. A recorded pid that is
    not a zygote of its folder (reused, or never one) is left alone, once past its first seconds (:func:`zygote_alive`:
    until its exec is done, a new zygote's command line reads empty). Its forked trainers each have a keeper of their
    own and are not ended. For whoever must leave no warm trainer behind: a benchmark's rows, a test."""
    ended = []
    for folder in base.glob(f"tfcli-warm-{os.getuid()}-*"):
        if zygote_alive(folder):
            with contextlib.suppress(OSError, ValueError):  # it ended itself meanwhile, taking its folder
                pid = int((folder / PID_FILE).read_text())
                end_process(pid, grace_seconds)
                ended.append(pid)
        if private(folder):
            shutil.rmtree(folder, ignore_errors=True)
    return ended
