"""It learns: the bundled space-invaders-dqn (DQN on ALE/SpaceInvaders-v5) as a user runs it, three ways.

Everything goes through the user's path: a throw-away tfcli project (``tfcli init``), one experiment per run
(``tfcli experiment new -f space-invaders-dqn -n NAME --total-timesteps N --seed S [--run-mode MODE -w W]``) and
``tfcli experiment start -e NAME --local``, which waits for the local supervisor, its env-workers and the trainer.

1. Agent steps per second per run mode (single; multi-threaded, 4 environments; distributed, 4 env-workers) over
   ``--mode-timesteps`` each: "process" = timesteps over the whole ``experiment start`` command (what the user
   waits for: imports, agent build, env-workers, the final checkpoint); "trainer" = result.json's
   ``timesteps_per_second`` (training wall time, the final checkpoint included); and from progress.jsonl the
   steady rate before DQN starts updating (episodes ending at or before ``start_updating``: acting and storing
   only) and after (episodes ending after it: one update of ``batch_size`` every ``update_frequency`` steps).
   Peak resident memory of the run's processes and the mean load average are sampled every 2 s.
2. The learning curve of one long run in the shipped run mode (``--timesteps``, 250,000 agent steps = 1,000,000
   frames by default): mean return of the episodes ending in each 100k-frame bin, beside the published reference:
   Dopamine's DQN on Space Invaders (about 160-170 at 1M frames, about 650 at 10M; no other point is quoted here)
   and the random policy's score from the DQN Nature paper (148). The epsilon columns give the share of random
   actions at each bin's end under both schedules.
3. The settings that explain the gap, read from the experiment's resolved spec (``experiments/NAME/experiment.yaml``)
   and TensorForce's DQN source, beside Dopamine's ``dqn.gin``.

Run: ``uv run python -m bench.atari [--modes single,multi-threaded,distributed] [--mode-timesteps 20000]
[--timesteps 250000] [--skip-curve] [--curve-minutes M] [--keep DIR]`` — roughly 10 minutes for the modes and
30-90 minutes for the curve on a 2-core machine (DQN's updates run on the CPU). Without ``--keep`` the project is
deleted at the end (checkpoints are over 1 GB each) and the long run's progress.jsonl, result.json and
learning_curve.png are copied to a folder that is printed. ``--curve-minutes`` pauses the long run after that
long (``tfcli experiment pause``) and reports the part it reached.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.processes import descendants, memory_available, rss_bytes
from trainer.result_file import read_result

EXPERIMENT = "space-invaders-dqn"
ENVIRONMENTS = 4
MODES: dict[str, list[str]] = {
    "single": ["--run-mode", "single", "-w", "1"],
    "multi-threaded": ["--run-mode", "multi-threaded", "-w", str(ENVIRONMENTS)],
    "distributed": ["--run-mode", "distributed", "-w", str(ENVIRONMENTS)],
}
FRAMES_PER_BIN = 100_000
POLL_SECONDS = 2.0
REPORT_SECONDS = 300.0

# Published reference points (agent trained on sticky-action ALE, scores are training-episode returns).
DOPAMINE_DQN = {1_000_000: "~160-170", 10_000_000: "~650"}  # frames -> mean return, Dopamine's DQN baselines
RANDOM_SCORE = 148.0  # random policy, Space Invaders, Mnih et al. 2015 (Nature), Extended Data Table 2
# Dopamine's dopamine/agents/dqn/configs/dqn.gin (agent steps; one agent step = 4 frames)
DOPAMINE = {
    "epsilon": "1.0 -> 0.01 linear over 250,000 agent steps (1,000,000 frames), after 20,000 steps",
    "memory": "1,000,000 transitions",
    "start_updating": "20,000 agent steps",
    "update": "batch 32 every 4 agent steps",
    "target": "every 8,000 agent steps (2,000 updates)",
    "optimizer": "RMSProp (centered, decay 0.95, epsilon 1e-5), learning rate 0.00025",
    "loss": "Huber",
    "discount": "0.99",
    "rewards": "clipped to [-1, 1]",
    "episode_cap": "27,000 agent steps (108,000 frames)",
    "sticky": "0.25",
    "network": "Nature CNN: conv 32x8/4, 64x4/2, 64x3/1, dense 512",
    "frames": "4 frames per step, 4 stacked, 84x84 grayscale",
}
DOPAMINE_EPSILON = (1.0, 0.01, 250_000, 20_000)  # initial, final, decay period, warm-up (agent steps)


# ------------------------------------------------------------------------------------------------- the CLI


def tfcli(project: Path, *arguments: str, log: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """``tfcli ARGUMENTS`` in ``project``, as a user types it (the console script is ``python -m tfcli``)."""
    done = subprocess.run([sys.executable, "-m", "tfcli", *arguments], cwd=project, capture_output=True)
    if log is not None:
        with log.open("ab") as file:
            file.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"tfcli {' '.join(arguments)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return done


def read_progress(results: Path) -> list[dict[str, Any]]:
    path = results / "progress.jsonl"
    if not path.exists():
        return []
    lines = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a line being written
            lines.append(json.loads(line))
    return lines


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


# ------------------------------------------------------------------------------------------------- analysis


def window_rate(lines: list[dict[str, Any]]) -> float | None:
    """Timesteps per second between the first and the last of these finished episodes."""
    if len(lines) < 2 or lines[-1]["wall_seconds"] <= lines[0]["wall_seconds"]:
        return None
    return (lines[-1]["timesteps"] - lines[0]["timesteps"]) / (lines[-1]["wall_seconds"] - lines[0]["wall_seconds"])


def frames_per_step(spec: dict[str, Any]) -> int:
    """Emulator frames per agent step: the level's frameskip x Atari preprocessing's frame_skip x repeat_actions."""
    environment = spec["environment"]
    level = environment.get("kwargs", {}).get("frameskip", 1)
    frames = level if isinstance(level, int) else 1
    for wrapper in environment.get("wrappers", []):
        if wrapper.get("type") == "atari_preprocessing":
            frames *= int(wrapper.get("frame_skip", 4))
    return frames * int(spec.get("repeat_actions") or 1)


def epsilon_ours(exploration: Any, step: int) -> float | None:
    if isinstance(exploration, int | float):
        return float(exploration)
    if isinstance(exploration, dict) and exploration.get("type") == "linear" and exploration.get("unit") == "timesteps":
        start, end, steps = exploration["initial_value"], exploration["final_value"], exploration["num_steps"]
        return float(start + (end - start) * min(step / steps, 1.0))
    return None


def epsilon_dopamine(step: int) -> float:
    """dopamine.agents.dqn.dqn_agent.linearly_decaying_epsilon with dqn.gin's values."""
    initial, final, period, warmup = DOPAMINE_EPSILON
    bonus = (initial - final) * (period + warmup - step) / period
    return final + min(max(bonus, 0.0), initial - final)


