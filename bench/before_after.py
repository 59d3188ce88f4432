"""Issue 30's rows before and after, in one run: tfcli at an earlier commit (``--before REV``, exported with ``git
archive`` and run through ``PYTHONPATH``) and this tree, each beside the row's anchor, whole processes, the sides'
order rotating from round to round so that a slow moment of the machine falls on each.

The rows (``bench.floor`` has the same work beside bare TensorForce; the anchors are issue 30's):

- help: ``tfcli --help`` beside ``python -c "import typer"``;
- startup: ``experiment start -f <200-step PPO CartPole> --local``, a first start (``TFCLI_WARM_TRAINER=off``), beside
  ``import tensorflow, tensorforce``; this tree also after a run (its trainer forked by the standing warm trainer);
- sweep: ``bench.warm_sweep``'s 9 trials as a local sweep, ``--parallel 1``, beside the same 9 started fresh one by
  one with ``experiment start -f ... --local``, each tree beside its own lone starts;
- a, b, c: the trainer (``python -m trainer run``, env-workers for c) on cartpole-ppo for ``--budget`` timesteps,
  single, multi-threaded (4) and distributed (4), beside TensorForce's Runner in the matching mode
  (``bench.trainer``'s cases; the ratio is the Runner's time over ours);
- solve: the bundled cartpole-ppo until 20 episodes average 475, beside stable-baselines3 PPO (``bench.solve``).

Both trees train the spec this tree resolves (the same JSON), so a row compares code, not configuration.
Run: ``uv run python -m bench.before_after --before 50ddae7 [--runs 3] [--budget 10000] [--rows help,startup,...]``
(50ddae7: the commit before issue 30's first change).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

import bench.trainer_launch
from bench.floor import run_whole
from bench.report import print_table
from bench.solve import ensure_sb3_environment, sb3_run
from bench.startup import IMPORTS, SPEC, wait_for_standing_trainer
from bench.trainer_launch import EXPERIMENT, ROOT
from bench.trainer_measure import measure_trainer
from bench.trainer_peer import measure_runner
from bench.trainer_solve import measure_solve
from bench.warm_sweep import sweep_file, write_lone_specs
from tfcli.local.standing import end_standing

T = TypeVar("T")
TFCLI = [sys.executable, "-m", "tfcli"]
START = [*TFCLI, "experiment", "start", "-f", "startup.yaml", "--local", "--restart"]
GOALS = {"help": "<= 3x", "startup": "<= 1.35x", "sweep": "<= 0.75x", "a": ">= 1.5x", "b": ">= 1.5x", "c": ">= 6x"}
GOALS["solve"] = "<= 0.6x"


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall seconds of one whole process, which must succeed (``bench.floor.run_whole``: its stderr if not)."""
    return run_whole(command, cwd, env)[0]


class Trees:
    """The two trees, a project of each for the start-ups, and what runs a command in either: the CLI from a
    project (or the tree itself for ``--help``), the trainer from a folder of neither tree, so that ``-m`` finds
    the tree ``PYTHONPATH`` names."""

    def __init__(self, before: Path, scratch: Path) -> None:
        self.trees = {"before": before, "after": ROOT}
        self.scratch, self.made = scratch, 0
        self.neutral = scratch / "neutral"
        self.neutral.mkdir()
        self.runtime, self.warm_runtime = scratch / "run", scratch / "warm"
        for runtime in (self.runtime, self.warm_runtime):
            runtime.mkdir(mode=0o700)
        self.labs = {side: self.project(side) for side in self.trees}
        self.warm_lab = self.project("after")

    def env(self, side: str, runtime: Path | None = None, **extra: str) -> dict[str, str]:
        runtime = runtime or self.runtime
        return dict(os.environ, PYTHONPATH=str(self.trees[side]), XDG_RUNTIME_DIR=str(runtime), **extra)

    def fresh(self, side: str) -> dict[str, str]:
        return self.env(side, TFCLI_WARM_TRAINER="off")

    def project(self, side: str) -> Path:
        self.made += 1
        folder = self.scratch / f"project-{self.made}"
        timed([*TFCLI, "init", str(folder)], self.neutral, self.env(side))
        (folder / "startup.yaml").write_text(SPEC.format(timesteps=200))
        return folder

    def help(self, side: str) -> float:
        return timed([*TFCLI, "--help"], self.trees[side], dict(os.environ))

    def start(self, side: str) -> float:
        return timed(START, self.labs[side], self.fresh(side))

    def start_after_a_run(self) -> float:
        """This tree's start whose trainer the standing warm trainer forks (the first call leaves it standing)."""
        env = self.env("after", self.warm_runtime, TFCLI_WARM_IDLE_SECONDS="900")
        if not any(self.warm_runtime.glob("tfcli-warm-*/zygote.sock")):
            timed(START, self.warm_lab, env)
            wait_for_standing_trainer(env)
        return timed(START, self.warm_lab, env)

    def sweep(self, side: str) -> float:
        lab = self.project(side)
        (lab / "warm.yaml").write_text(sweep_file(1_500))
        timed([*TFCLI, "experiment", "sweep", "-f", "warm.yaml", "--no-build"], lab, self.fresh(side))
        return timed([*TFCLI, "experiment", "start", "-s", "warm", "--local", "--parallel", "1"], lab, self.fresh(side))

    def lone_starts(self, side: str) -> float:
        lab = self.project(side)
        starts = [[*TFCLI, "experiment", "start", "-f", spec.name, "--local"] for spec in write_lone_specs(lab, 1_500)]
        return sum(timed(start, lab, self.fresh(side)) for start in starts)

    def trainer(self, side: str, work: Callable[[], T]) -> T:
        """``work`` (``bench.trainer_launch``'s launches) with that tree's ``python -m trainer``."""
        with tree_on_path(self.trees[side]):
            bench.trainer_launch.ROOT = self.neutral
            try:
                return work()
            finally:
                bench.trainer_launch.ROOT = ROOT


