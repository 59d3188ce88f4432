"""Start-up: ``tfcli experiment start -f <200-step PPO CartPole> --local`` next to ``python -c "import tensorflow,
tensorforce"``, whole processes, alternating (A B A B ...) so that a machine whose speed drifts slows both alike.

Two rows: a start whose trainer starts fresh (``TFCLI_WARM_TRAINER=off``: a first run, or one more than
``TFCLI_WARM_IDLE_SECONDS`` after the last), and a start that follows another run, whose trainer the standing warm
trainer that run left forks (docs/reference.md, "A warm trainer between local runs"; its own runtime folder here).

The anchor is what any TensorForce program pays before it does anything; everything above it is tfcli's: the CLI
process, the supervisor, the trainer's own imports, the agent's graph build, the checkpoints, summaries, the
learning-curve plot and HParams. Goal (issue 30): at most 1.35x. The ratio is taken pair by pair and the median
quoted. Run: ``uv run python -m bench.startup [--runs 5] [--timesteps 200]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tfcli.local.standing import end_standing

GOAL = 1.35
IMPORTS = [sys.executable, "-c", "import tensorflow, tensorforce"]
SPEC = """\
name: startup
environment: cartpole
agent: ppo
total_timesteps: {timesteps}
"""


def start_in_lab(folder: Path, timesteps: int) -> tuple[list[str], Path, dict[str, str]]:
    """A tfcli project in ``folder`` with the ``timesteps``-step spec, and the start command, its folder and its
    environment (a runtime folder of its own for the standing warm trainer; end it with ``end_standing``)."""
    tfcli = [sys.executable, "-m", "tfcli"]
    project, runtime = folder / "lab", folder / "run"
    runtime.mkdir(mode=0o700)
    subprocess.run([*tfcli, "init", str(project)], check=True, capture_output=True)
    (project / "startup.yaml").write_text(SPEC.format(timesteps=timesteps))
    start = [*tfcli, "experiment", "start", "-f", "startup.yaml", "--local", "--restart"]
    return start, project, dict(os.environ, XDG_RUNTIME_DIR=str(runtime), TFCLI_WARM_IDLE_SECONDS="600")


def seconds(command: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall seconds of one whole process, which must succeed."""
    start = time.perf_counter()
    subprocess.run(list(command), cwd=cwd, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def paired(
    first: Sequence[str], anchor: Sequence[str], cwd: Path, runs: int, env: dict[str, str]
) -> tuple[list[float], list[float]]:
    """``runs`` pairs, each command run once per pair, after one warm-up of each (the OS file cache; the standing
    warm trainer, which the pairs start only once it serves)."""
    seconds(first, cwd, env)
    wait_for_standing_trainer(env)
    seconds(anchor, cwd, env)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(seconds(first, cwd, env))
        theirs.append(seconds(anchor, cwd, env))
    return ours, theirs


def wait_for_standing_trainer(env: dict[str, str], timeout: float = 120.0) -> None:
    """Until the standing warm trainer of ``env``'s runtime folder listens (none there: at once)."""
    deadline = time.monotonic() + timeout
    folders = Path(env["XDG_RUNTIME_DIR"]).glob("tfcli-warm-*")
    for folder in folders:
        while not (folder / "zygote.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.1)


def row(name: str, ours: list[float], theirs: list[float], goal: str) -> str:
    ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
    return f"{name:<44} {statistics.median(ours):>9.2f} {statistics.median(theirs):>9.2f} {ratio:>7.2f}x {goal:>7}"


HEADER = f"{'measure':<44} {'ours s':>9} {'anchor s':>9} {'ratio':>8} {'goal':>7}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timesteps", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        start, project, env = start_in_lab(Path(folder), args.timesteps)
        fresh = paired(start, IMPORTS, project, args.runs, dict(env, TFCLI_WARM_TRAINER="off"))
        try:
            warm = paired(start, IMPORTS, project, args.runs, env)
        finally:
            end_standing(Path(env["XDG_RUNTIME_DIR"]))
    print(HEADER)
    print(row(f"start, {args.timesteps}-step PPO CartPole, fresh", *fresh, f"<={GOAL}x"))
    print(row(f"start, {args.timesteps}-step PPO CartPole, after a run", *warm, f"<={GOAL}x"))
    print(f"anchor: {' '.join(IMPORTS[1:])}; {args.runs} pairs per row, medians; fresh: TFCLI_WARM_TRAINER=off;")
    print("after a run: its trainer forked by the standing warm trainer the run before left")


if __name__ == "__main__":
    main()