def _number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def tensorforce_dqn_optimizer() -> str:
    """The optimizer TensorForce 0.6.5's dqn agent builds (it takes only ``learning_rate``), read from its source."""
    found = importlib.util.find_spec("tensorforce")  # locating the package does not import it (nor TensorFlow)
    if found is None or found.origin is None:
        return "?"
    source = (Path(found.origin).parent / "agents" / "dqn.py").read_text()
    match = re.search(r"optimizer = dict\(type='(\w+)'", source)
    return match.group(1).capitalize() if match else "?"


def registered_kwargs(level: str) -> dict[str, Any]:
    from trainer.environments.levels import level_spec

    return dict(level_spec(level).kwargs)


def settings_rows(spec: dict[str, Any]) -> list[list[str]]:
    agent = spec["agent"]
    environment = spec["environment"]
    kwargs = {**registered_kwargs(environment["level"]), **environment.get("kwargs", {})}
    skip = frames_per_step(spec)
    exploration = agent.get("exploration")
    if isinstance(exploration, dict) and exploration.get("type") == "linear":
        steps = exploration["num_steps"]
        epsilon = (
            f"{_number(exploration['initial_value'])} -> {_number(exploration['final_value'])} linear over "
            f"{steps:,} {exploration.get('unit', 'timesteps')} ({steps * skip:,} frames), from step 0"
        )
    else:
        epsilon = _number(exploration)
    update_frequency = agent.get("update_frequency")
    sync = agent.get("target_sync_frequency", 1)
    target = f"every {_number(sync)} updates"
    if isinstance(sync, int) and isinstance(update_frequency, int):
        target += f" ({sync * update_frequency:,} agent steps)"
    reward = agent.get("reward_processing")
    stack = next((w.get("stack_size") for w in environment.get("wrappers", []) if w.get("type") == "frame_stack"), 1)
    preprocessing: dict[str, Any] = next(
        (w for w in environment.get("wrappers", []) if w.get("type") == "atari_preprocessing"), {}
    )
    cap_frames = kwargs.get("max_num_frames_per_episode")
    cap = "none" if cap_frames is None else f"{math.ceil(cap_frames / skip):,} agent steps ({cap_frames:,} frames)"
    network = spec.get("network") or agent.get("network")
    if isinstance(network, list):
        layers = []
        for layer in network:
            if layer.get("type") == "conv2d":
                layers.append(f"conv {layer['size']}x{layer['window']}/{layer.get('stride', 1)}")
            elif layer.get("type") == "dense":
                layers.append(f"dense {layer['size']}")
        network_text = ", ".join(layers)
    else:
        network_text = str(network)
    return [
        ["epsilon (exploration)", epsilon, DOPAMINE["epsilon"]],
        ["replay memory", f"{_number(agent.get('memory'))} transitions", DOPAMINE["memory"]],
        ["start updating", f"{_number(agent.get('start_updating'))} agent steps", DOPAMINE["start_updating"]],
        [
            "update",
            f"batch {_number(agent.get('batch_size'))} every {_number(update_frequency)} agent steps",
            DOPAMINE["update"],
        ],
        ["target network sync", target, DOPAMINE["target"]],
        [
            "optimizer",
            f"{tensorforce_dqn_optimizer()} (TensorForce's dqn agent), learning rate "
            f"{_number(agent.get('learning_rate'))}",
            DOPAMINE["optimizer"],
        ],
        ["loss", f"Huber {_number(agent['huber_loss'])}" if agent.get("huber_loss") else "squared", DOPAMINE["loss"]],
        ["discount", _number(agent.get("discount")), DOPAMINE["discount"]],
        [
            "rewards",
            "raw game score (no reward_processing)" if reward is None else _number(reward),
            DOPAMINE["rewards"],
        ],
        ["episode cap", cap, DOPAMINE["episode_cap"]],
        ["sticky actions", _number(kwargs.get("repeat_action_probability", 0.0)), DOPAMINE["sticky"]],
        ["network", network_text, DOPAMINE["network"]],
        [
            "observation",
            f"{skip} frames per step, {stack} stacked, {preprocessing.get('screen_size', '?')}x"
            f"{preprocessing.get('screen_size', '?')} {'grayscale' if preprocessing.get('grayscale_obs') else 'RGB'}"
            f", {agent.get('state_preprocessing')}",
            DOPAMINE["frames"],
        ],
    ]