@contextlib.contextmanager
def tree_on_path(tree: Path) -> Iterator[None]:
    """``tree`` first on the path of every process started meanwhile."""
    earlier = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tree)
    try:
        yield
    finally:
        if earlier is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = earlier


Sides = dict[str, Callable[[], float]]
Ratios = list[tuple[str, str, str]]  # label, numerator side, denominator side (each ratio taken pair by pair)


def rows(trees: Trees, budget: int, seed: int) -> dict[str, tuple[Sides, Ratios]]:
    def trainer(overrides: Mapping[str, object]) -> Sides:
        def one(side: str) -> Callable[[], float]:
            def work() -> float:
                return measure_trainer(EXPERIMENT, dict(overrides), budget, seed).seconds

            return lambda: trees.trainer(side, work)

        return {"before": one("before"), "after": one("after")}

    def runner(mode: str, environments: int) -> Callable[[], float]:
        return lambda: measure_runner(EXPERIMENT, mode, environments, budget, seed).seconds

    def solve(side: str) -> Callable[[], float]:
        return lambda: solved(trees.trainer(side, lambda: measure_solve(seed, 300.0).from_start))

    over_anchor: Ratios = [("before", "before", "anchor"), ("after", "after", "anchor")]
    anchor_over: Ratios = [("before", "anchor", "before"), ("after", "anchor", "after")]
    mt, distributed = ({"run_mode": mode, "num_workers": 4} for mode in ("multi-threaded", "distributed"))
    return {
        "help": ({"anchor": lambda: timed([sys.executable, "-c", "import typer"], trees.neutral, dict(os.environ)),
                  "before": lambda: trees.help("before"), "after": lambda: trees.help("after")}, over_anchor),
        "startup": ({"anchor": lambda: timed(IMPORTS, trees.neutral, dict(os.environ)),
                     "before": lambda: trees.start("before"), "after": lambda: trees.start("after"),
                     "after a run": trees.start_after_a_run},
                    [*over_anchor, ("after, after a run", "after a run", "anchor")]),
        "sweep": ({"before's lone": lambda: trees.lone_starts("before"), "before": lambda: trees.sweep("before"),
                   "after's lone": lambda: trees.lone_starts("after"), "after": lambda: trees.sweep("after")},
                  [("before", "before", "before's lone"), ("after", "after", "after's lone")]),
        "a": ({"anchor": runner("single", 1), **trainer({"run_mode": "single"})}, anchor_over),
        "b": ({"anchor": runner("parallel", 4), **trainer(mt)}, anchor_over),
        "c": ({"anchor": runner("multiprocessing", 4), **trainer(distributed)}, anchor_over),
        "solve": ({"anchor": lambda: solved(sb3_run(seed, 300.0, full=False, threads=None).from_start),
                   "before": solve("before"), "after": solve("after")}, over_anchor),
    }  # fmt: skip


def solved(seconds: float | None) -> float:
    if seconds is None:
        raise RuntimeError("CartPole was not solved within the cap")
    return seconds


def ratio(samples: dict[str, list[float]], numerator: str, denominator: str) -> str:
    pairs = [a / b for a, b in zip(samples[numerator], samples[denominator], strict=True)]
    return f"{statistics.median(pairs):.2f}x ({min(pairs):.2f}-{max(pairs):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--budget", type=int, default=10_000, help="timesteps of rows a-c")
    parser.add_argument("--rounds", type=int, default=5, help="rounds a run of startup (help: twice as many)")
    parser.add_argument("--rows", default="help,startup,sweep,a,b,c,solve")
    args = parser.parse_args()
    wanted = args.rows.split(",")
    if "solve" in wanted:
        ensure_sb3_environment()
    samples: dict[str, dict[str, list[float]]] = {key: {} for key in wanted}
    with tempfile.TemporaryDirectory(prefix="bench-before-after-") as folder:
        before = Path(folder) / "before"
        before.mkdir()
        archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        trees = Trees(before, Path(folder))
        table = rows(trees, args.budget, seed=1)
        timed(IMPORTS, trees.neutral, dict(os.environ))  # the OS file cache
        try:
            for run in range(args.runs):
                for key in wanted:
                    sides = list(table[key][0])
                    rounds = {"help": 2 * args.rounds, "startup": args.rounds}.get(key, 1)
                    for round_ in range(rounds):
                        shift = (run + round_) % len(sides)
                        for side in sides[shift:] + sides[:shift]:
                            samples[key].setdefault(side, []).append(table[key][0][side]())
                    print(f"  {key}, run {run + 1}/{args.runs}; load {os.getloadavg()[0]:.1f}", file=sys.stderr)
        finally:
            end_standing(trees.warm_runtime)
    header = ["row", "side", "median s", "ratio (range)", "goal"]
    lines = []
    for key in wanted:
        lines += [[key, side, f"{statistics.median(values):.2f}", "", ""] for side, values in samples[key].items()]
        lines += [[key, label, "", ratio(samples[key], a, b), GOALS[key]] for label, a, b in table[key][1]]
    print(f"before: {args.before}; after: this tree; {args.runs} runs; {os.cpu_count()} cores")
    print_table(header, lines, left=(0, 1))
    print("ratio: pair by pair, median (range); a-c: the Runner's time over ours, the others ours over the anchor's")


if __name__ == "__main__":
    main()
