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
import json
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.processes import PeakMemory

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = "cartpole-ppo"
ATARI = "space-invaders-dqn"
ENVIRONMENTS = 4
SOLVED_RETURN = 475.0
SOLVED_EPISODES = 20
STEADY_FROM = 0.2  # the steady rate starts at the episode nearest this fraction of the budget
MEMORY_GOAL = 1.5  # at most this many times the peer's peak memory


@dataclass(frozen=True)
class Timeline:
    """Finished episodes of one run: (timesteps so far, seconds since the first timestep, return)."""

    episodes: list[tuple[int, float, float]]

    def steady_rate(self, budget: int) -> float:
        start = min(self.episodes, key=lambda episode: abs(episode[0] - STEADY_FROM * budget))
        end = self.episodes[-1]
        if end[1] <= start[1]:
            return float("nan")
        return (end[0] - start[0]) / (end[1] - start[1])

    def mean_return(self, last: int = 20) -> float:
        returns = [episode[2] for episode in self.episodes[-last:]]
        return sum(returns) / len(returns)


@dataclass(frozen=True)
class Measurement:
    """One whole run: wall seconds from the first process start to the last exit, its episodes, its peak memory."""

    seconds: float
    timeline: Timeline
    peak_memory: int  # bytes: summed PSS of the run's processes
    cpu_seconds: float  # user + sys of every process of the run (each waited for, so the kernel counts it here)


