"""The process that runs one local experiment: env-workers (distributed), the trainer, and the clean-up.

``python -m tfcli.local.supervisor EXPERIMENT_DIR`` is what ``tfcli experiment start`` launches, in a session of
its own, whether the CLI waits for it or not. Keeping the trainer and its env-workers under one parent means
``pause`` and ``stop`` signal one process, the workers never outlive the learner, and a detached run needs no
CLI process alive. It asks a warm trainer to fork its trainer (:mod:`tfcli.local.warm`: a sweep's, or the
standing one a previous run left, :mod:`tfcli.local.standing`) and handles it as the process it would have
started; a run that had to start its trainer fresh leaves a standing one behind for the next. The exit code is the
trainer's (0 completed, 143 paused, 1 failed, 2 invalid spec).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from tfcli.local.log_cap import keep_capped
from tfcli.local.processes import dies_with_this_process, end_group, end_my_group, handle_stop_signals
from tfcli.local.standing import leave_warm
from tfcli.local.warm import WarmTrainer, start_warm
from trainer.kernel.spec.outcomes import EXIT_PAUSED

WORKER_STOP_SECONDS = 10.0


def free_port() -> int:
    """A port on loopback that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def code_arguments(spec: Path) -> list[str]:
    """``--code ROOT``: the project's root, so that its own environments (``envs/``) import in every process."""
    from trainer.kernel.spec.library import find_project_root

    root = find_project_root(spec.parent)
    return ["--code", str(root)] if root is not None else []


def learner_command(spec: Path, results: Path, ports: list[int]) -> list[str]:
    command = [sys.executable, "-m", "trainer", "run", "--spec", str(spec), "--output", str(results)]
    command += code_arguments(spec)
    if ports:
        command += ["--workers", ",".join(f"127.0.0.1:{port}" for port in ports)]
    return command


def worker_command(spec: Path, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "trainer",
        "env-worker",
        "--spec",
        str(spec),
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
        *code_arguments(spec),
    ]


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM, then SIGKILL whatever is still alive after a grace period."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + WORKER_STOP_SECONDS
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def supervise(root: Path) -> int:
    """Run the experiment in ``root`` (an ``experiments/<name>/`` folder) to the trainer's exit."""
    workers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    learner: subprocess.Popen[bytes] | WarmTrainer | None = None
    ended, capping = threading.Event(), None
    stopping = paid_imports = False

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        if learner is not None and learner.poll() is None:
            learner.send_signal(signal.SIGTERM)  # the trainer checkpoints and exits 143

    # First of all: a pause right after `start --detach` must find the handler in place (reading the spec takes a
    # while), not end the supervisor with nothing saved while the CLI reports a checkpoint.
    handle_stop_signals(forward)
    from tfcli.experiments.store import ExperimentDir

    experiment = ExperimentDir(root)
    # The stored spec as plain data: the supervisor needs its run mode and workers only, and validating it here
    # (pydantic and the spec models, ~0.5 s of a 2-core machine) would hold back the trainer's start, which
    # validates it anyway (exit 2 naming the file and field), as the env-workers do.
    spec = experiment.spec_view()
    experiment.logs.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, TRAINER_TOKEN=os.environ.get("TRAINER_TOKEN") or secrets.token_hex(32))
    try:
        if spec.distributed:
            for index in range(spec.num_workers):
                port = free_port()
                log = open(experiment.logs / f"env-worker-{index}.log", "ab")  # noqa: SIM115 - child owns it
                workers.append(
                    subprocess.Popen(
                        worker_command(experiment.spec_file, port),
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=env,
                        preexec_fn=dies_with_this_process(),
                    )
                )
                ports.append(port)
            # The learner starts at once: it connects to each worker as soon as that one listens (retrying until
            # then), and imports TensorFlow meanwhile, so the workers' start-up overlaps its own.
        if stopping:
            return EXIT_PAUSED
        command = learner_command(experiment.spec_file, experiment.results, ports)
        # Forked by a warm trainer when there is one (a sweep's, or the one a previous run left), skipping the
        # imports; otherwise, or when it cannot, a fresh process. Not a distributed learner: its env-workers start
        # fresh anyway, and their start-up overlaps its imports.
        learner = (None if ports else start_warm(command[3:], env, experiment.name)) or subprocess.Popen(
            command,
            env=env,
            preexec_fn=dies_with_this_process(),  # a supervisor killed outright ends its trainer (it checkpoints)
        )
        if stopping:  # the pause came while the trainer was being started, with no trainer yet to forward it to
            forward(signal.SIGTERM, None)
        paid_imports = not ports and not isinstance(learner, WarmTrainer)
        capping = keep_capped(experiment.logs / "trainer.log", ended)  # its head and newest output
        while True:
            try:
                return learner.wait()
            except InterruptedError:  # pragma: no cover - PEP 475 retries waits; kept for clarity
                continue
    finally:
        stop_all(workers)
        _end_leftovers(learner)
        ended.set()
        if paid_imports:
            leave_warm()  # this run paid the imports: the next lone start need not (tfcli.local.standing)
        if capping is not None:
            capping.join(timeout=WORKER_STOP_SECONDS)


def _end_leftovers(learner: subprocess.Popen[bytes] | WarmTrainer | None) -> None:
    """Whatever the trainer or the user's environment forked and left running ends with the run (named in the log):
    in this process's group, and in the group of its own that a trainer forked warm leads."""
    left = end_my_group(WORKER_STOP_SECONDS)
    if isinstance(learner, WarmTrainer) and learner.poll() is not None:
        left += end_group(learner.pid, WORKER_STOP_SECONDS)
    if left:
        print(f"tfcli: ended {len(left)} process(es) the run left behind (pids {', '.join(map(str, left))})")


def main() -> None:
    if len(sys.argv) != 2:
        print("usage: python -m tfcli.local.supervisor EXPERIMENT_DIR", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(supervise(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
