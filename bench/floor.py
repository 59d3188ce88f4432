"""Issue 30's unmet rows beside what TensorForce 0.6.5 alone costs for the same work: the best ratio a tool on it
can reach.

Each row is one piece of work, measured three ways in the same run, whole processes, the three in turn (the order
rotating from run to run, so that a busy moment of the machine falls on each):

- **anchor**: what issue 30 measures against (``import tensorflow, tensorforce``; TensorForce's ``Runner``;
  stable-baselines3 PPO);
- **ours**: tfcli doing it as a user runs it (``bench.startup``'s lone start, ``bench.trainer``'s trainer,
  ``bench.solve``'s solve);
- **bare TensorForce** (``bench.floor_child``): the same agent built as the trainer builds it, driven by the
  plainest loop there is, with nothing else: no CLI, supervisor, progress log, summaries, checkpoint, curve or
  teardown. Whatever a tool on TensorForce adds, it adds to this; so its ratio to the anchor is the best one any
  tool on TensorForce 0.6.5 can reach for that work on this machine, and where it misses the goal, the goal is out
  of reach of any code of tfcli's.

The rows:

- start-up: ``experiment start -f <200-step PPO CartPole> --local``, fresh trainer (``TFCLI_WARM_TRAINER=off``);
  bare: 200 timesteps, one environment. Goal: at most 1.35x the import.
- (a) single, (b) multi-threaded with 4 environments, (c) distributed with 4 env-workers: cartpole-ppo for
  ``--budget`` timesteps beside the Runner in the matching mode (``bench.trainer``'s cases); bare: one environment
  for (a), 4 environments in one batched call for (b) and (c) (for (c) that is the learner with no transport at
  all, which a distributed run can only approach). Goals: the Runner takes at least 1.5x, 1.5x and 6x as long.
- sweep: ``bench.warm_sweep``'s 9 PPO CartPole trials of 1,500 timesteps, a local sweep with ``--parallel 1``
  beside the same 9 started fresh one by one (``experiment start -f ... --local``, ``TFCLI_WARM_TRAINER=off``);
  bare: the 9 specs in turn, each in a process forked from one that imported everything once (``--trials``), as
  the sweep's warm trainer forks them. Goal: at most 0.75x the lone starts.
- solve: cartpole-ppo until the mean return of 20 episodes reaches 475, beside SB3 PPO (rl-zoo3's settings),
  seconds from process start; bare: cartpole-ppo's agent and 16 environments until the same solve. The floor of
  this row is the bundled hyperparameters'; another agent could solve in fewer timesteps, so the line under the
  table also gives what no hyperparameters change: bare TensorForce's seconds to its first episode's end (the
  imports, the agent build and TensorForce's tracing of act, observe and update, paid before any learning), and the
  timesteps each side solved at. Solving needs 20 episodes averaging 475 steps after that, 9,500 timesteps at least.
  Goal: at most 0.6x SB3's time.

Wall seconds and CPU seconds (user + sys of every process of the run, the kernel's count for waited-for children)
are both printed, with their ratios: on a shared machine the wall time of one run moves by up to 2x, its CPU seconds
much less. A row is "reachable" unless bare TensorForce misses the goal by both (by wall time alone where CPU
seconds do not compare: SB3 and the sweep).

Run: ``uv run python -m bench.floor [--runs 3] [--budget 10000] [--rows startup,a,b,c,sweep,solve]`` (about 6 minutes a
run on a 2-core machine). SB3's row makes ``.bench/sb3`` on first use, as ``bench.solve`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.report import print_table
from bench.startup import IMPORTS, seconds, start_in_lab
from bench.trainer_launch import EXPERIMENT, ROOT, trainer_environment
from bench.trainer_measure import children_cpu, measure_trainer
from bench.trainer_peer import measure_runner
from tfcli.local.standing import end_standing

ENVIRONMENTS = 4
SOLVE_ENVIRONMENTS = 16  # cartpole-ppo's num_workers
SIDES = ("anchor", "ours", "bare")


@dataclass(frozen=True)
class Sample:
    """One whole run of one side: wall seconds, CPU seconds, and what the side reports (timesteps at the solve,
    bare TensorForce's seconds to its first episode's end)."""

    seconds: float
    cpu: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Row:
    """One piece of work measured three ways. ``anchor_over``: the ratio is the anchor's time over ours (the Runner
    rows: higher is better), else ours over the anchor's (lower is better)."""

    key: str
    label: str
    anchor_label: str
    goal: float
    anchor_over: bool
    measure: dict[str, Callable[[], Sample]]
    # False where the CPU seconds do not compare: SB3's torch spins a thread per core; a sweep's trials run in a
    # session of their own, not waited for by this process, so the kernel bills their CPU to nobody here
    cpu_judged: bool = True
    samples: dict[str, list[Sample]] = field(default_factory=lambda: {side: [] for side in SIDES})

    def ratio(self, side: str, figure: str = "seconds") -> float:
        pairs = zip(self.samples[side], self.samples["anchor"], strict=True)
        ratios = [(getattr(anchor, figure), getattr(own, figure)) for own, anchor in pairs]
        return statistics.median(a / o if self.anchor_over else o / a for a, o in ratios)

    def meets(self, side: str, figure: str = "seconds") -> bool:
        ratio = self.ratio(side, figure)
        return ratio >= self.goal if self.anchor_over else ratio <= self.goal

    def reached(self, side: str) -> bool:
        """Whether ``side`` meets the goal by wall time, or by CPU time where the CPU is comparable."""
        return self.meets(side) or (self.cpu_judged and self.meets(side, "cpu"))

    def median(self, side: str, figure: str = "seconds") -> float:
        return statistics.median(getattr(sample, figure) for sample in self.samples[side])

    def cells(self) -> list[str]:
        def both(side: str) -> str:
            miss = "" if self.reached(side) else " (miss)"
            cpu = f"{self.ratio(side, 'cpu'):.2f}x" if self.cpu_judged else "-"
            return f"{self.ratio(side):.2f}x / {cpu}{miss}"

        figures = [f"{self.median(side):.1f} / {self.median(side, 'cpu'):.1f}" for side in SIDES]
        reachable = "yes" if self.reached("bare") else "no"
        goal = f"{'>=' if self.anchor_over else '<='} {self.goal:g}x"
        return [self.label, self.anchor_label, *figures, both("ours"), both("bare"), goal, reachable]


