"""Faults of a distributed run as Kubernetes deals them: an env-worker pod killed outright (an OOM kill, a spot VM
taken back) and started again by its Job at the same address. The learner goes on with the other worker, takes
the new one back when it listens, and the run still ends ``completed`` with exactly its budget."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import finish, free_port, read_progress, read_result, trainer_process, wait_for

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

TOKEN = "fault-test-token"
# Long enough for the restarted worker to play whole episodes after it is back (the run is held still while it
# restarts, so the restart's own time does not count against the budget).
BUDGET = 4000


def episodes_of(worker: int, output: Path) -> int:
    """Finished episodes of ``worker`` in a run's progress.jsonl so far (a line being written is not counted)."""
    text = (output / "progress.jsonl").read_text()
    lines = text[: text.rfind("\n") + 1].splitlines()
    return sum(1 for line in lines if json.loads(line)["worker"] == worker)


def test_killing_an_env_worker_and_starting_it_again_still_completes(tmp_path: Path, spec_file: Any) -> None:
    spec = str(spec_file(run_mode="distributed", num_workers=2, total_timesteps=BUDGET, saver_frequency="1000t"))
    output = tmp_path / "out"
    ports = [free_port(), free_port()]
    learner_log = tmp_path / "learner.log"

    def env_worker(index: int, log_name: str) -> subprocess.Popen[str]:
        arguments = ("env-worker", "--spec", spec, "--port", str(ports[index]), "--host", "127.0.0.1")
        with (tmp_path / log_name).open("w") as log:
            return trainer_process(*arguments, token=TOKEN, stdout=subprocess.DEVNULL, stderr=log)

    def logged() -> str:
        return learner_log.read_text()

    workers = [env_worker(0, "worker-0.log"), env_worker(1, "worker-1.log")]
    addresses = ",".join(f"127.0.0.1:{port}" for port in ports)
    with learner_log.open("w") as log:
        learner = trainer_process(
            *("run", "--spec", spec, "--output", str(output), "--workers", addresses),
            token=TOKEN,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    started: list[subprocess.Popen[str]] = [*workers, learner]
    name = re.escape(f"env-worker 1 (127.0.0.1:{ports[1]})")
    try:
        progress_file = output / "progress.jsonl"
        wait_for(lambda: progress_file.is_file() and progress_file.stat().st_size > 0, learner)  # under way

        workers[1].send_signal(signal.SIGKILL)
        workers[1].wait(10)
        wait_for(lambda: re.search(rf"{name} lost: .*; reconnecting", logged()) is not None, learner, timeout=30)
        # Hold the run still while the worker restarts: with env-worker 0 stopped, the learner waits on its next
        # step (well within its 60 s io_timeout) and cannot use up the budget, however long the restart and the
        # reconnection backoff take. Its reconnection thread goes on meanwhile.
        workers[0].send_signal(signal.SIGSTOP)
        episodes_before = episodes_of(1, output)
        restarted = env_worker(1, "worker-1-restarted.log")
        started.append(restarted)
        # The handshake: the restarted worker has accepted the learner's reconnection.
        wait_for(lambda: "learner connected" in (tmp_path / "worker-1-restarted.log").read_text(), restarted, 40)
        assert learner.poll() is None and read_progress(output)[-1]["timesteps"] < BUDGET
        workers[0].send_signal(signal.SIGCONT)

        code, _ = finish(learner, timeout=60)
        log_text = logged()
        assert code == 0, log_text
        result = read_result(output)
        assert (result["status"], result["timesteps"]) == ("completed", BUDGET), log_text
        # The learner noticed the loss and took the restarted worker back, which then played whole episodes.
        lost = re.search(rf"{name} lost: ", log_text)
        assert lost is not None and re.search(rf"{name} connected", log_text[lost.end() :]), log_text
        progress = read_progress(output)
        assert episodes_of(1, output) > episodes_before
        assert result["episodes"] == len(progress)
        # Told to stop when the run completed: both workers exit 0, so their indexed Job completes too.
        assert [workers[0].wait(15), restarted.wait(15)] == [0, 0]
    finally:
        if workers[0].poll() is None:
            workers[0].send_signal(signal.SIGCONT)
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait(10)