# ---------------------------------------------------------------------------------------------------- report


def table(header: list[str], rows: list[list[str]], left: int = 1) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = [row[i].ljust(widths[i]) if i < left else row[i].rjust(widths[i]) for i in range(len(header))]
        print("  ".join(cells).rstrip())
    sys.stdout.flush()


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _gib(value: int) -> str:
    return f"{value / 2**30:.2f}"


def mode_row(mode: str, run: Run) -> list[str]:
    result = run.result()
    lines = run.progress()
    start_updating = int(run.spec()["agent"].get("start_updating") or 0)
    before = [line for line in lines if line["timesteps"] <= start_updating]
    after = [line for line in lines if line["timesteps"] > start_updating]
    timesteps = int(result.get("timesteps", 0))
    status = result.get("status", f"no result (exit {run.exit_code})")
    load = sum(run.loads) / len(run.loads) if run.loads else os.getloadavg()[0]
    return [
        mode,
        f"{timesteps:,}",
        f"{run.seconds:,.0f}",
        _rate(timesteps / run.seconds if run.seconds else None),
        _rate(result.get("timesteps_per_second")),
        _rate(window_rate(before)),
        _rate(window_rate(after)),
        f"{result.get('updates', 0):,} ({expected_updates(run.spec(), timesteps):,})",
        str(len(lines)),
        f"{_gib(run.peak_rss_largest)} / {_gib(run.peak_rss_total)}",
        f"{load:.2f}",
        status,
    ]