def children_cpu() -> float:
    """User + sys seconds of every finished, waited-for process below this one (their own waited children included).

    Steadier than wall time on a loaded machine: other work delays a run but does not bill it."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


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


# ----------------------------------------------------------------------------------------------------- the spec


def experiment_data(experiment: str = EXPERIMENT, **overrides: Any) -> dict[str, Any]:
    """A bundled experiment, fully resolved, with ``overrides`` (what ``tfcli experiment new`` would write)."""
    from trainer.kernel.spec import load_experiment, to_data

    return to_data(load_experiment(experiment, overrides=overrides).spec)


def write_spec(folder: Path, experiment: str = EXPERIMENT, **overrides: Any) -> Path:
    path = folder / "experiment.json"
    path.write_text(json.dumps(experiment_data(experiment, **overrides)))
    return path


# ---------------------------------------------------------------------------------------------- this trainer


def trainer_environment() -> dict[str, str]:
    return dict(os.environ, TRAINER_TOKEN=secrets.token_hex(32), TF_CPP_MIN_LOG_LEVEL="2")


def start_env_workers(spec: Path, count: int, env: dict[str, str]) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    """``count`` env-worker processes on 127.0.0.1; worker ``i`` steps environments ``i * E ...`` (seed + index).
    As tfcli's local supervisor does, nobody waits for them to listen: the learner connects when they do."""
    from tfcli.local.supervisor import free_port, worker_command

    workers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    for index in range(count):
        port = free_port()
        workers.append(
            subprocess.Popen(
                worker_command(spec, port),
                cwd=ROOT,
                env={**env, "JOB_COMPLETION_INDEX": str(index)},  # as in the indexed Job: the worker's index
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        ports.append(port)
    return workers, ports


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            try:
                process.wait(timeout=5)  # a completed learner tells its env-workers to exit
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def trainer_command(spec: Path, output: Path, environments: str, ports: list[int]) -> list[str]:
    command = [sys.executable, "-m", "trainer", "run", "--spec", str(spec), "--output", str(output)]
    command += ["--environments", environments]
    if ports:
        command += ["--workers", ",".join(f"127.0.0.1:{port}" for port in ports)]
    return command


def launch(
    spec: Path, output: Path, env: dict[str, str], *, stderr: int = subprocess.DEVNULL, environments: str = "auto"
) -> tuple[subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]:
    """The run as tfcli's local supervisor starts it, all at once: env-workers (distributed) and the learner."""
    data = json.loads(spec.read_text())
    workers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    if data["run_mode"] == "distributed":
        workers, ports = start_env_workers(spec, data["num_workers"], env)
    learner = subprocess.Popen(
        trainer_command(spec, output, environments, ports), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr
    )
    return learner, workers


def read_progress(output: Path) -> list[dict[str, Any]]:
    path = output / "progress.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def measure_trainer(
    experiment: str, overrides: dict[str, Any], budget: int, seed: int, environments: str = "auto"
) -> Measurement:
    """One run as ``tfcli experiment start --local`` runs it: env-workers (distributed) and the trainer, timed from
    the first process start to the last exit."""
    with tempfile.TemporaryDirectory(prefix="bench-trainer-") as folder:
        root = Path(folder)
        spec = write_spec(root, experiment, **overrides, total_timesteps=budget, seed=seed)
        env = trainer_environment()
        with PeakMemory() as memory:
            cpu = children_cpu()
            started = time.monotonic()
            learner, workers = launch(spec, root / "out", env, stderr=subprocess.PIPE, environments=environments)
            try:
                _, errors = learner.communicate()
                if learner.returncode != 0:
                    raise RuntimeError(f"the trainer exited with {learner.returncode}: {errors.decode()[-2000:]}")
            finally:
                stop(workers)
            seconds = time.monotonic() - started
            cpu = children_cpu() - cpu
        lines = read_progress(root / "out")
    timeline = Timeline([(line["timesteps"], line["wall_seconds"], line["return"]) for line in lines])
    return Measurement(seconds, timeline, memory.peak, cpu)


# ------------------------------------------------------------------------------------------- TensorForce Runner


def runner_environment_class() -> type:
    """The trainer's gymnasium adapter behind ``tensorforce.Environment`` (TensorForce's gym wrapper is broken)."""
    from tensorforce import Environment

    class AdapterEnvironment(Environment):  # type: ignore[misc]
        def __init__(self, recipe: Any, index: int) -> None:
            super().__init__()
            self._adapter = recipe.make(index)

        def states(self) -> dict[str, Any]:
            return dict(self._adapter.states())

        def actions(self) -> dict[str, Any]:
            return dict(self._adapter.actions())

        def max_episode_timesteps(self) -> int | None:
            limit: int | None = self._adapter.max_episode_timesteps()
            return limit

        def reset(self) -> Any:
            return self._adapter.reset()

        def execute(self, actions: Any) -> tuple[Any, int, float]:
            states, terminal, reward = self._adapter.execute(actions)
            return states, terminal, reward

        def close(self) -> None:
            self._adapter.close()
            super().close()

    return AdapterEnvironment


def runner_child(experiment_name: str, mode: str, environments: int, budget: int, seed: int) -> None:
    """In a fresh process: train with ``Runner`` and print the episode timeline as JSON on stdout.

    The agent is the experiment's (``trainer.agents.agent_arguments``: the agent file, network, seed, episode limit
    and parallel interactions a user would pass to ``Agent.create``), run with TensorForce's own defaults: the
    trainer's execution settings (``trainer.agents.EXECUTION_CONFIG``) are the trainer's, not the peer's."""
    from trainer import compat
    from trainer.agents import agent_arguments
    from trainer.kernel.spec import load_experiment
    from trainer.pools.recipe import EnvironmentRecipe

    compat.apply()
    from tensorforce import Runner

    count = 1 if mode == "single" else environments
    experiment = load_experiment(experiment_name, overrides={"seed": seed}).spec
    recipe = EnvironmentRecipe.of(experiment)
    cls = runner_environment_class()
    probe = recipe.make(0)
    try:
        # exactly the trainer's agent arguments (agent file, network, seed, episode limit, parallel interactions)
        agent = agent_arguments(
            experiment.agent,
            environment=probe,
            network=experiment.network,
            max_episode_timesteps=None,
            parallel_interactions=count,
            seed=seed,
        )
    finally:
        probe.close()
    specs = [{"environment": cls, "recipe": recipe, "index": index} for index in range(count)]
    if mode == "single":
        runner = Runner(agent=agent, environment=specs[0])
    elif mode == "parallel":
        runner = Runner(agent=agent, environments=specs)
    else:
        runner = Runner(agent=agent, environments=specs, remote="multiprocessing")
    episodes: list[tuple[int, float, float]] = []
    started = 0.0

    def record(run: Any, parallel: int) -> bool:
        episodes.append((run.timesteps, time.monotonic() - started, float(run.episode_returns[-1])))
        return True

    try:
        started = time.monotonic()
        runner.run(
            num_timesteps=budget,
            batch_agent_calls=mode == "parallel",
            callback=record,
            callback_episode_frequency=1,
            use_tqdm=False,
        )
    finally:
        runner.close()
    print(json.dumps({"episodes": episodes}))


def measure_runner(experiment: str, mode: str, environments: int, budget: int, seed: int) -> Measurement:
    """The Runner in a fresh process (its children too, with remote='multiprocessing'), start to exit."""
    command = [sys.executable, "-m", "bench.trainer", "--runner-child", mode, "--experiment-child", experiment]
    command += ["--environments-child", str(environments), "--budget", str(budget), "--seed-child", str(seed)]
    with PeakMemory() as memory:
        cpu = children_cpu()
        started = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, env=trainer_environment(), capture_output=True)
        seconds = time.monotonic() - started
        cpu = children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"the Runner exited with {done.returncode}: {done.stderr.decode()[-2000:]}")
    data = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return Measurement(seconds, Timeline([tuple(episode) for episode in data["episodes"]]), memory.peak, cpu)


