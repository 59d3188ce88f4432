"""Start-up: ``tfcli experiment start -f <200-step PPO CartPole> --local`` next to ``python -c "import tensorflow,
tensorforce"``, whole processes, alternating (A B A B ...) so that a machine whose speed drifts slows both alike.

The anchor is what any TensorForce program pays before it does anything; everything above it is tfcli's: the CLI
process, the supervisor, the trainer's own imports, the agent's graph build, the checkpoints, summaries, the
learning-curve plot and HParams. Goal (issue 30): at most 1.35x. The ratio is taken pair by pair and the median
quoted. Run: ``uv run python -m bench.startup [--runs 5] [--timesteps 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

GOAL = 1.35
IMPORTS = [sys.executable, "-c", "import tensorflow, tensorforce"]
SPEC = """\
name: startup
environment: cartpole
agent: ppo
total_timesteps: {timesteps}
"""


def seconds(command: Sequence[str], cwd: Path) -> float:
    """Wall seconds of one whole process, which must succeed."""
    start = time.perf_counter()
    subprocess.run(list(command), cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def paired(first: Sequence[str], anchor: Sequence[str], cwd: Path, runs: int) -> tuple[list[float], list[float]]:
    """``runs`` pairs, each command run once per pair, after one warm-up of each (the OS file cache)."""
    seconds(first, cwd)
    seconds(anchor, cwd)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(seconds(first, cwd))
        theirs.append(seconds(anchor, cwd))
    return ours, theirs


def row(name: str, ours: list[float], theirs: list[float], goal: str) -> str:
    ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
    return f"{name:<44} {statistics.median(ours):>9.2f} {statistics.median(theirs):>9.2f} {ratio:>7.2f}x {goal:>7}"


HEADER = f"{'measure':<44} {'ours s':>9} {'anchor s':>9} {'ratio':>8} {'goal':>7}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timesteps", type=int, default=200)
    args = parser.parse_args()
    tfcli = [sys.executable, "-m", "tfcli"]
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "lab"
        subprocess.run([*tfcli, "init", str(project)], check=True, capture_output=True)
        (project / "startup.yaml").write_text(SPEC.format(timesteps=args.timesteps))
        start = [*tfcli, "experiment", "start", "-f", "startup.yaml", "--local", "--restart"]
        ours, theirs = paired(start, IMPORTS, project, args.runs)
    print(HEADER)
    print(row(f"experiment start, {args.timesteps}-step PPO CartPole", ours, theirs, f"<={GOAL}x"))
    print(f"anchor: {' '.join(IMPORTS[1:])}; {args.runs} pairs, medians")


if __name__ == "__main__":
    main()