def run_whole(command: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds of one whole process, which must succeed, and what it printed on stdout."""
    started = time.monotonic()
    done = subprocess.run(list(command), cwd=cwd, env=env, capture_output=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}: {done.stderr.decode()[-2000:]}")
    return wall, done.stdout.decode()


def bare(environments: int, budget: int, seed: int, until: str = "budget") -> Sample:
    """``bench.floor_child`` in a fresh process, start to exit; ``traced``: seconds from the process start to its
    first episode's end (the loop's remaining time taken off the whole)."""
    command = [sys.executable, "-m", "bench.floor_child", "--experiment", EXPERIMENT, "--seed", str(seed)]
    command += ["--environments", str(environments), "--budget", str(budget), "--until", until]
    wall, printed = run_whole(command, ROOT, trainer_environment())
    report = json.loads(printed.strip().splitlines()[-1])
    traced = None if report["traced"] is None else wall - (report["ended"] - report["traced"])
    return Sample(wall, details={"traced": traced, "timesteps": report["solved_at"]})


def solved(seconds: float | None, timesteps: int | None, side: str) -> Sample:
    if seconds is None:
        raise RuntimeError(f"{side} did not solve CartPole within the cap")
    return Sample(seconds, details={"timesteps": timesteps})


def sweep_sides(timesteps: int) -> dict[str, Callable[[], Sample]]:
    """``bench.warm_sweep``'s pair (its 9 trials started fresh one by one; the sweep, ``--parallel 1``) and bare
    TensorForce's: the same 9 specs forked in turn from one process that imported everything once."""
    from bench.warm_sweep import lone_starts, project, run, sweep_file, write_lone_specs

    tfcli = [sys.executable, "-m", "tfcli"]

    def anchor() -> Sample:
        with tempfile.TemporaryDirectory() as folder:
            runtime = Path(folder) / "run"
            runtime.mkdir(mode=0o700)
            fresh = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), TFCLI_WARM_TRAINER="off")
            return Sample(lone_starts(Path(folder) / "lone", timesteps, fresh))

    def ours() -> Sample:
        with tempfile.TemporaryDirectory() as folder:
            swept = project(Path(folder) / "swept")
            (swept / "warm.yaml").write_text(sweep_file(timesteps))
            run([*tfcli, "experiment", "sweep", "-f", "warm.yaml", "--no-build"], swept)
            return Sample(run([*tfcli, "experiment", "start", "-s", "warm", "--local", "--parallel", "1"], swept))

    def bare_sweep() -> Sample:
        with tempfile.TemporaryDirectory() as folder:
            specs = write_lone_specs(Path(folder), timesteps)
            command = [sys.executable, "-m", "bench.floor_child", "--trials", *map(str, specs)]
            return Sample(seconds(command, ROOT, trainer_environment()))

    return {"anchor": anchor, "ours": ours, "bare": bare_sweep}