# ---------------------------------------------------------------------------------------------- time to solve


@dataclass(frozen=True)
class Solve:
    seed: int
    from_start: float | None  # seconds from the trainer's process start (None: not solved)
    from_first_timestep: float | None
    timesteps: int
    episodes: int


def solved_at(lines: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The episode that first closes SOLVED_EPISODES consecutive episodes averaging SOLVED_RETURN or more."""
    for end in range(SOLVED_EPISODES, len(lines) + 1):
        window = lines[end - SOLVED_EPISODES : end]
        if sum(line["return"] for line in window) / SOLVED_EPISODES >= SOLVED_RETURN:
            return lines[end - 1]
    return None


def measure_solve(seed: int, cap: float) -> Solve:
    """Run the bundled experiment (its own budget and run mode) until solved, ``cap`` seconds at most."""
    with tempfile.TemporaryDirectory(prefix="bench-solve-") as folder:
        root = Path(folder)
        spec = write_spec(root, seed=seed)
        started = time.monotonic()
        learner, workers = launch(spec, root / "out", trainer_environment())
        found: dict[str, Any] | None = None
        from_start: float | None = None
        lines: list[dict[str, Any]] = []
        try:
            while time.monotonic() - started < cap:
                lines = read_progress(root / "out")
                found = solved_at(lines)
                if found is not None:
                    from_start = time.monotonic() - started  # polled every 50 ms: at most that late
                    break
                if learner.poll() is not None:
                    break
                time.sleep(0.05)
        finally:
            if learner.poll() is None:
                learner.kill()
            learner.wait()
            for worker in workers:
                worker.kill()
                worker.wait()
    if found is None:
        return Solve(seed, None, None, lines[-1]["timesteps"] if lines else 0, len(lines))
    return Solve(seed, from_start, found["wall_seconds"], found["timesteps"], found["episode"])


# ------------------------------------------------------------------------------------------------------ report


def seconds_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def median_or_none(values: list[float | None]) -> float | None:
    if any(value is None for value in values) or not values:
        return None
    return statistics.median([value for value in values if value is not None])


def _mib(value: float) -> str:
    return f"{value / 2**20:,.0f}"


@dataclass(frozen=True)
class Row:
    case: Case
    budget: int
    ours: list[Measurement]
    theirs: list[Measurement]

    def whole(self, side: list[Measurement]) -> list[float]:
        return [measurement.seconds for measurement in side]

    def steady(self, side: list[Measurement]) -> float:
        return statistics.median([measurement.timeline.steady_rate(self.budget) for measurement in side])

    @property
    def whole_ratio(self) -> float:
        return statistics.median(self.whole(self.theirs)) / statistics.median(self.whole(self.ours))

    def cpu(self, side: list[Measurement]) -> float:
        return statistics.median(measurement.cpu_seconds for measurement in side)

    @property
    def cpu_ratio(self) -> float:
        return self.cpu(self.theirs) / self.cpu(self.ours)

    def cpu_per_thousand(self, side: list[Measurement]) -> str:
        return f"{1000 * self.cpu(side) / self.budget:.2f}"

    @property
    def steady_ratio(self) -> float:
        return self.steady(self.ours) / self.steady(self.theirs)

    @property
    def memory_ratio(self) -> float:
        return max(m.peak_memory for m in self.ours) / max(m.peak_memory for m in self.theirs)

    def verdict(self) -> str:
        misses = []
        if self.case.whole_goal is not None and self.whole_ratio < self.case.whole_goal:
            misses.append("whole")
        if self.case.steady_goal is not None and self.steady_ratio < self.case.steady_goal:
            misses.append("steady")
        if self.case.runner is not None and self.memory_ratio > MEMORY_GOAL:
            misses.append("memory")
        return "ok" if not misses else "MISS " + "+".join(misses)

    def cells(self) -> list[str]:
        def min_median(values: list[float]) -> str:
            return f"{min(values):.1f} / {statistics.median(values):.1f}"

        goals = []
        if self.case.whole_goal is not None:
            goals.append(f"whole >= {self.case.whole_goal:g}x")
        if self.case.steady_goal is not None:
            goals.append(f"steady >= {self.case.steady_goal:g}x")
        if self.case.runner is not None:
            goals.append(f"memory <= {MEMORY_GOAL:g}x")
        return [
            self.case.label,
            self.case.versus_label,
            min_median(self.whole(self.theirs)),
            min_median(self.whole(self.ours)),
            f"{self.whole_ratio:.2f}x",
            f"{self.cpu(self.theirs):.1f} / {self.cpu(self.ours):.1f}",
            f"{self.cpu_ratio:.2f}x",
            f"{self.cpu_per_thousand(self.theirs)} / {self.cpu_per_thousand(self.ours)}",
            f"{self.steady(self.theirs):,.0f}",
            f"{self.steady(self.ours):,.0f}",
            f"{self.steady_ratio:.2f}x",
            f"{_mib(max(m.peak_memory for m in self.theirs))} / {_mib(max(m.peak_memory for m in self.ours))}",
            f"{self.memory_ratio:.2f}x",
            f"{statistics.median(m.timeline.mean_return() for m in self.theirs):.0f} / "
            f"{statistics.median(m.timeline.mean_return() for m in self.ours):.0f}",
            ", ".join(goals),
            self.verdict(),
        ]


HEADER = [
    "case",
    "peer",
    "peer whole s min/med",
    "ours whole s min/med",
    "whole",
    "CPU s peer/ours",
    "CPU",
    "CPU s/1k t peer/ours",
    "peer steady t/s",
    "ours steady t/s",
    "steady",
    "memory MiB peer/ours",
    "memory",
    "return(20) peer/ours",
    "goal",
    "",
]


def print_table(rows: list[Row]) -> None:
    lines = [HEADER, *[row.cells() for row in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    for line in lines:
        cells = [cell.ljust(widths[i]) if i in (0, 1, 14, 15) else cell.rjust(widths[i]) for i, cell in enumerate(line)]
        print("  ".join(cells).rstrip())


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
    print_table(rows)
    print(
        "whole: the peer's median wall time over ours, first process start to last exit (> 1: ours is faster); "
        "CPU: the peer's median user+sys seconds of all the run's processes over ours (per 1,000 timesteps beside "
        "it); steady: ours over the peer's timesteps/s with TensorFlow's warm-up left out; memory: our peak summed PSS "
        f"over the peer's. Load average at the end: {os.getloadavg()[0]:.2f}."
    )


if __name__ == "__main__":
    main()
