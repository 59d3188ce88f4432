"""Where a sweep trial's seconds go inside its trainer: ``bench.warm_sweep``'s 9 trials, each forked from one warm
process (as the sweep's warm trainer forks them, ``tfcli.local.zygote.warm_up`` having imported the same modules),
run several ways side by side:

- ``ours``: the trainer's run as ``python -m trainer run --spec ... --output ...`` makes it (``trainer.run.run``:
  progress log, summaries, HParams, checkpoints, result and curve), without its progress line;
- ``ours-nosum``: the same without TensorForce's own summaries (``RunConfig.agent_summaries`` off, as
  ``bench.training --no-agent-summaries`` runs it);
- ``bare``: bare TensorForce (``bench.floor_child.bare_run``: the same agent, the plainest loop, nothing written);
- ``bare-sum``: bare TensorForce with TensorForce's summaries as the trainer asks for them (its default labels);
- ``bare-writer``: bare TensorForce with TensorForce's summary writer but no label (what the writer alone costs).

Trial by trial, the sides take turns (the order rotating, so that a busy moment of the machine falls on each), and
the table gives each side's wall and CPU seconds (the kernel's count for the waited-for fork) and its mean extra
seconds a trial over the first side. What the queue, the supervisor and the CLI add around the trainer is not in it:
``bench.warm_sweep`` times the whole sweep.

Run: ``uv run python -m bench.sweep_trial [--runs 2] [--sides bare,ours,ours-nosum,bare-sum,bare-writer]`` (about
a minute and a half a side a run on a 2-core machine).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
from pathlib import Path

from bench.floor_child import bare_run, forked
from bench.warm_sweep import write_lone_specs

SIDES = ("bare", "ours", "ours-nosum", "bare-sum", "bare-writer")


def run_side(side: str, spec: Path, output: Path) -> None:
    """One trial as ``side`` runs it, in this (forked) process."""
    if side.startswith("bare"):
        from trainer.kernel.spec import load_experiment

        experiment = load_experiment(str(spec)).spec
        summaries = None if side == "bare" else output / "summaries"
        labels: list[str] | None = [] if side == "bare-writer" else None
        bare_run(experiment, 1, experiment.total_timesteps or 0, "budget", summaries, labels)
        return
    from trainer.config import RunConfig
    from trainer.kernel.spec import load_experiment
    from trainer.run import run

    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    experiment = load_experiment(str(spec)).spec
    result = run(RunConfig(experiment=experiment, output=output, progress_bar=False, agent_summaries=side == "ours"))
    if result.status != "completed":
        raise RuntimeError(f"{spec.name} as {side}: {result.status} ({result.error or result.reason})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--timesteps", type=int, default=1500)
    parser.add_argument("--sides", default=",".join(SIDES))
    args = parser.parse_args()
    sides = args.sides.split(",")
    unknown = set(sides) - set(SIDES)
    if unknown:
        raise SystemExit(f"unknown side(s): {', '.join(sorted(unknown))}; known: {', '.join(SIDES)}")
    from tfcli.local.zygote import warm_up

    warm_up()  # what the sweep's warm trainer imports before it forks a trial
    seconds: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as folder:
        specs = write_lone_specs(Path(folder), args.timesteps)
        turn = 0
        for run in range(args.runs):
            for index, spec in enumerate(specs):
                for side in sides[turn % len(sides) :] + sides[: turn % len(sides)]:
                    output = Path(folder) / f"{side}-{run}-{index}"
                    seconds[side].append(forked(functools.partial(run_side, side, spec, output)))
                turn += 1
    first = seconds[sides[0]]
    print(f"{'side':<12} {'wall s':>8} {'CPU s':>8} {'extra wall s/trial':>19} {'extra CPU s/trial':>18}")
    for side in sides:
        wall = sum(w for w, _ in seconds[side])
        cpu = sum(c for _, c in seconds[side])
        extra_wall = statistics.mean(w - v for (w, _), (v, _) in zip(seconds[side], first, strict=True))
        extra_cpu = statistics.mean(c - d for (_, c), (_, d) in zip(seconds[side], first, strict=True))
        print(f"{side:<12} {wall:8.1f} {cpu:8.1f} {extra_wall:+19.2f} {extra_cpu:+18.2f}")
    print(f"{len(specs)} trials of {args.timesteps} timesteps x {args.runs} run(s), each forked from one warm process;")
    print(f"extra: mean over the trials of the side's seconds minus {sides[0]}'s for the same trial")


if __name__ == "__main__":
    main()
