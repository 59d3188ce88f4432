"""Time to solve CartPole-v1: the bundled cartpole-ppo experiment beside stable-baselines3 PPO, in the same run.

Why: the README's main promise is that the quick-start experiment solves CartPole fast; the yardstick is what a
user would otherwise reach for, stable-baselines3's PPO with rl-zoo3's tuned CartPole-v1 settings.

"Solved" is the same rule on both sides (``bench.trainer_solve.solved_at``): the first 20 consecutive finished
episodes whose mean return is >= 475, episodes counted across all environments in the order they finish.

- cartpole-ppo: as ``tfcli experiment start -f cartpole-ppo --local`` runs it, i.e. the trainer process
  ``python -m trainer run --spec SPEC --output DIR`` with the experiment's resolved spec and the seed
  (``bench.trainer_solve.measure_solve``); the run is killed once ``progress.jsonl`` shows the solve (polled every
  50 ms).
- SB3: ``bench/sb3_child.py`` in a fresh process of its own virtual environment (``.bench/sb3``, made on first use:
  stable-baselines3 and torch are no dependencies of the project); learning stops at the solve.

Per seed and side: seconds from process start to the solve (the interpreter's start-up, the imports of
TensorFlow/TensorForce or torch/stable-baselines3 and the agent's construction included), seconds from the first
timestep to the solve (the trainer's ``wall_seconds``; SB3: from just before ``learn()``), timesteps at the solve,
and whether the run stays solved: one more run per seed and side to the end of its budget (100,000 timesteps
on both sides), judged by the lowest 20-episode mean from the solve on and the mean of the last 20 episodes
(``--skip-full`` leaves these runs out). The bundled experiment must reach 500 and stay there.

Fairness: both sides run on the same machine in the same run, one process at a time, seeds alternating sides;
neither side's thread count is set (TensorFlow's and torch's defaults; torch's is printed). The load average
is printed at the start and the end: other work on the machine slows both sides, but not alike: torch's default
(one thread per core) loses far more to a busy machine than one thread does, so compare on an idle machine, or
see the effect with ``--torch-threads 1``.

Run: ``uv run python -m bench.solve [--seeds 1,2,3] [--cap SECONDS] [--skip-full] [--torch-threads N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.report import read_progress
from bench.trainer_launch import EXPERIMENT, ROOT, experiment_data, launch, stop, trainer_environment, write_spec
from bench.trainer_solve import SOLVED_EPISODES, SOLVED_RETURN, measure_solve, median_or_none, seconds_text, solved_at

SB3_VENV = ROOT / ".bench" / "sb3"
# Exact versions of SB3's own environment; torch 2.13.0 is a CPU build. SB3 2.9.2 accepts gymnasium 1.4.0.
SB3_PINS = ("stable-baselines3==2.9.2", "torch==2.13.0", "gymnasium==1.4.0", "numpy==2.4.6")
OURS = EXPERIMENT
SB3 = "SB3 PPO"


# ---------------------------------------------------------------------------------------- SB3's environment


def sb3_python() -> Path:
    return SB3_VENV / "bin" / "python"


def ensure_sb3_environment() -> None:
    """Make ``.bench/sb3`` with the pinned packages unless it is there already (a marker file lists its pins)."""
    marker = SB3_VENV / "pins.txt"
    pins = "\n".join(SB3_PINS)
    if marker.exists() and marker.read_text() == pins and sb3_python().exists():
        return
    if SB3_VENV.exists():
        print(f"{SB3_VENV.relative_to(ROOT)} has other or unfinished pins: making it again", flush=True)
        shutil.rmtree(SB3_VENV)
    print(f"Preparing SB3's own environment (first use): {sys.executable} -m venv {SB3_VENV}", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(SB3_VENV)], check=True)
    print(f"Installing {' '.join(SB3_PINS)} into it (a few minutes)", flush=True)
    subprocess.run([str(sb3_python()), "-m", "pip", "install", "--progress-bar", "off", *SB3_PINS], check=True)
    marker.write_text(pins)
    print("SB3's environment is ready", flush=True)


# ------------------------------------------------------------------------------------------------ the runs


@dataclass(frozen=True)
class Run:
    """One run of one side: the solve (None: not solved) and, for a run to the budget, every finished episode."""

    side: str
    seed: int
    from_start: float | None
    from_first_timestep: float | None
    timesteps: int | None  # at the solve
    episodes: list[dict[str, Any]]
    reached_budget: bool = False
    details: dict[str, Any] = field(default_factory=dict)  # SB3: torch's thread count and the versions used


def ours_solve(seed: int, cap: float) -> Run:
    solve = measure_solve(seed, cap)
    timesteps = solve.timesteps if solve.from_start is not None else None
    return Run(OURS, seed, solve.from_start, solve.from_first_timestep, timesteps, [])


def ours_full(seed: int, cap: float) -> Run:
    """The bundled experiment to the end of its budget (``cap`` seconds at most); its episodes from progress.jsonl."""
    with tempfile.TemporaryDirectory(prefix="bench-solve-full-") as folder:
        root = Path(folder)
        learner, workers = launch(write_spec(root, seed=seed), root / "out", trainer_environment())
        try:
            learner.wait(timeout=cap)
            reached = learner.returncode == 0
        except subprocess.TimeoutExpired:
            learner.kill()
            learner.wait()
            reached = False
        finally:
            stop(workers)
        lines = read_progress(root / "out")
    return Run(OURS, seed, None, None, None, lines, reached)


def sb3_command(seed: int, full: bool, threads: int | None, started: float) -> list[str]:
    command = [str(sb3_python()), "-m", "bench.sb3_child", "--seed", str(seed), "--started", repr(started)]
    return command + (["--full"] if full else []) + ([] if threads is None else ["--threads", str(threads)])


def sb3_run(seed: int, cap: float, full: bool, threads: int | None) -> Run:
    """``bench.sb3_child`` in a fresh process; its clock starts here, just before the process is started."""
    started = time.monotonic()
    try:
        done = subprocess.run(sb3_command(seed, full, threads, started), cwd=ROOT, capture_output=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return Run(SB3, seed, None, None, None, [])
    if done.returncode != 0:
        raise RuntimeError(f"the SB3 run exited with {done.returncode}: {done.stderr.decode()[-2000:]}")
    data = json.loads(done.stdout.decode().strip().splitlines()[-1])
    solve = data["solve"] or {}
    return Run(
        SB3,
        seed,
        solve.get("from_start"),
        solve.get("from_first_timestep"),
        solve.get("timesteps"),
        data["episodes"],
        reached_budget=full and data["timesteps"] >= data["budget"],
        details={"threads": data["threads"], "versions": data["versions"]},
    )


# ------------------------------------------------------------------------------------------ staying solved


def window_means(episodes: list[dict[str, Any]]) -> list[float]:
    """The mean return of every SOLVED_EPISODES consecutive episodes, by the window's last episode."""
    returns = [episode["return"] for episode in episodes]
    return [statistics.fmean(returns[end - SOLVED_EPISODES : end]) for end in range(SOLVED_EPISODES, len(returns) + 1)]