def expected_updates(spec: dict[str, Any], timesteps: int) -> int:
    """Updates the agent spec implies: one every ``update_frequency`` agent steps from ``start_updating`` on."""
    agent = spec["agent"]
    frequency, start = agent.get("update_frequency"), int(agent.get("start_updating") or 0)
    if not isinstance(frequency, int) or frequency <= 0:
        return 0
    return max(0, (timesteps - start) // frequency)


def update_notes(spec: dict[str, Any], runs: list[tuple[str, int, int, int | None]]) -> list[str]:
    """What the measured update counts say, per run: (label, timesteps, updates, first episode's end timestep)."""
    agent = spec["agent"]
    start = int(agent.get("start_updating") or 0)
    frequency = agent.get("update_frequency")
    notes = []
    for label, timesteps, updates, first in runs:
        expected = expected_updates(spec, timesteps)
        if updates > 0 and updates > expected * 1.1:
            notes.append(
                f"{label}: {updates:,} updates, more than the {expected:,} that start_updating={start:,} implies: "
                "TensorForce 0.6.5 drops start_updating once the first episode has ended "
                "(core/models/tensorforce.py: start = where(episodes > 0, 0, start + 2 * horizon))"
            )
        if not isinstance(frequency, int) or frequency <= 0 or first is None or timesteps - first < 100 * frequency:
            continue
        scheduled = (timesteps - first) // frequency  # one every update_frequency from the first episode's end
        if updates < scheduled / 10:
            notes.append(
                f"{label}: {updates:,} updates where one every {frequency} steps from the first episode's end would "
                f"give {scheduled:,}: with parallel_interactions > 1 TensorForce 0.6.5 defaults config.buffer_observe "
                "to 'episode', so the model observes, and updates at most once, per finished episode"
            )
        elif updates < 0.9 * scheduled:
            notes.append(
                f"{label}: {updates:,} updates, {updates / scheduled:.0%} of one every {frequency} steps from the "
                f"first episode's end ({scheduled:,}): TensorForce counts timesteps when it acts and checks for one "
                "update per observe call, so environments whose observe calls fall on the same timestep share one"
            )
    return notes


def update_counts(label: str, run: Run) -> tuple[str, int, int, int | None]:
    result, lines = run.result(), run.progress()
    first = int(lines[0]["timesteps"]) if lines else None
    return label, int(result.get("timesteps", 0)), int(result.get("updates", 0)), first


def curve_rows(run: Run, budget: int) -> tuple[list[list[str]], int]:
    spec = run.spec()
    skip = frames_per_step(spec)
    bin_steps = FRAMES_PER_BIN // skip
    lines = run.progress()
    reached = int(run.result().get("timesteps", lines[-1]["timesteps"] if lines else 0))
    exploration = spec["agent"].get("exploration")
    rows = []
    for index in range(math.ceil(budget / bin_steps)):
        low, high = index * bin_steps, min((index + 1) * bin_steps, budget)
        inside = [line["return"] for line in lines if low < line["timesteps"] <= high]
        frames = high * skip
        ours = epsilon_ours(exploration, high)
        if reached <= low:
            mean = "not reached"
        elif not inside:
            mean = "no episode ended"
        else:
            mean = f"{sum(inside) / len(inside):.1f}" + ("" if reached >= high else f" (to step {reached:,})")
        rows.append(
            [
                f"{low * skip / 1e6:g}-{frames / 1e6:g}M",
                f"{low:,}-{high:,}",
                str(len(inside)),
                mean,
                "—" if ours is None else f"{ours:.3f}",
                f"{epsilon_dopamine(high):.3f}",
                DOPAMINE_DQN.get(frames, "—"),
                f"{RANDOM_SCORE:.0f}",
            ]
        )
    last_frames = math.ceil(budget / bin_steps) * bin_steps * skip
    for frames, reference in sorted(DOPAMINE_DQN.items()):
        if frames > last_frames:
            rows.append([f"{frames / 1e6:.0f}M", f"{frames // skip:,}", "", "not run", "", "", reference, ""])
    return rows, bin_steps


# ------------------------------------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", default=",".join(MODES), help="run modes to time, comma-separated ('' for none)")
    parser.add_argument("--mode-timesteps", type=int, default=20_000, help="agent steps per run-mode measurement")
    parser.add_argument("--timesteps", type=int, default=250_000, help="agent steps of the learning-curve run")
    parser.add_argument("--skip-curve", action="store_true", help="time the run modes only")
    parser.add_argument("--curve-minutes", type=float, help="pause the learning-curve run after this many minutes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--agent", help="another agent (name or path) in place of the shipped dqn-visual, for every run"
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="make the tfcli project here and keep it")
    args = parser.parse_args()
    agent = str(Path(args.agent).resolve()) if args.agent and Path(args.agent).exists() else args.agent
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown:
        parser.error(f"--modes: unknown {', '.join(unknown)}; choose from {', '.join(MODES)}")

    def stopped(signum: int, _frame: Any) -> None:
        for each in (signal.SIGTERM, signal.SIGINT):  # a second signal must not cut the clean-up short
            signal.signal(each, signal.SIG_IGN)
        raise KeyboardInterrupt  # pauses the detached experiment (start_and_wait) and reports what was reached

    signal.signal(signal.SIGTERM, stopped)
    signal.signal(signal.SIGINT, stopped)
    interrupted = False
    project = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="bench-atari-"))
    project.mkdir(parents=True, exist_ok=True)
    print(
        f"{EXPERIMENT} through `tfcli experiment start --local`, seed {args.seed}; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}, {memory_available() / 2**30:.1f} GiB memory available; "
        f"project {project}",
        flush=True,
    )
    kept = ""
    try:
        tfcli(project, "init", str(project), "-n", "bench-atari")
        if modes:
            rows = []
            measured: list[tuple[str, int, int, int | None]] = []
            for mode in modes:
                name = f"si-{mode}"
                new_experiment(project, name, args.mode_timesteps, args.seed, MODES[mode], agent)
                print(f"  running {mode}, {args.mode_timesteps:,} timesteps ...", file=sys.stderr, flush=True)
                run = start_and_wait(Run(name, project, args.mode_timesteps))
                rows.append(mode_row(mode, run))
                measured.append(update_counts(mode, run))
            start_updating = run.spec()["agent"].get("start_updating")
            print(f"\n1. Agent steps per second, {args.mode_timesteps:,} agent steps per run mode")
            table(
                [
                    "run mode",
                    "timesteps",
                    "process s",
                    "process t/s",
                    "trainer t/s",
                    f"t/s <= {start_updating:,}",
                    f"t/s > {start_updating:,}",
                    "updates (spec)",
                    "episodes",
                    "peak RSS GiB max/all",
                    "load",
                    "status",
                ],
                rows,
            )
            print(
                "process: the whole `tfcli experiment start` (imports, agent build, env-workers, final checkpoint); "
                "trainer: result.json's timesteps_per_second (training wall time, final checkpoint included); "
                f"t/s <= / > {start_updating:,}: progress.jsonl, between the first and last episodes ending before / "
                f"after DQN's start_updating; updates: result.json's, and in brackets what start_updating and "
                f"update_frequency imply; {ENVIRONMENTS} environments in multi-threaded and distributed; RSS: largest "
                "process / all processes of the run; load: mean 1-minute load average during the run."
            )
            for note in update_notes(run.spec(), measured):
                print(f"  ! {note}")

        if not args.skip_curve:
            curve = Run("si-curve", project, args.timesteps)
            new_experiment(project, curve.name, args.timesteps, args.seed, [], agent)
            spec = curve.spec()
            print(
                f"  running the learning curve: {args.timesteps:,} timesteps, {spec['run_mode']} "
                f"({spec['num_workers']} workers) ...",
                file=sys.stderr,
                flush=True,
            )
            try:
                start_and_wait(curve, minutes=args.curve_minutes, report=True)
            except KeyboardInterrupt:
                interrupted = True  # the run is paused; report the part it reached
            result = curve.result()
            rows, bin_steps = curve_rows(curve, args.timesteps)
            skip = frames_per_step(spec)
            load = sum(curve.loads) / len(curve.loads) if curve.loads else os.getloadavg()[0]
            print(
                f"\n2. Learning curve: {args.timesteps:,} agent steps ({args.timesteps * skip:,} frames), shipped run "
                f"mode {spec['run_mode']} ({spec['num_workers']} workers); status {result.get('status', '?')}"
                f"{' (paused by --curve-minutes)' if curve.paused_by_limit else ''}"
                f"{' (the benchmark was interrupted)' if interrupted else ''} at {result.get('timesteps', 0):,} "
                f"timesteps, {result.get('episodes', 0):,} episodes, {curve.seconds / 60:.1f} min "
                f"({_rate(result.get('timesteps_per_second'))} t/s trainer), {result.get('updates', 0):,} updates "
                f"({expected_updates(spec, int(result.get('timesteps', 0))):,} implied by the spec), "
                f"mean return of the last 100 episodes {result.get('mean_return_last_100')}; "
                f"peak RSS {_gib(curve.peak_rss_largest)} / {_gib(curve.peak_rss_total)} GiB; mean load {load:.2f}"
            )
            table(
                [
                    "frames",
                    "agent steps",
                    "episodes",
                    "mean return",
                    "epsilon (ours)",
                    "epsilon (Dopamine)",
                    "Dopamine DQN",
                    "random",
                ],
                rows,
            )
            print(
                f"episodes binned by the agent step they ended at ({bin_steps:,} steps = {FRAMES_PER_BIN:,} frames per "
                "bin); epsilon: share of random actions at the bin's end; Dopamine DQN: its published training "
                "return on SpaceInvaders (dqn.gin, sticky actions) — only the 1M- and 10M-frame points are quoted; "
                f"random: uniform random policy, DQN Nature paper ({RANDOM_SCORE:.0f})."
            )
            for note in update_notes(spec, [update_counts("curve", curve)]):
                print(f"  ! {note}")
            print("\n3. Settings behind the gap (ours: the resolved spec; Dopamine: dqn.gin)")
            table(["setting", "ours (space-invaders-dqn)", "Dopamine DQN"], settings_rows(spec), left=3)

            curve_png = curve.results / "learning_curve.png"
            if args.keep:
                kept = f"learning curve: {curve_png}"
            else:
                keep_dir = Path(tempfile.mkdtemp(prefix="bench-atari-curve-"))
                for name in ("learning_curve.png", "progress.jsonl", "result.json"):
                    if (curve.results / name).exists():
                        shutil.copy2(curve.results / name, keep_dir / name)
                shutil.copy2(curve.folder / "experiment.yaml", keep_dir / "experiment.yaml")
                kept = f"learning curve: {keep_dir / 'learning_curve.png'} (progress.jsonl, result.json beside it)"
    finally:
        if args.keep:
            print(f"\nresults kept in {project}/experiments/<name>/results/ (a tfcli project: tfcli experiment list)")
        else:
            shutil.rmtree(project, ignore_errors=True)
            print(f"\nproject {project} deleted (--keep DIR keeps it)")
        if kept:
            print(kept)
        print(f"load average at the end: {os.getloadavg()[0]:.2f}", flush=True)
    if interrupted:
        raise SystemExit(130)


if __name__ == "__main__":
    main()
