"""A warm trainer for a local sweep: ``python -m tfcli.local.zygote FOLDER`` imports TensorFlow, TensorForce and
the trainer once, runs no TensorFlow op, and forks one trainer process per trial that a supervisor asks for.

Why fork, and why only here: a trial spends ~4.5 s of a 2-core machine importing TensorFlow and TensorForce before
it trains; a sweep of short trials pays that again and again. TensorFlow's runtime (its session, eager context and
thread pools) is not fork-safe once created — upstream: tensorflow/tensorflow#2448 (a session in the parent hangs
``session.run`` in forked children; "removing the graph/session in master process will solve the problem"), #5448
and #51832 (intra-op thread pools deadlock after fork) — but *importing* creates none of it: this process checks
that no eager context exists and that it runs one Python thread before every fork, and refuses to serve (the
supervisor then starts a fresh ``python -m trainer``) where that does not hold.

Each trial stays a process of its own (its pid for pause signals, its exit code 0/3/143/..., its lock, its seeds,
its graph and files): the zygote forks a *keeper* per request, which forks the trainer, sends its pid, waits for it
and sends its exit status; a supervisor that dies closes the connection, and the keeper then sends the trainer
SIGTERM (it checkpoints), as ``dies_with_this_process`` does for a trainer started fresh. The protocol is
:mod:`tfcli.local.warm`. This module imports nothing heavy at the top: a multi-threaded run's subprocess pools use
``spawn``, which imports the main module again in each worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import threading
import traceback
from pathlib import Path

SOCKET_NAME = "zygote.sock"
UNAVAILABLE = "unavailable"  # written instead of the socket when this process cannot fork trainers safely
NUMPY_SEEDED = "numpy"  # the one process-global RNG the trainer's imports leave seeded alike in every fork


def fork_safe() -> str | None:
    """Why forking now would be unsafe, or None: TensorFlow's eager context created, or threads running."""
    from tensorflow.python.eager import context

    eager = context.context_safe()  # the object exists from the import on; its runtime only once an op runs
    if eager is not None and getattr(eager, "_initialized", True):
        return "TensorFlow's runtime is initialized (an op ran)"
    if threading.active_count() != 1:
        return f"{threading.active_count()} Python threads run"
    return None


def warm_up() -> None:
    """What every trial would import: TensorFlow, TensorForce, the trainer's modules (no op runs) and matplotlib's
    figure (each trial draws its learning curve in its own process then, with no helper: trainer.curve_painter)."""
    from trainer.compat import quiet_tensorflow_import
    from trainer.heavy_imports import collection_paused

    quiet_tensorflow_import()
    with collection_paused():  # and frozen before the forks: trainer/heavy_imports.py
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401
        import tensorflow  # noqa: F401
        import tensorforce  # noqa: F401

        import trainer.__main__
        import trainer.agents
        import trainer.run  # noqa: F401


def serve(folder: Path, idle_seconds: float | None = None) -> None:
    """Answer requests on ``folder/zygote.sock`` until this process is ended (by hand, or with its sweep's queue:
    ``dies_with_this_process`` sends SIGTERM even when the queue is killed outright) or, given ``idle_seconds`` (the
    standing one, :mod:`tfcli.local.standing`), until none came for that long. Its folder goes with it either way:
    none is left behind in the temporary folder."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        _serve_from(folder, idle_seconds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _serve_from(folder: Path, idle_seconds: float | None) -> None:
    try:
        warm_up()
        unsafe = fork_safe()
    except Exception as error:  # a broken install: trials start fresh and report it themselves
        unsafe = f"the imports failed: {error}"
    if unsafe is not None:
        (folder / UNAVAILABLE).write_text(unsafe + "\n")  # for a client already waiting; then the folder goes
        print(f"not serving: {unsafe}", flush=True)
        return
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel; each reports to its client
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / SOCKET_NAME) + ".new")
    os.rename(str(folder / SOCKET_NAME) + ".new", folder / SOCKET_NAME)  # appears only when it can be connected to
    listener.listen(16)
    listener.settimeout(idle_seconds)
    print(f"warm (pid {os.getpid()}): serving {folder / SOCKET_NAME}", flush=True)
    _serve(listener)
    print(f"idle for {idle_seconds:g} s: ending", flush=True)


def _serve(listener: socket.socket) -> None:
    """Fork a keeper per request until none came for the listener's timeout."""
    while True:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            return
        with connection, contextlib.suppress(OSError, ValueError):  # a client gone or garbled: the next one
            _answer(listener, connection)


def _answer(listener: socket.socket, connection: socket.socket) -> None:
    """One request: fork a keeper for it, or say why not."""
    message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    try:
        unsafe = fork_safe()
        if unsafe is not None or len(fds) != 3:
            connection.sendall(json.dumps({"refused": unsafe or "expected stdin, stdout, stderr"}).encode() + b"\n")
            return
        request = json.loads(message)
        if os.fork() == 0:
            try:
                listener.close()
                _keep(connection, request, fds)
            finally:
                os._exit(1)  # a keeper that failed never returns into the zygote's loop (nor removes its folder)
    finally:
        for fd in fds:
            os.close(fd)


def _keep(connection: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    """The keeper: fork the trainer, report its pid, wait for it, report its exit status; never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the zygote's handler, which removes its folder
    pid = os.fork()
    if pid == 0:
        connection.close()
        _become_trainer(request, fds)
    for fd in fds:
        os.close(fd)
    connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    print(f"{request.get('label', '?')}: trainer forked (pid {pid})", flush=True)

    def watch() -> None:  # the supervisor went away: end the trainer as a fresh one would be ended (it checkpoints)
        with contextlib.suppress(OSError):
            connection.recv(1)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()
    _, status = os.waitpid(pid, 0)
    try:
        connection.sendall(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    finally:
        os._exit(0)


def _become_trainer(request: dict[str, object], fds: list[int]) -> None:
    """In the forked child: the supervisor's streams, working folder, environment and arguments, fresh seeds and
    default signals, then ``python -m trainer``'s own entry point; never returns."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    os.setsid()  # not the zygote's group: the queue's clean-up and the trial's are separate
    os.chdir(str(request["cwd"]))
    sys.path[0] = str(request["cwd"])  # as `python -m trainer` started there would have it (not the zygote's)
    environment = request["env"]
    assert isinstance(environment, dict)
    os.environ.clear()
    os.environ.update(environment)
    import numpy

    numpy.random.seed(None)  # as a fresh process would be (Python's own `random` reseeds itself after fork)
    arguments = request["argv"]
    assert isinstance(arguments, list)
    sys.argv = ["python -m trainer", *map(str, arguments)]
    from trainer.__main__ import exit_now, main

    try:
        code = main([str(argument) for argument in arguments])
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        exit_now(code)
    finally:
        os._exit(code)  # under a profiler exit_now raises SystemExit: this child must not return into the keeper


def main() -> None:
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--idle"):
        print("usage: python -m tfcli.local.zygote FOLDER [--idle SECONDS]", file=sys.stderr)
        raise SystemExit(2)
    serve(Path(sys.argv[1]), float(sys.argv[3]) if len(sys.argv) == 4 else None)


if __name__ == "__main__":
    main()