def stays_solved(full: Run | None) -> tuple[bool | None, str]:
    """Whether the run to the budget stays >= SOLVED_RETURN from its solve to its end, and the numbers that say so."""
    if full is None:
        return None, "-"
    means = window_means(full.episodes)
    last = f"last {SOLVED_EPISODES} {means[-1]:.1f}" if means else "no episodes"
    capped = "" if full.reached_budget else ", budget NOT reached (cap)"
    found = solved_at(full.episodes)
    if found is None:
        return False, f"never solved ({last}{capped})"
    solved_episode = next(index for index, episode in enumerate(full.episodes) if episode is found)
    lowest = min(means[solved_episode + 1 - SOLVED_EPISODES :])  # the solving window and every later one
    ok = lowest >= SOLVED_RETURN and full.reached_budget
    return ok, f"{'yes' if ok else 'NO'} (min after solve {lowest:.1f}, {last}{capped})"


# ------------------------------------------------------------------------------------------------ the table


def row(label: str, run: Run, stays: str) -> list[str]:
    timesteps = "-" if run.timesteps is None else f"{run.timesteps:,}"
    return [label, run.side, seconds_text(run.from_start), seconds_text(run.from_first_timestep), timesteps, stays]


def median_row(side: str, solves: list[Run], verdicts: list[bool | None]) -> list[str]:
    timesteps = median_or_none([None if run.timesteps is None else float(run.timesteps) for run in solves])
    judged = [verdict for verdict in verdicts if verdict is not None]
    stays = f"{sum(judged)}/{len(judged)} seeds" if judged else "-"
    return [
        "median",
        side,
        seconds_text(median_or_none([run.from_start for run in solves])),
        seconds_text(median_or_none([run.from_first_timestep for run in solves])),
        "-" if timesteps is None else f"{timesteps:,.0f}",
        stays,
    ]


