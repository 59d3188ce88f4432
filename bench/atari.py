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
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.atari_reference import RANDOM_SCORE, frames_per_step, settings_rows
from bench.atari_report import (
    FRAMES_PER_BIN,
    curve_rows,
    expected_updates,
    gib,
    mode_row,
    rate_text,
    update_counts,
    update_notes,
)
from bench.atari_run import EXPERIMENT, Run, new_experiment, start_and_wait, tfcli
from bench.processes import memory_available
from bench.report import print_table

ENVIRONMENTS = 4
MODES: dict[str, list[str]] = {
    "single": ["--run-mode", "single", "-w", "1"],
    "multi-threaded": ["--run-mode", "multi-threaded", "-w", str(ENVIRONMENTS)],
    "distributed": ["--run-mode", "distributed", "-w", str(ENVIRONMENTS)],
}


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
            print_table(
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
                f"({rate_text(result.get('timesteps_per_second'))} t/s trainer), {result.get('updates', 0):,} updates "
                f"({expected_updates(spec, int(result.get('timesteps', 0))):,} implied by the spec), "
                f"mean return of the last 100 episodes {result.get('mean_return_last_100')}; "
                f"peak RSS {gib(curve.peak_rss_largest)} / {gib(curve.peak_rss_total)} GiB; mean load {load:.2f}"
            )
            print_table(
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
            print_table(["setting", "ours (space-invaders-dqn)", "Dopamine DQN"], settings_rows(spec), left=range(3))

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
