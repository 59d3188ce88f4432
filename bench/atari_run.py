"""One ``tfcli experiment start --local`` of ``bench.atari``, as a user runs it, timed and sampled.

``tfcli`` runs the CLI in the throw-away project; ``new_experiment`` makes an experiment from the bundled
space-invaders-dqn; ``start_and_wait`` starts it and waits for the local supervisor, its env-workers and the
trainer, sampling the peak resident memory of the run's processes and the load average every ``POLL_SECONDS``
(optionally pausing it after some minutes and reporting its progress every ``REPORT_SECONDS``). ``Run`` holds what
was measured and reads the experiment's spec, result.json and progress.jsonl.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.processes import descendants, memory_available, rss_bytes
from bench.report import read_progress
from trainer.result_file import read_result

EXPERIMENT = "space-invaders-dqn"
POLL_SECONDS = 2.0
REPORT_SECONDS = 300.0


def tfcli(project: Path, *arguments: str, log: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """``tfcli ARGUMENTS`` in ``project``, as a user types it (the console script is ``python -m tfcli``)."""
    done = subprocess.run([sys.executable, "-m", "tfcli", *arguments], cwd=project, capture_output=True)
    if log is not None:
        with log.open("ab") as file:
            file.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"tfcli {' '.join(arguments)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return done


@dataclass
class Run:
    """One ``tfcli experiment start --local`` to its end."""

    name: str
    project: Path
    timesteps: int
    exit_code: int = 0
    seconds: float = 0.0
    peak_rss_total: int = 0
    peak_rss_largest: int = 0
    loads: list[float] = field(default_factory=list)
    paused_by_limit: bool = False

    @property
    def folder(self) -> Path:
        return self.project / "experiments" / self.name

    @property
    def results(self) -> Path:
        return self.folder / "results"

    def result(self) -> dict[str, Any]:
        return read_result(self.results)

    def spec(self) -> dict[str, Any]:
        data: dict[str, Any] = yaml.safe_load((self.folder / "experiment.yaml").read_text())
        return data

    def progress(self) -> list[dict[str, Any]]:
        return read_progress(self.results)


def start_and_wait(run: Run, *, minutes: float | None = None, report: bool = False) -> Run:
    """``tfcli experiment start -e NAME --local``, timed from launch to exit; memory and load sampled meanwhile."""
    logs = run.project / "bench-logs"
    logs.mkdir(exist_ok=True)
    with (logs / f"{run.name}.log").open("ab") as log:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "tfcli", "experiment", "start", "-e", run.name, "--local"],
            cwd=run.project,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        reported = started
        try:
            while process.poll() is None:
                sizes = [rss_bytes(pid) for pid in descendants(process.pid)]
                run.peak_rss_total = max(run.peak_rss_total, sum(sizes))
                run.peak_rss_largest = max(run.peak_rss_largest, max(sizes, default=0))
                run.loads.append(os.getloadavg()[0])
                now = time.monotonic()
                if minutes is not None and not run.paused_by_limit and now - started > minutes * 60:
                    print(f"  {run.name}: {minutes:g} minutes passed; pausing it", file=sys.stderr, flush=True)
                    run.paused_by_limit = True
                    tfcli(run.project, "experiment", "pause", "-e", run.name, log=logs / f"{run.name}.log")
                if report and now - reported >= REPORT_SECONDS:
                    reported = now
                    lines = run.progress()
                    last = lines[-1] if lines else {}
                    recent = [line["return"] for line in lines[-100:]]
                    print(
                        f"  {run.name}: {now - started:,.0f} s, {last.get('timesteps', 0):,} timesteps, "
                        f"{len(lines)} episodes, mean return (last {len(recent)}) "
                        f"{sum(recent) / max(len(recent), 1):.1f}, RSS {sum(sizes) / 2**30:.2f} GiB, "
                        f"load {os.getloadavg()[0]:.2f}, available {memory_available() / 2**30:.1f} GiB",
                        file=sys.stderr,
                        flush=True,
                    )
                time.sleep(POLL_SECONDS)
        finally:
            if process.poll() is None:  # the bench itself is being stopped: the detached run must stop too
                subprocess.run(
                    [sys.executable, "-m", "tfcli", "experiment", "pause", "-e", run.name],
                    cwd=run.project,
                    capture_output=True,
                )
                process.wait()
        run.seconds = time.monotonic() - started
        run.exit_code = process.returncode
    return run


def new_experiment(project: Path, name: str, timesteps: int, seed: int, extra: list[str], agent: str | None) -> None:
    arguments = ["experiment", "new", "-f", EXPERIMENT, "-n", name, "--total-timesteps", str(timesteps)]
    if agent:
        arguments += ["--agent", agent]
    tfcli(project, *arguments, "--seed", str(seed), *extra)