def print_table(rows: list[list[str]]) -> None:
    header = ["seed", "side", "from process start (s)", "from first timestep (s)", "timesteps at solve", "stays solved"]
    widths = [max(len(line[column]) for line in [header, *rows]) for column in range(len(header))]
    for line in [header, *rows]:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [line[column].rjust(widths[column]) for column in range(2, 5)]
        print("  ".join([*cells, line[5]]).rstrip())


def ratio_line(ours: list[Run], theirs: list[Run]) -> str:
    mine = median_or_none([run.from_first_timestep for run in ours])
    yours = median_or_none([run.from_first_timestep for run in theirs])
    value = "-" if mine is None or yours is None else f"{mine / yours:.2f}x"
    return f"{OURS} / SB3 (median, from first timestep): {value} (goal <= 1.00x)"


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# ------------------------------------------------------------------------------------------------------ main


def measure_seed(seed: int, cap: float, full: bool, threads: int | None) -> tuple[Run, Run, Run | None, Run | None]:
    """Both sides' solve runs, then (unless skipped) both sides' runs to the budget, one process at a time."""
    ours = ours_solve(seed, cap)
    print(f"  seed {seed}: {OURS} solve run done", file=sys.stderr, flush=True)
    theirs = sb3_run(seed, cap, full=False, threads=threads)
    print(f"  seed {seed}: {SB3} solve run done", file=sys.stderr, flush=True)
    if not full:
        return ours, theirs, None, None
    ours_budget = ours_full(seed, cap)
    print(f"  seed {seed}: {OURS} run to the budget done", file=sys.stderr, flush=True)
    theirs_budget = sb3_run(seed, cap, full=True, threads=threads)
    print(f"  seed {seed}: {SB3} run to the budget done", file=sys.stderr, flush=True)
    return ours, theirs, ours_budget, theirs_budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1,2,3", help="comma-separated seeds, one row per seed and side")
    parser.add_argument("--cap", type=float, default=180.0, help="seconds per run before it counts as not solved")
    parser.add_argument("--skip-full", action="store_true", help="leave out the runs to the end of the budget")
    parser.add_argument("--torch-threads", type=int, help="SB3's torch thread count (default: torch's own)")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",") if seed.strip()]

    ensure_sb3_environment()
    bundled = experiment_data()
    print(
        f"{EXPERIMENT} ({bundled['run_mode']}, {bundled['num_workers']} environments, "
        f"{bundled['total_timesteps']:,} timesteps) vs {SB3} (rl-zoo3 CartPole-v1: 8 envs, 100,000 timesteps); "
        f"seeds {','.join(map(str, seeds))}; {os.cpu_count()} CPUs; load average at the start {load_average()}",
        flush=True,
    )
    rows: list[list[str]] = []
    results = [measure_seed(seed, args.cap, not args.skip_full, args.torch_threads) for seed in seeds]
    verdicts: dict[str, list[bool | None]] = {OURS: [], SB3: []}
    for ours, theirs, ours_budget, theirs_budget in results:
        for solve, budget in ((ours, ours_budget), (theirs, theirs_budget)):
            verdict, stays = stays_solved(budget)
            verdicts[solve.side].append(verdict)
            rows.append(row(str(solve.seed), solve, stays))
    solves = {OURS: [result[0] for result in results], SB3: [result[1] for result in results]}
    rows += [median_row(side, solves[side], verdicts[side]) for side in (OURS, SB3)]
    print_table(rows)
    print(ratio_line(solves[OURS], solves[SB3]))
    details = next((run.details for run in solves[SB3] if run.details), {})
    print_notes(args.cap, not args.skip_full, details, args.torch_threads is not None)


def print_notes(cap: float, full: bool, details: dict[str, Any], threads_set: bool) -> None:
    threads = details.get("threads", "its default number of")  # an SB3 run that hit the cap reports nothing
    torch_threads = f"{threads} threads{', set by --torch-threads' if threads_set else ''}"
    versions = ", ".join(f"{name} {version}" for name, version in details.get("versions", {}).items())
    versions = versions or ", ".join(SB3_PINS)
    print(
        f"Solved: mean return >= {SOLVED_RETURN:.0f} over {SOLVED_EPISODES} consecutive finished episodes (all "
        f"environments, finishing order), same rule both sides; '-': not solved within the {cap:.0f} s cap."
    )
    print(
        "Fairness: same machine, same run, one process at a time, sides alternating per seed; TensorFlow's thread "
        f"counts left at their defaults, torch: {torch_threads}; {versions}."
    )
    if full:
        print(
            "Stays solved: a second run per seed to the end of its budget (100,000 timesteps both sides): the "
            f"lowest {SOLVED_EPISODES}-episode mean from the solve on must stay >= {SOLVED_RETURN:.0f}."
        )
    print(f"Load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
