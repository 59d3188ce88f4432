"""Warm sweep trials: a local sweep of 9 short PPO CartPole trials (3 learning rates x 3 seeds, 1,500 timesteps,
``--parallel 1``) next to the same 9 trials started one by one with ``tfcli experiment start -f ... --local``.

Each of the 9 lone starts pays a fresh trainer's imports (TensorFlow, TensorForce: ~4.5 s of a 2-core machine);
the sweep's queue imports them once, in its warm trainer, and forks each trial's trainer from it
(``tfcli/local/zygote.py``); a core being left idle at ``--parallel 1``, it starts each next trial ahead of its
turn, so that its agent's build and graph tracing overlap the trial before (``tfcli/local/ahead.py``). Both sides
train the same specs, seeds included, from an empty project; the sweep is created beforehand (``--no-build``), so
both sides time starting and training only. Pairs alternate (sweep, then lone starts) and the ratio is taken pair
by pair. Goal (issue 30): at most 0.75x. The anchor's starts are fresh
(``TFCLI_WARM_TRAINER=off``); a second row times the same lone starts one after another as a user makes them, where
every start after the first forks its trainer from the standing warm trainer the one before left
(docs/reference.md, "A warm trainer between local runs").
Run: ``uv run python -m bench.warm_sweep [--runs 1] [--timesteps 1500]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from bench.startup import HEADER, row
from tfcli.local.standing import end_standing

GOAL = 0.75
RATES = (1e-3, 3e-3, 1e-2)
SEEDS = (1, 2, 3)
BASE = """\
  environment: cartpole
  agent: {{agent: ppo, batch_size: 4, learning_rate: {rate}}}
  total_timesteps: {timesteps}
"""


def sweep_file(timesteps: int) -> str:
    base = BASE.format(rate=RATES[0], timesteps=timesteps)
    rates = ", ".join(f"{rate:g}" for rate in RATES)
    return f"name: warm\nbase:\n  name: warm\n{base}axes:\n  agent.learning_rate: [{rates}]\nseeds: {len(SEEDS)}\n"


def lone_specs(timesteps: int) -> list[str]:
    """The sweep's trials as experiment specs of their own (the sweep numbers its seeds 1..K)."""
    return [
        f"name: lone-{index}\nseed: {seed}\n" + textwrap.dedent(BASE.format(rate=rate, timesteps=timesteps))
        for index, (rate, seed) in enumerate((rate, seed) for rate in RATES for seed in SEEDS)
    ]


def write_lone_specs(folder: Path, timesteps: int) -> list[Path]:
    """The 9 lone specs written into ``folder`` as ``lone-<k>.yaml``; their paths, in trial order."""
    paths = []
    for index, text in enumerate(lone_specs(timesteps)):
        paths.append(folder / f"lone-{index}.yaml")
        paths[-1].write_text(text)
    return paths


def project(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "tfcli", "init", str(folder)], check=True, capture_output=True)
    return folder


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return time.perf_counter() - start


def lone_starts(folder: Path, timesteps: int, env: dict[str, str]) -> float:
    """The 9 trials started one by one in a new project: their seconds in all."""
    tfcli = [sys.executable, "-m", "tfcli"]
    lone = project(folder)
    total = 0.0
    for spec in write_lone_specs(lone, timesteps):
        total += run([*tfcli, "experiment", "start", "-f", spec.name, "--local"], lone, env)
    return total


def one_pair(root: Path, timesteps: int) -> tuple[float, float, float]:
    tfcli = [sys.executable, "-m", "tfcli"]
    swept = project(root / "swept")
    (swept / "warm.yaml").write_text(sweep_file(timesteps))
    subprocess.run([*tfcli, "experiment", "sweep", "-f", "warm.yaml", "--no-build"], cwd=swept, check=True)
    sweep = run([*tfcli, "experiment", "start", "-s", "warm", "--local", "--parallel", "1"], swept)
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), TFCLI_WARM_IDLE_SECONDS="600")
    fresh = lone_starts(root / "fresh", timesteps, dict(env, TFCLI_WARM_TRAINER="off"))
    try:
        warm = lone_starts(root / "lone", timesteps, env)
    finally:
        end_standing(runtime)
    return sweep, fresh, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timesteps", type=int, default=1500)
    args = parser.parse_args()
    ours, theirs, warm = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            pair = one_pair(Path(folder), args.timesteps)
        ours.append(pair[0])
        theirs.append(pair[1])
        warm.append(pair[2])
    print(HEADER)
    print(row(f"sweep of 9 x {args.timesteps} steps, --parallel 1", ours, theirs, f"<={GOAL}x"))
    print(row("the 9 started one after another, warm", warm, theirs, "-"))
    print("anchor: the same 9 trials, each `experiment start -f ... --local` with TFCLI_WARM_TRAINER=off;")
    print(f"warm: the same, the standing warm trainer on; {args.runs} pair(s), medians")


if __name__ == "__main__":
    main()
