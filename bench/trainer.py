"""This trainer beside TensorForce 0.6.5's ``tensorforce.execution.Runner``: whole processes, as a user waits for them.

One table, every row measured in this run on this machine, ``--runs`` times each, the two sides alternating:

- (a) single: ``python -m trainer run`` (run_mode single) vs ``Runner(environment=...)``.
- (b) multi-threaded, 4 environments (``--environments auto``: in-process for CartPole) vs
  ``Runner(environments=[4], num_parallel=4)`` with ``run(batch_agent_calls=True)``.
- (c) distributed, 4 ``python -m trainer env-worker`` processes on 127.0.0.1 and the learner, started together as
  ``tfcli experiment start --local`` starts them, vs ``Runner(environments=[4], remote="multiprocessing")`` with
  ``run()``'s defaults (one agent call per environment, as TensorForce documents the mode): once with one
  environment per worker (the same environments as the Runner) and once with ``environments_per_worker: 4``.
- (e) Space Invaders (the bundled ``space-invaders-dqn``), distributed over 4 env-workers vs multi-threaded with 4
  environments stepped in the trainer's process (``--environments in-process``, what ``auto`` picks on 2 cores),
  and (e') vs multi-threaded with the 4 environments in subprocesses (what ``auto`` picks for Atari from 3 cores on,
  since their steps cost more than a pipe's round trip): this trainer against itself, since the Runner cannot share
  a DQN between parallel Atari environments (no episode limit is registered for ALE levels). The agent makes no
  update before ``start_updating`` (10,000 timesteps), so budgets below it measure acting and stepping, as the first
  10,000 timesteps of a run are.

Columns: "whole s" is the wall time from the first process start to the last exit (imports, agent build, env-worker
start, training, the final checkpoint, learning curve and shutdown), min and median over the runs; the ratio is the
peer's median over ours (> 1: we are faster). "CPU s" is the user + sys time of every process of the run (the
kernel's count for waited-for children), median, and per 1,000 timesteps beside it: other work on a loaded machine
stretches the wall time but bills no CPU to the run, so this ratio is the steadier one. "steady t/s" leaves
TensorFlow's warm-up out on both sides: timesteps per second between the finished episode nearest 20% of the budget
and the last finished one (median). "memory" is the peak of the summed proportional set size (PSS) of every process
of the run (learner, env-workers, Runner and its children), sampled every 0.2 s; the goal is at most 1.5x the
peer's.

Fairness: both sides get the same agent (the bundled experiment's agent and network, built by
``trainer.agents.agent_arguments``), the same seed (the agent's ``config.seed``; environment ``i`` seeded with
``seed + i`` through ``trainer.pools.recipe``), the same timestep budget and episode limit, the trainer's gymnasium
adapter (wrapped as a ``tensorforce.Environment`` for the Runner; TensorForce's own gym wrapper is broken) and
``trainer.compat.apply()``: what TensorForce needs to run on TensorFlow 2.12, and also its in-place buffer writes and
nested-function tracing, which make the peer faster than TensorForce as shipped (the ratios understate the
difference to it). What the trainer does on top (its
execution settings ``trainer.agents.EXECUTION_CONFIG``, its shutdown, several environments per env-worker) is the
trainer's. Every measurement runs in fresh processes. The trainer runs as users run it: its progress log,
TensorBoard summaries (its own and the agent's), checkpoints and learning curve on; the Runner without its tqdm bar.
Time to solve CartPole beside stable-baselines3 is ``bench/solve.py``.

Run: ``uv run python -m bench.trainer [--budget TIMESTEPS] [--runs N] [--seed S] [--atari-timesteps N]
[--cases a,b,c,e]`` (about 11 minutes on a 2-core machine with the defaults). The machine's load average is
printed: other work on the machine slows both sides alike, and the runs alternate so that it falls on both.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any

from bench.trainer_launch import EXPERIMENT
from bench.trainer_measure import Measurement, measure_trainer
from bench.trainer_peer import measure_runner, runner_child
from bench.trainer_table import Row, print_rows

ATARI = "space-invaders-dqn"
ENVIRONMENTS = 4


@dataclass(frozen=True)
class Case:
    """A row: ours (``experiment`` with ``overrides``) against the Runner in ``runner`` mode, or against another run
    of ours (``versus``: overrides) when the Runner has no counterpart."""

    key: str
    label: str
    experiment: str
    overrides: dict[str, Any]
    runner: str | None = None
    versus: dict[str, Any] | None = None
    versus_label: str = "Runner"
    versus_environments: str = "auto"  # the trainer's --environments for ``versus``
    whole_goal: float | None = None
    steady_goal: float | None = None


def cases(atari_timesteps: int) -> list[Case]:
    mt = {"run_mode": "multi-threaded", "num_workers": ENVIRONMENTS}
    distributed = {"run_mode": "distributed", "num_workers": ENVIRONMENTS}
    return [
        Case("a", "(a) single", EXPERIMENT, {"run_mode": "single"}, runner="single", whole_goal=1.0),
        Case("b", f"(b) multi-threaded, {ENVIRONMENTS} envs", EXPERIMENT, mt, runner="parallel", whole_goal=1.0),
        Case("c", f"(c) distributed, {ENVIRONMENTS} env-workers", EXPERIMENT, distributed, runner="multiprocessing"),
        Case(
            "c",
            f"(c') distributed, {ENVIRONMENTS} env-workers x 4 envs",
            EXPERIMENT,
            {**distributed, "environments_per_worker": 4},
            runner="multiprocessing",
            steady_goal=4.5,
        ),
        Case(
            "e",
            f"(e) {ATARI}: distributed vs multi-threaded, {ENVIRONMENTS} each",
            ATARI,
            {**distributed, "total_timesteps": atari_timesteps},
            versus={**mt, "total_timesteps": atari_timesteps},
            versus_label="ours, multi-threaded",
            versus_environments="in-process",
            whole_goal=1.0,
            steady_goal=1.0,
        ),
        Case(
            "e",
            f"(e') {ATARI}: distributed vs multi-threaded, environments in subprocesses",
            ATARI,
            {**distributed, "total_timesteps": atari_timesteps},
            versus={**mt, "total_timesteps": atari_timesteps},
            versus_label="ours, multi-threaded",
            versus_environments="subprocess",
        ),
    ]


def measure_case(case: Case, budget: int, runs: int, seed: int) -> Row:
    overrides = dict(case.overrides)
    budget = overrides.pop("total_timesteps", budget)
    ours: list[Measurement] = []
    theirs: list[Measurement] = []
    for run in range(runs):
        # alternate which side goes first, so that a busy moment of the machine does not fall on one side only
        order = ["ours", "theirs"] if run % 2 == 0 else ["theirs", "ours"]
        for side in order:
            if side == "ours":
                ours.append(measure_trainer(case.experiment, overrides, budget, seed))
            elif case.runner is not None:
                environments = 1 if case.runner == "single" else ENVIRONMENTS
                theirs.append(measure_runner(case.experiment, case.runner, environments, budget, seed))
            else:
                versus = dict(case.versus or {})
                versus.pop("total_timesteps", None)
                theirs.append(measure_trainer(case.experiment, versus, budget, seed, case.versus_environments))
        print(
            f"  {case.label}, run {run + 1}/{runs}: {case.versus_label} {theirs[-1].seconds:.1f} s, "
            f"ours {ours[-1].seconds:.1f} s; CPU {theirs[-1].cpu_seconds:.1f} / {ours[-1].cpu_seconds:.1f} s; "
            f"load {os.getloadavg()[0]:.1f}",
            file=sys.stderr,
            flush=True,
        )
    return Row(case, budget, ours, theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=10_000, help="CartPole timesteps per run")
    parser.add_argument("--runs", type=int, default=3, help="runs of each side per case")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--atari-timesteps", type=int, default=6_000, help="Space Invaders agent steps per run")
    parser.add_argument("--cases", default="a,b,c,e", help="which cases (a, b, c, e)")
    parser.add_argument("--runner-child", choices=["single", "parallel", "multiprocessing"], help=argparse.SUPPRESS)
    parser.add_argument("--experiment-child", default=EXPERIMENT, help=argparse.SUPPRESS)
    parser.add_argument("--environments-child", type=int, default=ENVIRONMENTS, help=argparse.SUPPRESS)
    parser.add_argument("--seed-child", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.runner_child:
        runner_child(args.experiment_child, args.runner_child, args.environments_child, args.budget, args.seed_child)
        return

    wanted = set(args.cases.split(","))
    print(
        f"{EXPERIMENT} ({args.budget:,} timesteps) and {ATARI} ({args.atari_timesteps:,} agent steps), seed "
        f"{args.seed}, {args.runs} runs per side; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    rows = [measure_case(case, args.budget, args.runs, args.seed) for case in cases(args.atari_timesteps)
            if case.key in wanted]  # fmt: skip
    print_rows(rows)
    print(
        "whole: the peer's median wall time over ours, first process start to last exit (> 1: ours is faster); "
        "CPU: the peer's median user+sys seconds of all the run's processes over ours (per 1,000 timesteps beside "
        "it); steady: ours over the peer's timesteps/s with TensorFlow's warm-up left out; memory: our peak summed PSS "
        f"over the peer's. Load average at the end: {os.getloadavg()[0]:.2f}."
    )


if __name__ == "__main__":
    main()