def rows(wanted: set[str], budget: int, seed: int, lab: tuple[list[str], Path, dict[str, str]]) -> list[Row]:
    from bench.solve import sb3_run
    from bench.trainer_solve import measure_solve

    start, project, env = lab
    mt = {"run_mode": "multi-threaded", "num_workers": ENVIRONMENTS}
    distributed = {"run_mode": "distributed", "num_workers": ENVIRONMENTS}

    def trainer(overrides: dict[str, object]) -> Callable[[], Sample]:
        return lambda: Sample(measure_trainer(EXPERIMENT, overrides, budget, seed).seconds)

    def runner(mode: str, environments: int) -> Callable[[], Sample]:
        return lambda: Sample(measure_runner(EXPERIMENT, mode, environments, budget, seed).seconds)

    def sb3() -> Sample:
        run = sb3_run(seed, 300.0, full=False, threads=None)
        return solved(run.from_start, run.timesteps, "SB3")

    def ours_solve() -> Sample:
        solve = measure_solve(seed, 300.0)
        return solved(solve.from_start, solve.timesteps, EXPERIMENT)

    every = [
        Row("startup", "start-up, 200-step PPO CartPole, fresh", "import tf, tensorforce", 1.35, False, {
            "anchor": lambda: Sample(seconds(IMPORTS, ROOT, dict(os.environ))),
            "ours": lambda: Sample(seconds(start, project, dict(env, TFCLI_WARM_TRAINER="off"))),
            "bare": lambda: bare(1, 200, seed),
        }),
        Row("a", f"(a) single, {budget:,} timesteps", "Runner", 1.5, True, {
            "anchor": runner("single", 1),
            "ours": trainer({"run_mode": "single"}),
            "bare": lambda: bare(1, budget, seed),
        }),
        Row("b", f"(b) multi-threaded, {ENVIRONMENTS} envs", "Runner, batched", 1.5, True, {
            "anchor": runner("parallel", ENVIRONMENTS),
            "ours": trainer(mt),
            "bare": lambda: bare(ENVIRONMENTS, budget, seed),
        }),
        Row("c", f"(c) distributed, {ENVIRONMENTS} env-workers", "Runner, processes", 6.0, True, {
            "anchor": runner("multiprocessing", ENVIRONMENTS),
            "ours": trainer(distributed),
            "bare": lambda: bare(ENVIRONMENTS, budget, seed),  # in-process: no transport at all
        }),
        Row("sweep", "sweep of 9 x 1,500 timesteps", "9 lone starts", 0.75, False, sweep_sides(1_500), False),
        Row("solve", "solve CartPole", "SB3 PPO", 0.6, False, {
            "anchor": sb3,
            "ours": ours_solve,
            "bare": lambda: bare(SOLVE_ENVIRONMENTS, 10**9, seed, until="solved"),
        }, cpu_judged=False),
    ]  # fmt: skip
    return [row for row in every if row.key in wanted]


