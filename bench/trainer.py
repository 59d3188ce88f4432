"""This trainer next to TensorForce 0.6.5's ``tensorforce.execution.Runner``, and the bundled cartpole-ppo's solve time.

One table, every row measured in this run on this machine:

- (a) single: ``python -m trainer run`` (run_mode single) vs ``Runner(environment=...)``.
- (b) 4 environments: run_mode multi-threaded, 4 environments (``--environments auto``: in-process for CartPole)
  vs ``Runner(environments=[4], num_parallel=4)`` with ``run(batch_agent_calls=True)``.
- (c) distributed: 4 ``python -m trainer env-worker`` processes on 127.0.0.1 and the learner
  (``run --workers``) vs ``Runner(environments=[4], remote="multiprocessing")`` with ``run()``'s defaults (one
  agent call per environment, as TensorForce documents the mode).
- (d) the bundled cartpole-ppo experiment, as ``tfcli experiment start -f cartpole-ppo --local`` runs it, per seed:
  wall seconds until the mean return of 20 consecutive episodes reaches 475, from the trainer's process start and
  from its first timestep (``progress.jsonl``'s ``wall_seconds``). The run is stopped once solved.

Fairness: both sides get the same agent (the bundled cartpole-ppo's ppo agent and mlp2 network, built by
``trainer.agents.agent_arguments``), the same seeds (the agent's ``config.seed``; environment ``i`` seeded with
``seed + i`` through ``trainer.pools.recipe``), the same timestep budget, the same episode limit, the trainer's
gymnasium adapter (wrapped as a ``tensorforce.Environment`` for the Runner; TensorForce's own gym wrapper is
broken) and ``trainer.compat.apply()``. Every measurement runs in a fresh process. The trainer runs as users run
it: its progress log, TensorBoard summaries and checkpoints on; the Runner without its tqdm bar.

Rates: "steady" (what the goals are judged on) leaves TensorFlow's warm-up out on both sides: timesteps per second
between the finished episode nearest 20% of the budget and the last finished one (by then the act and update
graphs are traced). "with warm-up" counts from the first timestep to the last finished episode, the tracing of
the first act and the first update included on both sides. Process start, imports and agent construction are in
neither (they are in the solve times of (d)).

Run: ``uv run python -m bench.trainer [--budget TIMESTEPS] [--seeds 1,2,3]`` (about 2.5 minutes on a 2-core machine
with the defaults). The machine's load average is printed: other work on the machine slows both sides alike.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = "cartpole-ppo"
ENVIRONMENTS = 4
SOLVED_RETURN = 475.0
SOLVED_EPISODES = 20
STEADY_FROM = 0.2  # the steady rate starts at the episode nearest this fraction of the budget
SB3_SOLVE_SECONDS = 7.0  # stable-baselines3 PPO with rl-zoo3's tuned CartPole settings, on this machine
SOLVE_GOAL_SECONDS = 30.0
SINGLE_GOAL = 0.95
PARALLEL_GOAL = 0.95
DISTRIBUTED_GOAL = 4.5

# (label, trainer overrides, trainer's --environments, Runner mode, goal)
CASES: list[tuple[str, dict[str, Any], str, str, float]] = [
    ("(a) single", {"run_mode": "single"}, "auto", "single", SINGLE_GOAL),
    (
        f"(b) {ENVIRONMENTS} envs, batched act",
        {"run_mode": "multi-threaded", "num_workers": ENVIRONMENTS},
        "auto",
        "parallel",
        PARALLEL_GOAL,
    ),
    (
        f"(c) distributed, {ENVIRONMENTS} env procs",
        {"run_mode": "distributed", "num_workers": ENVIRONMENTS},
        "auto",
        "multiprocessing",
        DISTRIBUTED_GOAL,
    ),
]


@dataclass(frozen=True)
class Timeline:
    """Finished episodes of one run: (timesteps so far, seconds since the first timestep, return)."""

    episodes: list[tuple[int, float, float]]

    def rate_with_warmup(self) -> float:
        timesteps, seconds, _ = self.episodes[-1]
        return timesteps / seconds

    def steady_rate(self, budget: int) -> float:
        start = min(self.episodes, key=lambda episode: abs(episode[0] - STEADY_FROM * budget))
        end = self.episodes[-1]
        if end[1] <= start[1]:
            return float("nan")
        return (end[0] - start[0]) / (end[1] - start[1])

    def mean_return(self, last: int = 20) -> float:
        returns = [episode[2] for episode in self.episodes[-last:]]
        return sum(returns) / len(returns)


# ----------------------------------------------------------------------------------------------------- the spec


def experiment_data(**overrides: Any) -> dict[str, Any]:
    """The bundled experiment, fully resolved, with ``overrides`` (what ``tfcli experiment new`` would write)."""
    from tfcli.spec import load_experiment, to_data

    return to_data(load_experiment(EXPERIMENT, overrides=overrides).spec)


def write_spec(folder: Path, **overrides: Any) -> Path:
    path = folder / "experiment.json"
    path.write_text(json.dumps(experiment_data(**overrides)))
    return path


# ---------------------------------------------------------------------------------------------- this trainer


def _environment() -> dict[str, str]:
    return dict(os.environ, TRAINER_TOKEN=secrets.token_hex(32), TF_CPP_MIN_LOG_LEVEL="2")


def start_env_workers(spec: Path, count: int, env: dict[str, str]) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    """``count`` env-worker processes on 127.0.0.1, listening; worker ``i`` steps environment ``i`` (seed + i)."""
    from tfcli.local.supervisor import free_port, wait_listening, worker_command

    workers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    for index in range(count):
        port = free_port()
        workers.append(
            subprocess.Popen(
                worker_command(spec, port),
                cwd=ROOT,
                env={**env, "JOB_COMPLETION_INDEX": str(index)},  # as in the indexed Job: the environment's index
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        ports.append(port)
    for port, worker in zip(ports, workers, strict=True):
        wait_listening(port, worker, timeout=60)
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


def read_progress(output: Path) -> list[dict[str, Any]]:
    path = output / "progress.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def measure_trainer(overrides: dict[str, Any], environments: str, budget: int, seed: int) -> Timeline:
    with tempfile.TemporaryDirectory(prefix="bench-trainer-") as folder:
        root = Path(folder)
        spec = write_spec(root, **overrides, total_timesteps=budget, seed=seed)
        env = _environment()
        workers, ports = [], []
        if overrides.get("run_mode") == "distributed":
            workers, ports = start_env_workers(spec, overrides["num_workers"], env)
        try:
            done = subprocess.run(
                trainer_command(spec, root / "out", environments, ports), cwd=ROOT, env=env, capture_output=True
            )
            if done.returncode != 0:
                raise RuntimeError(f"the trainer exited with {done.returncode}: {done.stderr.decode()[-2000:]}")
        finally:
            stop(workers)
        lines = read_progress(root / "out")
    return Timeline([(line["timesteps"], line["wall_seconds"], line["return"]) for line in lines])


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


def runner_child(mode: str, budget: int, seed: int) -> None:
    """In a fresh process: train with ``Runner`` and print the episode timeline as JSON on stdout."""
    from tfcli.spec import load_experiment
    from trainer import compat
    from trainer.agents import agent_arguments
    from trainer.pools.recipe import EnvironmentRecipe

    compat.apply()
    from tensorforce import Runner

    count = 1 if mode == "single" else ENVIRONMENTS
    experiment = load_experiment(EXPERIMENT, overrides={"seed": seed}).spec
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


def measure_runner(mode: str, budget: int, seed: int) -> Timeline:
    command = [
        sys.executable,
        "-m",
        "bench.trainer",
        "--runner-child",
        mode,
        "--budget",
        str(budget),
        "--seeds",
        str(seed),
    ]
    done = subprocess.run(command, cwd=ROOT, env=_environment(), capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"the Runner exited with {done.returncode}: {done.stderr.decode()[-2000:]}")
    data = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return Timeline([tuple(episode) for episode in data["episodes"]])


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
        data = experiment_data(seed=seed)
        spec = write_spec(root, seed=seed)
        env = _environment()
        workers, ports = [], []
        started = time.monotonic()
        if data["run_mode"] == "distributed":  # as tfcli's local supervisor does: workers first, then the learner
            workers, ports = start_env_workers(spec, data["num_workers"], env)
        learner = subprocess.Popen(
            trainer_command(spec, root / "out", "auto", ports),
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
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


def _status(ok: bool) -> str:
    return "ok" if ok else "MISS"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _median(values: list[float | None]) -> float | None:
    if any(value is None for value in values) or not values:
        return None
    return statistics.median([value for value in values if value is not None])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=10_000, help="timesteps per throughput measurement")
    parser.add_argument("--seeds", default="1,2,3", help="seeds of the solve runs (the first also seeds (a)-(c))")
    parser.add_argument("--solve-cap", type=float, default=120.0, help="seconds before a solve run counts as failed")
    parser.add_argument("--runner-child", choices=["single", "parallel", "multiprocessing"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",") if seed.strip()]
    if args.runner_child:
        runner_child(args.runner_child, args.budget, seeds[0])
        return

    bundled = experiment_data()
    print(
        f"{EXPERIMENT}: agent {bundled['agent']['agent']}, {bundled['environment']['level']}; "
        f"throughput over {args.budget:,} timesteps, seed {seeds[0]}; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    rows: list[list[str]] = []
    for label, overrides, environments, mode, goal in CASES:
        ours = measure_trainer(overrides, environments, args.budget, seeds[0])
        theirs = measure_runner(mode, args.budget, seeds[0])
        ratio = ours.steady_rate(args.budget) / theirs.steady_rate(args.budget)
        rows.append(
            [
                label,
                f"{theirs.steady_rate(args.budget):,.0f}",
                f"{ours.steady_rate(args.budget):,.0f}",
                f"{ratio:.2f}x",
                f"{theirs.rate_with_warmup():,.0f}",
                f"{ours.rate_with_warmup():,.0f}",
                f"{theirs.mean_return():.0f} / {ours.mean_return():.0f}",
                f">= {goal}x",
                _status(ratio >= goal),
            ]
        )
        print(f"  measured {label}", file=sys.stderr, flush=True)

    solves = [measure_solve(seed, args.solve_cap) for seed in seeds]
    from_start = _median([solve.from_start for solve in solves])
    from_first = _median([solve.from_first_timestep for solve in solves])
    solve_label = f"(d) {EXPERIMENT} solve, median s"
    rows.append(
        [
            solve_label,
            f"SB3 ~{SB3_SOLVE_SECONDS:.0f}",
            _seconds(from_start),
            "-" if from_start is None else f"{from_start / SB3_SOLVE_SECONDS:.2f}x SB3",
            "",
            _seconds(from_first),
            "",
            f"< {SOLVE_GOAL_SECONDS:.0f} s",
            _status(from_start is not None and from_start < SOLVE_GOAL_SECONDS),
        ]
    )

    header = [
        "case",
        "Runner t/s",
        "trainer t/s",
        "ratio",
        "Runner w/ warm-up",
        "trainer w/ warm-up",
        "return(20) R / t",
        "goal",
        "",
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    align: list[Callable[[str, int], str]] = [str.ljust] + [str.rjust] * (len(header) - 2) + [str.ljust]
    print("  ".join(align[i](header[i], widths[i]) for i in range(len(header))))
    for row in rows:
        print("  ".join(align[i](row[i], widths[i]) for i in range(len(header))))
    print(
        f"(a)-(c): timesteps/s, steady = TensorFlow warm-up excluded on both sides (judged); 'w/ warm-up' = from the "
        f"first timestep. (d): '{EXPERIMENT}' as bundled ({bundled['run_mode']}, num_workers "
        f"{bundled['num_workers']}), mean return >= {SOLVED_RETURN:.0f} over {SOLVED_EPISODES} episodes; "
        "trainer column from process start, 'w/ warm-up' column from the first timestep."
    )
    for solve in solves:
        print(
            f"  seed {solve.seed}: {_seconds(solve.from_start)} s from process start, "
            f"{_seconds(solve.from_first_timestep)} s from the first timestep, "
            f"{'solved' if solve.from_start is not None else 'NOT solved'} at {solve.timesteps:,} timesteps "
            f"(episode {solve.episodes})"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