def measure(table: list[Row], runs: int) -> None:
    """Each row's three sides in turn, the order rotating from run to run; one warm-up of the anchor import and of
    a bare agent build first (the OS file cache)."""
    seconds(IMPORTS, ROOT, dict(os.environ))
    bare(1, 10**9, 1, until="traced")
    for run in range(runs):
        order = SIDES[run % 3 :] + SIDES[: run % 3]
        for row in table:
            for side in order:
                cpu = children_cpu()
                sample = row.measure[side]()
                row.samples[side].append(replace(sample, cpu=children_cpu() - cpu))
            figures = ", ".join(f"{side} {row.samples[side][-1].seconds:.1f} s" for side in SIDES)
            load = os.getloadavg()[0]
            print(f"  {row.label}, run {run + 1}/{runs}: {figures}; load {load:.1f}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--budget", type=int, default=10_000, help="timesteps of rows (a)-(c)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rows", default="startup,a,b,c,sweep,solve")
    args = parser.parse_args()
    wanted = set(args.rows.split(","))
    if "solve" in wanted:
        from bench.solve import ensure_sb3_environment

        ensure_sb3_environment()
    cpu = children_cpu()
    print(f"{EXPERIMENT}, seed {args.seed}, {args.runs} runs; {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as folder:
        lab = start_in_lab(Path(folder), 200)
        try:
            table = rows(wanted, args.budget, args.seed, lab)
            measure(table, args.runs)
        finally:
            end_standing(Path(lab[2]["XDG_RUNTIME_DIR"]))  # none is left with TFCLI_WARM_TRAINER=off; to be sure
    header = ["work", "anchor", "anchor s", "ours s", "bare s", "ours", "bare", "goal", "reachable"]
    print_table(header, [row.cells() for row in table], left=(0, 1))
    print(
        "s: median wall / CPU seconds, start to exit; ours and bare: the ratio to the anchor by wall / by CPU, median "
        "of the runs (the Runner rows: the Runner's time over ours; the others: ours over the anchor's); reachable: "
        "whether bare TensorForce itself meets the goal by either, i.e. whether any tool on TensorForce 0.6.5 could. "
        f"CPU of all runs: {children_cpu() - cpu:.0f} s; load at the end {os.getloadavg()[0]:.2f}."
    )
    for row in table:
        if row.key == "solve":
            print(solve_line(row))
    print(json.dumps({row.key: {side: [vars(s) for s in row.samples[side]] for side in SIDES} for row in table}))


def solve_line(row: Row) -> str:
    """What no hyperparameters change: bare TensorForce's seconds to its first episode's end, beside SB3's solve."""
    traced = statistics.median(sample.details["traced"] for sample in row.samples["bare"])
    timesteps = {side: statistics.median(s.details["timesteps"] for s in row.samples[side]) for side in SIDES}
    per_timestep = (row.median("bare") - traced) / timesteps["bare"]
    within = (row.goal * row.median("anchor") - traced) / per_timestep
    return (
        f"solve: bare TensorForce's first episode ended (imports, agent build, tracing) at {traced:.2f} s, "
        f"{traced / row.median('anchor'):.2f}x SB3's median solve; solved at (median timesteps) SB3 "
        f"{timesteps['anchor']:,.0f}, ours {timesteps['ours']:,.0f}, bare {timesteps['bare']:,.0f}. At bare's "
        f"{1000 * per_timestep:.2f} ms a timestep after that, the goal needs a solve within {within:,.0f} timesteps "
        f"(the last 20 episodes alone: 9,500); SB3's CPU (torch: a thread per core) is printed, not judged."
    )


if __name__ == "__main__":
    main()
